import Crypto
package import Foundation
package import PlugboardModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The content-addressed store of plug-in artifacts beside the board: `<board>.artifacts/sha256/<hex>`.
///
/// Its folders and files follow the board file (the sharing model of the guide "Sharing a board" in the
/// store's documentation): a board of mode 0600 gets folders of mode 0700 and files of 0600; a board its group may read (0640)
/// gets folders of 2750 and files of 0640; a board its group may write (0660) gets folders of 2770, so that every
/// operator of the group can add artifacts. Folders and files take the board file's group. Stored files are never
/// writable by anyone but their owner.
/// Files are written to a temporary name (`tmp/<pid>-<uuid>`) while they are hashed and renamed into place only
/// when the registration that refers to them commits; what a killed registration left there is removed at the
/// next staging (`removeStaleStaging(now:)`).
package struct ArtifactStore: Sendable {
    /// The root folder, `<board>.artifacts`.
    package let root: String

    /// Creates a store rooted at `root` (nothing is created until an artifact is added).
    package init(root: String) { self.root = root }

    /// The path where the artifact with this SHA-256 is kept.
    package func path(forSHA256 sha256: String) -> String { root + "/sha256/" + sha256 }

    /// A file copied into the store under a temporary name, hashed, waiting for ``commit(_:)``.
    package struct Staged: Sendable {
        /// SHA-256 of the content, lower-case hex.
        package let sha256: String
        /// Size in bytes.
        package let size: Int64
        /// The name the source file had.
        package let fileName: String
        let temporaryPath: String
    }

    /// Copies `source` into the store under a temporary name, computing its SHA-256 as it goes.
    ///
    /// - Throws: ``BoardError`` `.invalidInput` when the source does not exist, is not a regular file or
    ///   cannot be read; `.io` when the store cannot be written.
    package func stage(_ source: String) throws(BoardError) -> Staged {
        var info = stat()
        guard stat(source, &info) == 0 else {
            throw .invalid("the artifact \(source) does not exist; check the path given to --artifact")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .invalid("the artifact \(source) is not a regular file")
        }
        guard let input = FileHandle(forReadingAtPath: source) else {
            throw .invalid("the artifact \(source) cannot be read (permission denied)")
        }
        defer { try? input.close() }
        try ensureFolders()
        removeStaleStaging()
        let temporary = root + "/tmp/\(getpid())-\(UUID().uuidString.lowercased())"
        let fd = Glibc_open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw BoardError(.io, "cannot write to the artifact store \(root): \(String(cString: strerror(errno)))") }
        let sharing = sharing()
        _ = fchmod(fd, sharing.fileMode)
        if let group = sharing.group { _ = fchown(fd, uid_t.max, group) }
        let output = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var hasher = SHA256()
        var size: Int64 = 0
        do {
            while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
                hasher.update(data: chunk)
                try output.write(contentsOf: chunk)
                size += Int64(chunk.count)
            }
            try output.synchronize()
            try output.close()
        } catch {
            unlink(temporary)
            throw BoardError(.io, "cannot copy the artifact \(source) into \(root): \(Self.describe(error)); nothing was changed")
        }
        let sha = hasher.finalize().hex
        return Staged(sha256: sha, size: size, fileName: (source as NSString).lastPathComponent, temporaryPath: temporary)
    }

    /// The system's words for a failed read or write ("file too large", "no space left on device"), not Foundation's
    /// error dump, with a hint when the disk or a size limit is the cause.
    static func describe(_ error: any Error) -> String {
        let ns = error as NSError
        let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError
        let code = ns.domain == NSPOSIXErrorDomain ? ns.code : underlying?.domain == NSPOSIXErrorDomain ? underlying?.code : nil
        guard let code else { return ns.localizedDescription }
        let words = String(cString: strerror(Int32(code))).lowercased()
        return [EFBIG, ENOSPC, EDQUOT].contains(Int32(code)) ? "\(words) (the disk is full or a file size limit was reached)" : words
    }

    /// Moves a staged file to its content address (or drops it if the same content is already there).
    package func commit(_ staged: Staged) throws(BoardError) {
        let destination = path(forSHA256: staged.sha256)
        if FileManager.default.fileExists(atPath: destination) {
            unlink(staged.temporaryPath)
            return
        }
        guard rename(staged.temporaryPath, destination) == 0 else {
            throw BoardError(.io, "cannot move the artifact into \(destination): \(String(cString: strerror(errno)))")
        }
    }

    /// Deletes a staged file that will not be committed.
    package func discard(_ staged: Staged) {
        unlink(staged.temporaryPath)
    }

    /// How long a staged file may go unmodified before it counts as left behind, whoever staged it.
    package static let stagingLifetime: TimeInterval = 3600

    /// Deletes the staged files that a registration killed mid-way left in `tmp`: those whose process (the number
    /// their name starts with) no longer runs, and any not modified for ``stagingLifetime``. A copy in progress
    /// belongs to a live process and is written to as it goes, so it is kept. Failures are ignored: this is tidying.
    package func removeStaleStaging(now: Date = Date()) {
        let folder = root + "/tmp"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            #if canImport(Darwin)
            let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtimespec.tv_sec))
            #else
            let modified = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
            #endif
            let owner = name.split(separator: "-", maxSplits: 1).first.flatMap { pid_t($0) }
            let ownerGone = owner.map { $0 > 0 && kill($0, 0) != 0 && errno == ESRCH } ?? false
            if ownerGone || now.timeIntervalSince(modified) > Self.stagingLifetime { unlink(path) }
        }
    }

    /// The modes and group the store takes from the board file beside it.
    struct Sharing: Equatable {
        /// The board file's mode (0600 when there is no board file, as for a store of its own).
        var boardMode: mode_t
        /// The board file's group, nil when there is no board file.
        var group: gid_t?

        /// The folders: what the board gives its group and others to read becomes read and search, to write
        /// becomes write and search, with the set-group-ID bit when the group may use the board.
        var folderMode: mode_t {
            var mode: mode_t = 0o700
            for shift: mode_t in [3, 0] {
                let bits = (boardMode >> shift) & 0o7
                if bits & 0o4 != 0 { mode |= 0o5 << shift }
                if bits & 0o2 != 0 { mode |= 0o3 << shift }
            }
            return (boardMode & 0o070) != 0 ? mode | mode_t(S_ISGID) : mode
        }

        /// The files: readable where the board is readable, writable by their owner only.
        var fileMode: mode_t { 0o600 | (boardMode & 0o044) }
    }

    /// The board file beside the store (`<board>.artifacts` → `<board>`).
    var boardPath: String? { root.hasSuffix(".artifacts") ? String(root.dropLast(".artifacts".count)) : nil }

    func sharing() -> Sharing {
        var info = stat()
        guard let boardPath, stat(boardPath, &info) == 0 else { return Sharing(boardMode: 0o600, group: nil) }
        return Sharing(boardMode: info.st_mode & 0o777, group: info.st_gid)
    }

    /// Creates the folders with the modes and group that follow the board, fixes the ones this user owns, and
    /// refuses folders that are open to users the board is not shared with, or that this user cannot write.
    private func ensureFolders() throws(BoardError) {
        let sharing = sharing()
        let wanted = sharing.folderMode
        let guide = BoardSharing.sharingGuide
        for folder in [root, root + "/sha256", root + "/tmp"] {
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw BoardError(.io, "cannot create the artifact store folder \(folder): \(String(cString: strerror(errno)))")
            }
            var info = stat()
            guard stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw BoardError(.io, "the artifact store \(folder) is not a folder")
            }
            if info.st_uid == geteuid() {
                if let group = sharing.group, info.st_gid != group { _ = chown(folder, uid_t.max, group) }
                if info.st_mode & 0o7777 != wanted { _ = chmod(folder, wanted) }
                _ = stat(folder, &info)
            }
            let mode = info.st_mode & 0o777
            if mode & ~(wanted & 0o777) != 0 {
                throw BoardError(
                    .io,
                    "the artifact store folder \(folder) is open to users the board is not shared with (mode \(BoardSharing.octal(mode)), board \(BoardSharing.octal(sharing.boardMode))); run chmod \(BoardSharing.octal(wanted & 0o777)) \(folder) \(guide)"
                )
            }
            guard access(folder, W_OK | X_OK) == 0 else {
                throw BoardError(
                    .notAllowed,
                    "the artifact store folder \(folder) (\(BoardSharing.ownerDescription(folder))) is not writable by \(BoardSharing.userName(geteuid())); for a board its group may write (mode 0660), its owner runs chmod \(BoardSharing.octal(Sharing(boardMode: 0o660).folderMode)) \(folder), which Plugboard also does at the owner's next registration with an artifact \(guide)"
                )
            }
        }
    }
}
