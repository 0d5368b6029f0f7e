import Foundation
import PlugboardModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension BoardFiles {
    /// Refuses a backup that is missing, not a regular file, the board itself, or a live board with a write-ahead log.
    static func checkSource(_ source: String, board: String) throws(BoardError) {
        var info = stat()
        guard stat(source, &info) == 0 else { throw BoardError(.notFound, "there is no backup at \(source)") }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw BoardError(.invalidInput, "\(source) is not a regular file") }
        var target = stat()
        if stat(board, &target) == 0, target.st_dev == info.st_dev, target.st_ino == info.st_ino {
            throw BoardError(.invalidInput, "\(source) is the board itself; restore from a backup made with plugboard backup")
        }
        var wal = stat()
        if stat(source + "-wal", &wal) == 0, wal.st_size > 0 {
            throw BoardError(
                .invalidInput,
                "\(source) has a write-ahead log beside it (\(source)-wal), so it is a board in use, not a backup; back it up with plugboard backup --db \(source) --to FILE and restore from that"
            )
        }
    }

    /// Copies `source` to `destination` (an empty file this process created) and gives it the mode and group of
    /// `modeOf`, if given, so that a restored board is shared as the board it replaces was.
    static func copy(_ source: String, to destination: String, modeOf original: String?) throws(BoardError) {
        let input = Glibc_open(source, O_RDONLY | O_CLOEXEC, 0)
        guard input >= 0 else { throw BoardError(.io, "cannot read \(source): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let output = Glibc_open(destination, O_WRONLY | O_TRUNC | O_CLOEXEC, 0)
        guard output >= 0 else { throw BoardError(.io, "cannot write \(destination): \(String(cString: strerror(errno)))") }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            guard count >= 0 else { throw BoardError(.io, "cannot read \(source): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                guard step > 0 else { throw BoardError(.io, "cannot write \(destination): \(String(cString: strerror(errno)))") }
                written += step
            }
        }
        if let original {
            var info = stat()
            if stat(original, &info) == 0 {
                _ = fchown(output, uid_t.max, info.st_gid)
                _ = fchmod(output, info.st_mode & 0o660)
            }
        }
        guard fsync(output) == 0 else { throw BoardError(.io, "cannot write \(destination): \(String(cString: strerror(errno)))") }
    }

    /// The identity, size and modification time of a board file and of its write-ahead log: any commit, checkpoint or
    /// replacement of the file changes it.
    struct Fingerprint: Sendable, Equatable {
        struct File: Sendable, Equatable {
            var device: UInt64 = 0
            var inode: UInt64 = 0
            var size: Int64 = -1
            var seconds: Int = 0
            var nanoseconds: Int = 0
        }

        let board: File
        let wal: File

        init(_ path: String) {
            func file(_ path: String) -> File {
                var info = stat()
                guard stat(path, &info) == 0 else { return File() }
                return File(
                    device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size), seconds: info.st_mtim.tv_sec,
                    nanoseconds: info.st_mtim.tv_nsec)
            }
            board = file(path)
            wal = file(path + "-wal")
        }
    }

    /// The refusal of a restore whose board changed after it was read.
    static func changedWhileRead(_ path: String) -> BoardError {
        BoardError(
            .conflict,
            "cannot restore the board at \(path): it changed while the restore read it (another process wrote it); nothing was changed, run the restore again"
        )
    }

    /// Keeps the board at `path` beside it as `<board>.replaced-<time>` and renames `temporary` into its place, so that
    /// the path holds the whole old board or the whole new one whatever step fails or is killed. The caller holds the
    /// board's locks and checkpointed it (or found it unreadable with an empty log): its write-ahead log is empty and
    /// stays beside the new board (an empty log replays nothing onto it, and keeps the files the sharing model needs).
    /// Refuses, changing nothing, when the board's files are not as `expected` (another process wrote it since it was
    /// read), or when its log is not empty. Returns where the old board is kept.
    static func swap(_ temporary: String, into path: String, expecting expected: Fingerprint) throws(BoardError) -> String {
        guard Fingerprint(path) == expected else { throw changedWhileRead(path) }
        guard expected.wal.size <= 0 else {
            throw BoardError(
                .conflict,
                "cannot restore the board at \(path): its write-ahead log is not empty; nothing was changed, run the restore again"
            )
        }
        func failure(_ what: String) -> BoardError { BoardError(.io, "\(what): \(String(cString: strerror(errno))); nothing was changed") }
        let stamp = Timestamp.now().filter { $0.isNumber }
        var kept = "\(path).replaced-\(stamp)"
        var attempt = 1
        while access(kept, F_OK) == 0 {
            attempt += 1
            kept = "\(path).replaced-\(stamp)-\(attempt)"
        }
        try sync(temporary)
        guard link(path, kept) == 0 else { throw failure("cannot keep the board being replaced as \(kept)") }
        func fail(_ what: String) -> BoardError {
            let error = failure(what)
            unlink(kept)
            return error
        }
        guard syncFolder(of: path) else { throw fail("cannot write the folder of \(path) to disk") }
        guard rename(temporary, path) == 0 else { throw fail("cannot move the restored board to \(path)") }
        guard syncFolder(of: path) else {
            throw BoardError(
                .io,
                "the restored board is at \(path) and the board it replaced at \(kept), but the folder could not be written to disk (\(String(cString: strerror(errno)))); check the disk, then run plugboard audit verify"
            )
        }
        return kept
    }
}
