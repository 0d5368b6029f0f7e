import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import PlugboardModel

#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Musl)
import Musl
private let systemWrite = Musl.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// A remote host's cache folder: `snapshot.json` (the last snapshot read, with when and from where) and
/// `artifacts/SHA256` (the libraries it fetched, each checked against its digest before it is kept). The folder is
/// the host's own (mode 0700), files are 0600, and every file is written to a temporary name, flushed and renamed, so a
/// crash leaves the previous version or the new one, never half of one.
enum HostCache {
    struct Stored: Decodable {
        let fetchedAt: String
        let server: String
        /// The signed snapshot as the server sent it: the host verifies it again before it uses it.
        let snapshot: SignedSnapshot
    }

    static func snapshotPath(_ folder: String) -> String { folder + "/snapshot.json" }
    static func artifactPath(_ folder: String, _ sha256: String) -> String { folder + "/artifacts/" + sha256 }

    /// Creates the folder (0700) and its `artifacts` folder; refuses a folder others may read or write.
    static func prepare(_ folder: String) throws(BoardError) {
        for path in [folder, folder + "/artifacts"] {
            var info = stat()
            if stat(path, &info) != 0 {
                guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                    throw BoardError(.io, "cannot create the host cache folder \(path): \(String(cString: strerror(errno)))")
                }
                guard stat(path, &info) == 0 else { throw BoardError(.io, "cannot read the host cache folder \(path)") }
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw BoardError(.invalidInput, "the host cache folder \(path) is not a folder")
            }
            guard info.st_uid == geteuid() else {
                throw BoardError(.notAllowed, "the host cache folder \(path) belongs to another user; give the host a folder of its own")
            }
            if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
                throw BoardError(.notAllowed, "the host cache folder \(path) is open to other users and cannot be made private")
            }
        }
    }

    /// The cached signed snapshot (not verified yet), or nil when there is none or it cannot be read (then the host acts
    /// as if there were none).
    static func read(_ folder: String) -> (snapshot: SignedSnapshot, fetchedAt: Date)? {
        guard let data = FileManager.default.contents(atPath: snapshotPath(folder)), data.count <= 256 << 20,
            let stored = try? JSONDecoder().decode(Stored.self, from: data), let when = Timestamp.parse(stored.fetchedAt)
        else { return nil }
        return (stored.snapshot, when)
    }

    /// Writes the signed snapshot `view` (its JSON as the server sent it) atomically. A failure is logged, not thrown:
    /// the host keeps running on the snapshot it has.
    static func write(_ folder: String, view: Data, server: String, logger: Logger) {
        var data = Data("{\"fetchedAt\":".utf8)
        data.append(contentsOf: (try? JSONEncoder().encode(Timestamp.format(Date()))) ?? Data("\"\"".utf8))
        data.append(contentsOf: Data(",\"server\":".utf8))
        data.append(contentsOf: (try? JSONEncoder().encode(server)) ?? Data("\"\"".utf8))
        data.append(contentsOf: Data(",\"snapshot\":".utf8))
        data.append(view)
        data.append(contentsOf: Data("}".utf8))
        // Written and renamed before the host acts on it (a crash of the host process loses nothing: the data is in
        // the kernel), then flushed to the disk off the host's path, so that 50 hosts reacting to one kill switch do
        // not queue on fsync before they deactivate anything.
        do {
            try writeAtomically(data, to: snapshotPath(folder), flush: false)
            Task.detached(priority: .background) { flush(snapshotPath(folder), folder: folder) }
        } catch {
            logger.warning(
                "cannot write the host cache \(snapshotPath(folder)): \(error); a restart without the server would use an older snapshot")
        }
    }

    /// Streams an artifact into the cache, refusing it when it is larger than `limit` or its SHA-256 is not `sha256`.
    static func storeArtifact(_ folder: String, sha256: String, from body: HTTPClientResponse.Body, limit: Int) async throws {
        let temporary = folder + "/artifacts/.incoming-" + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw CacheError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var closed = false
        defer {
            if !closed { close(fd) }
            unlink(temporary)
        }
        var hasher = SHA256()
        var size = 0
        for try await buffer in body {
            size += buffer.readableBytes
            guard size <= limit else { throw CacheError("the artifact is larger than \(limit) bytes") }
            try buffer.readableBytesView.withContiguousStorageIfAvailable { bytes in
                hasher.update(bufferPointer: UnsafeRawBufferPointer(bytes))
                try writeAll(fd, UnsafeRawBufferPointer(bytes))
            }
        }
        let actual = hasher.finalize().hex
        guard actual == sha256 else {
            throw CacheError("the server sent a file whose SHA-256 is \(actual.prefix(12))…, not \(sha256.prefix(12))…; it was not kept")
        }
        guard fsync(fd) == 0 else { throw CacheError("cannot flush \(temporary)") }
        close(fd)
        closed = true
        guard rename(temporary, artifactPath(folder, sha256)) == 0 else {
            throw CacheError("cannot keep the artifact: \(String(cString: strerror(errno)))")
        }
    }

    /// Writes `data` to a temporary file and renames it over `path`; with `flush`, the data reaches the disk before the
    /// rename.
    static func writeAtomically(_ data: Data, to path: String, flush: Bool = true) throws {
        let temporary = path + ".incoming-" + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw CacheError("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        defer { unlink(temporary) }
        do {
            try data.withUnsafeBytes { try writeAll(fd, $0) }
            guard !flush || fsync(fd) == 0 else { throw CacheError("cannot flush \(temporary)") }
        } catch {
            close(fd)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else { throw CacheError("cannot replace \(path): \(String(cString: strerror(errno)))") }
    }

    /// Flushes a file and its folder to the disk (best effort).
    static func flush(_ path: String, folder: String) {
        for (name, flags) in [(path, O_RDONLY), (folder, O_RDONLY | O_DIRECTORY)] {
            let fd = open(name, flags)
            guard fd >= 0 else { continue }
            _ = fsync(fd)
            close(fd)
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw CacheError("cannot write the host cache: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    static func keysPath(_ folder: String) -> String { folder + "/board-keys" }

    /// The board keys the host learned (from statements signed by a key it trusted, or on first use), one per line.
    static func learnedKeys(_ folder: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: keysPath(folder)), data.count <= 64 << 10 else { return [] }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
    }

    /// Keeps the board keys the host trusts (written atomically, flushed).
    static func keepKeys(_ folder: String, _ keys: [String]) throws {
        try writeAtomically(Data((keys.joined(separator: "\n") + "\n").utf8), to: keysPath(folder))
    }

    struct CacheError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
