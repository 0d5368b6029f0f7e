import Foundation
import GRDB
package import PlugboardModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A verified copy of a board, as `plugboard backup` reports it.
package struct BoardBackup: Sendable, Hashable, Codable {
    /// The backup file.
    package let path: String
    /// The sequence number of the last audit row in the copy.
    package let seq: Int64
    /// The hash of that row.
    package let hash: String
    /// The state root the copy verified to.
    package let stateRoot: String?
    /// The size of the copy in bytes.
    package let size: Int64
    /// When the copy was taken (UTC, ISO-8601).
    package let time: String

    /// A value with each stored property given.
    package init(path: String, seq: Int64, hash: String, stateRoot: String?, size: Int64, time: String) {
        self.path = path
        self.seq = seq
        self.hash = hash
        self.stateRoot = stateRoot
        self.size = size
        self.time = time
    }
}

extension Board {
    /// Copies the board to `destination` with SQLite's online backup while other processes read and write it, and
    /// verifies the copy (its audit chain and state root) before reporting it.
    ///
    /// The copy is written to a temporary file of mode 0600 in the destination's folder, verified, flushed to disk and
    /// then renamed over `destination`, so `destination` is either the previous file or a complete, verified copy. The
    /// copy is one self-contained file (no `-wal` beside it). Sealed secrets stay sealed; the master key, the board key
    /// and the artifact folder live beside the board, never in it, and are not part of the copy.
    /// Refuses unless `actor` is a board admin (the operations API checks it before it sends a backup, which holds the whole
    /// board); a refusal is recorded in the audit log with `refusal`'s action and target
    /// (``recordRefusal(_:by:because:)``).
    package func requireAdmin(_ actor: Principal, doing what: String, refusal: AuditEntry) throws(BoardError) {
        do throws(BoardError) {
            try read { db in try RequiredRole.requireAdmin(db, by: actor, doing: what) }
        } catch {
            recordRefusal(refusal, by: actor, because: error)
            throw error
        }
    }

    package func backup(to destination: String) throws(BoardError) -> BoardBackup {
        guard path != ":memory:" else { throw BoardError(.invalidInput, "a board in memory has no file to back up") }
        try BoardFiles.checkDestination(destination, board: path)
        let temporary = try BoardFiles.createTemporary(near: destination, purpose: "backup")
        var done = false
        defer { if !done { BoardFiles.removeWithSidecars(temporary) } }
        do {
            let copy = try DatabaseQueue(path: temporary)
            try writer.backup(to: copy)
            try copy.close()  // the last connection: the copy's WAL is checkpointed into it and deleted
        } catch {
            throw BoardError(.io, "cannot back up the board at \(path) to \(destination): \(Board.describe(error))")
        }
        let verified = try BoardFiles.verify(temporary, describing: "the backup of \(path)")
        try BoardFiles.syncAndRename(temporary, to: destination)
        done = true
        var info = stat()
        _ = stat(destination, &info)
        return BoardBackup(
            path: destination, seq: verified.seq, hash: verified.hash, stateRoot: verified.stateRoot, size: Int64(info.st_size),
            time: Timestamp.now())
    }
}

/// File handling shared by backup and restore: temporary files beside their destination, verification of a board
/// file by opening it as a board, and durable renames.
enum BoardFiles {
    /// Refuses a destination that is the board itself, one of its sidecars, a folder, or in a folder that does not exist.
    static func checkDestination(_ destination: String, board: String) throws(BoardError) {
        guard !destination.isEmpty else { throw BoardError(.invalidInput, "the backup file name is empty") }
        var target = stat()
        var source = stat()
        if stat(destination, &target) == 0 {
            guard (target.st_mode & S_IFMT) == S_IFREG else {
                throw BoardError(.invalidInput, "\(destination) is not a regular file; name a file for the backup")
            }
            if stat(board, &source) == 0, source.st_dev == target.st_dev, source.st_ino == target.st_ino {
                throw BoardError(.invalidInput, "\(destination) is the board itself; name another file for the backup")
            }
        }
        for suffix in BoardSharing.sidecarSuffixes + ["-journal"] where destination.hasSuffix(suffix) {
            throw BoardError(.invalidInput, "\(destination) names a SQLite sidecar file (\(suffix)); name a file of its own for the backup")
        }
        let folder = folder(of: destination)
        var info = stat()
        guard stat(folder, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw BoardError(.invalidInput, "the folder \(folder) does not exist; create it first")
        }
    }

