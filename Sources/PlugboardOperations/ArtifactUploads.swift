import Crypto
package import Foundation
package import PlugboardModel
package import PlugboardStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Artifacts uploaded through the operations API before the `plugin register` that names them: `<board>.uploads/<sha256>`,
/// written to a private temporary file while their SHA-256 is computed, kept only when it matches the name they were
/// sent under. Nothing reaches the board until the registration copies the file into the artifact store (and checks
/// it again); the upload is removed then, and any left over for more than an hour is removed by the next upload.
package enum ArtifactUploads {
    /// The largest artifact the operations API takes by default.
    package static let defaultLimit = 512 << 20

    /// Uploads older than this are removed.
    package static let lifetime: TimeInterval = 3600

    package static func folder(_ board: Board) -> String { board.path + ".uploads" }

    /// A SHA-256 as the API names artifacts: 64 lower-case hex digits.
    package static func check(_ sha256: String) throws(BoardError) {
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw BoardError(.invalidInput, "'\(Validate.escaped(String(sha256.prefix(80))))' is not a SHA-256 (64 lower-case hex digits)")
        }
    }

    /// The uploaded artifact named `sha256`.
    package static func path(board: Board, sha256: String) throws(BoardError) -> String {
        try check(sha256)
        let path = folder(board) + "/" + sha256
        guard FileManager.default.fileExists(atPath: path) else {
            throw BoardError(
                .notFound, "no artifact with SHA-256 \(sha256) was uploaded; upload it with PUT /api/admin/artifacts/\(sha256) first")
        }
        return path
    }

    /// Removes the uploaded artifact named `sha256`, if any.
    package static func discard(board: Board, sha256: String) {
        guard (try? check(sha256)) != nil else { return }
        unlink(folder(board) + "/" + sha256)
    }

    /// One upload in progress.
    package final class Writer {
        let sha256: String
        let limit: Int
        let folder: String
        let temporary: String
        var fd: Int32
        var hasher = SHA256()
        package private(set) var size = 0

        /// Starts an upload named `sha256` of at most `limit` bytes.
        package init(board: Board, sha256: String, limit: Int) throws(BoardError) {
            try ArtifactUploads.check(sha256)
            self.sha256 = sha256
            self.limit = limit
            folder = ArtifactUploads.folder(board)
            if mkdir(folder, 0o700) != 0, errno != EEXIST {
                throw BoardError(.io, "cannot create \(folder): \(String(cString: strerror(errno)))")
            }
            ArtifactUploads.removeStale(folder)
            temporary = folder + "/.upload-\(UUID().uuidString)"
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw BoardError(.io, "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        }

        deinit { abandon() }

        /// Appends bytes; refuses them past the limit (the upload is abandoned).
        package func write(_ bytes: UnsafeRawBufferPointer) throws(BoardError) {
            guard size + bytes.count <= limit else {
                abandon()
                throw BoardError(.invalidInput, "the artifact is larger than \(limit >> 20) MiB; nothing was kept")
            }
            hasher.update(bufferPointer: bytes)
            do throws(BoardError) { try ArtifactUploads.writeAll(fd, bytes, what: "the upload") } catch {
                abandon()
                throw error
            }
            size += bytes.count
        }

        /// Ends the upload: kept as `<sha256>` when its digest matches, else removed and refused.
        package func finish() throws(BoardError) {
            let digest = hasher.finalize().hex
            guard digest == sha256 else {
                abandon()
                throw BoardError(
                    .integrity, "the uploaded artifact's SHA-256 is \(digest), not \(sha256) as its address says; nothing was kept")
            }
            guard fsync(fd) == 0, close(fd) == 0 else {
                fd = -1
                abandon()
                throw BoardError(.io, "cannot save the upload: \(String(cString: strerror(errno)))")
            }
            fd = -1
            guard rename(temporary, folder + "/" + sha256) == 0 else {
                unlink(temporary)
                throw BoardError(.io, "cannot save the upload: \(String(cString: strerror(errno)))")
            }
        }

        /// Drops the upload.
        package func abandon() {
            if fd >= 0 {
                close(fd)
                fd = -1
                unlink(temporary)
            }
        }
    }

    /// Writes all of `bytes` to `fd` (`what` names the file in the error).
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, what: String) throws(BoardError) {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { throw BoardError(.io, "cannot write \(what): \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    /// Removes uploads (and abandoned temporary files) older than ``lifetime``.
    package static func removeStale(_ folder: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let cutoff = Date().addingTimeInterval(-lifetime)
        for name in names {
            let path = folder + "/" + name
            if let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date, modified < cutoff {
                unlink(path)
            }
        }
    }
}