    static func folder(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    /// Creates an empty file of mode 0600 in the folder of `path`, named after it, and returns its path.
    static func createTemporary(near path: String, purpose: String) throws(BoardError) -> String {
        let name = ((path as NSString).lastPathComponent)
        let temporary = (folder(of: path) as NSString).appendingPathComponent(
            ".\(name).\(purpose)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let fd = Glibc_open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw BoardError(.io, "cannot create a file in \(folder(of: path)): \(String(cString: strerror(errno)))")
        }
        close(fd)
        return temporary
    }

    static func removeWithSidecars(_ path: String) {
        unlink(path)
        removeSidecars(of: path)
    }

    /// Removes the `-wal` and `-shm` (and a rollback `-journal`) a closed board file left: a board keeps them when it
    /// closes (persistent WAL), empty, and a copy is one file.
    static func removeSidecars(of path: String) {
        for suffix in BoardSharing.sidecarSuffixes + ["-journal"] { unlink(path + suffix) }
    }

    /// Opens `path` as a board (refusing a file that is not one, or whose schema is newer than this binary) and
    /// verifies its audit chain and state root; returns its head. The board is closed when this returns.
    static func verify(_ path: String, describing what: String) throws(BoardError) -> AuditCheckpoint {
        let verification: AuditVerification
        do {
            let board = try Board.open(at: path, requireCurrentSchema: false)
            verification = try board.verifyAudit()
        } catch {
            throw BoardError(error.code, "\(what) is not a board this binary can use: \(error.message)")
        }
        removeSidecars(of: path)
        guard verification.ok, let head = verification.head else {
            let problem = verification.problems.first ?? "its audit log is empty"
            throw BoardError(.integrity, "\(what) does not verify, so it was not used: \(problem)")
        }
        return AuditCheckpoint(seq: head.seq, hash: head.hash, stateRoot: verification.stateRoot ?? head.stateRoot)
    }

    /// Flushes `temporary` to disk, renames it to `destination` and flushes the folder, so that after a crash the
    /// destination is the old file or the whole new one.
    static func syncAndRename(_ temporary: String, to destination: String) throws(BoardError) {
        try sync(temporary)
        guard rename(temporary, destination) == 0 else {
            throw BoardError(.io, "cannot move the copy to \(destination): \(String(cString: strerror(errno)))")
        }
        syncFolder(of: destination)
    }

    /// Flushes `temporary` to disk and gives it the name `destination` where nothing has that name (a file that
    /// appeared there meanwhile is never replaced), then flushes the folder.
    static func syncAndLink(_ temporary: String, to destination: String) throws(BoardError) {
        try sync(temporary)
        guard link(temporary, destination) == 0 else {
            throw BoardError(.io, "cannot move the copy to \(destination): \(String(cString: strerror(errno)))")
        }
        unlink(temporary)
        syncFolder(of: destination)
    }

    /// Flushes a file's content to disk.
    static func sync(_ path: String) throws(BoardError) {
        let fd = Glibc_open(path, O_RDONLY | O_CLOEXEC, 0)
        guard fd >= 0 else { throw BoardError(.io, "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw BoardError(.io, "cannot write \(path) to disk: \(String(cString: strerror(errno)))") }
    }

    /// Flushes the folder of `path` (its names) to disk; false when that failed.
    @discardableResult
    static func syncFolder(of path: String) -> Bool {
        let fd = Glibc_open(folder(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return fsync(fd) == 0
    }
}
