import Foundation
import PlugboardModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How one board is shared between OS users, and the checks that keep a reader from blocking a writer.
///
/// The supported model is **one group, modes that follow the board file**: the board's folder belongs to the group
/// and has the set-group-ID bit (`chgrp plugboard DIR; chmod 2770 DIR`), and the board file's group bits say what
/// the group may do (`0660`: every member writes; `0640`: members only read, the owner writes). Everything
/// Plugboard creates beside the board follows the board file: SQLite gives the `-wal` and `-shm` files the board's
/// mode, Plugboard gives them the board's group, and the artifact store's folders and files take the board's group
/// and the matching modes (see `ArtifactStore`).
///
/// Two rules keep a reader's files from ever blocking a writer (a kill switch above all):
/// - Writers keep the `-wal` and `-shm` files when they close (`SQLITE_FCNTL_PERSIST_WAL`, the WAL truncated to
///   zero bytes), so those files always belong to a user who can write the board, and a reader that may not create
///   files beside the board can still read it.
/// - A process that may only read the board refuses to open it while those files are missing, instead of letting
///   SQLite create them as files that only it can write. A writer that finds such files left by another tool (an
///   auditor's `sqlite3` without `-readonly`) removes them when no process has the board open, and otherwise names
///   the process that holds them.
enum BoardSharing {
    /// Where the guide explains the sharing model, for the end of messages.
    static let sharingGuide = "(see the guide Sharing a board, Sources/PlugboardOperations/PlugboardOperations.docc/SharingABoard.md)"

    /// The files SQLite keeps beside a board in WAL mode.
    static let sidecarSuffixes = ["-wal", "-shm"]

    /// The processes' own open boards (by device and inode, with a count), so that the leftover check never opens
    /// and closes a descriptor of a board this process already holds: that would drop its POSIX locks.
    private static let openHere = Mutex<[FileIdentity: Int]>([:])

    struct FileIdentity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// Notes that this process opened the board at `path`; returns the identity to pass to ``noteClosed(_:)``.
    static func noteOpened(_ path: String) -> FileIdentity? {
        guard let identity = FileIdentity(path: path) else { return nil }
        openHere.withLock { $0[identity, default: 0] += 1 }
        return identity
    }

    /// Notes that a board this process opened was closed.
    static func noteClosed(_ identity: FileIdentity) {
        openHere.withLock { open in
            let count = (open[identity] ?? 1) - 1
            open[identity] = count > 0 ? count : nil
        }
    }

    private static func isOpenHere(_ path: String) -> Bool {
        guard let identity = FileIdentity(path: path) else { return false }
        return openHere.withLock { $0[identity] != nil }
    }

    // MARK: Before opening

    /// Checks the board's `-wal` and `-shm` before SQLite opens it: a reader must find them, a writer must be able
    /// to write them (leftovers of a reader are removed when no process has the board open).
    ///
    /// - Parameter writing: Whether this process means to write (it asked for a read-write board and may write
    ///   the file).
    static func checkSidecars(of path: String, writing: Bool) throws(BoardError) {
        let present = sidecarSuffixes.filter { access(path + $0, F_OK) == 0 }
        if !writing {
            // A user who may write the board (opening it read-only) creates these files as its own: no harm.
            guard access(path, W_OK) != 0 else { return }
            let guide = sharingGuide
            let user = userName(geteuid())
            if present.count < sidecarSuffixes.count {
                // A reader must not create them (they would be its own, and no writer could use them), and SQLite
                // cannot read a WAL board without them.
                let missing = sidecarSuffixes.filter { !present.contains($0) }.map { path + $0 }
                throw BoardError(
                    .notAllowed,
                    "cannot read the board at \(path) as \(user): \(missing.joined(separator: " and ")) \(missing.count > 1 ? "are" : "is") missing, and a user who may only read the board must not create them (no writer could use them, kill switches included); run any plugboard command once as a user who can write the board (\(ownerDescription(path))), which leaves them in place \(guide)"
                )
            }
            if let unreadable = sidecarSuffixes.first(where: { access(path + $0, R_OK) != 0 }) {
                throw BoardError(
                    .notAllowed,
                    "cannot read the board at \(path) as \(user): \(path)\(unreadable) (\(ownerDescription(path + unreadable))) is not readable by this user; its group and mode follow the board file (\(ownerDescription(path))) from the next time a user who can write the board opens it \(guide)"
                )
            }
            return
        }
        let blocked = present.filter { access(path + $0, W_OK) != 0 }
        guard !blocked.isEmpty else { return }
        try removeLeftovers(of: path, blocked: blocked)
    }

    /// Removes a reader's `-wal` and `-shm` when that is safe (the WAL is empty, nobody has the board open, the
    /// folder is writable), or says precisely why it is not.
    private static func removeLeftovers(of path: String, blocked: [String]) throws(BoardError) {
        let files = blocked.map { "\(path)\($0) (\(ownerDescription(path + $0)))" }.joined(separator: " and ")
        let start =
            "cannot write the board at \(path) as \(userName(geteuid())): \(files) \(blocked.count > 1 ? "are" : "is") not writable by this user, so no change can be written, kill switches included"
        let guide = sharingGuide
        var walInfo = stat()
        if stat(path + "-wal", &walInfo) == 0, walInfo.st_size > 0 {
            throw BoardError(
                .notAllowed,
                "\(start); the write-ahead log holds changes not yet in the board, so only its owner may open the board to complete them, or give this user write access to it \(guide)"
            )
        }
        let folder = (path as NSString).deletingLastPathComponent
        guard access(folder.isEmpty ? "." : folder, W_OK) == 0 else {
            throw BoardError(
                .notAllowed,
                "\(start); a process that could only read the board left them, and this user cannot remove them because it cannot write the folder \(folder) \(guide)"
            )
        }
        let busy = { (holder: String) in
            "they were left by a process that could only read the board, and \(holder) still has the board open: stop it and run the command again (Plugboard then removes them itself)"
        }
        try whileUnused(path, start, guide: guide, busy: busy) { () throws(BoardError) in
            for suffix in sidecarSuffixes { unlink(path + suffix) }
        }
    }

    /// Runs `body` while holding SQLite's lock bytes of the board at `path` exclusively, which proves that no
    /// connection in any process has the board open (a connection holds a shared lock there for as long as it is
    /// open); a process that opens the board meanwhile waits (its busy timeout) until `body` is done. When a process
    /// has the board open, throws `notAllowed`: `start`, then `busy(holder)` with the holder named, then `guide`.
    ///
    /// No connection of this process may have the board open (checked): closing the descriptor this takes would drop
    /// that connection's locks too.
    static func whileUnused<T>(
        _ path: String, _ start: String, guide: String = "",
        busy: (String) -> String = { "\($0) has it open: stop it and run the command again" },
        _ body: () throws(BoardError) -> T
    ) throws(BoardError) -> T {
        let end = guide.isEmpty ? "" : " \(guide)"
        guard !isOpenHere(path) else {
            throw BoardError(.notAllowed, "\(start); this process already has the board open as another connection\(end)")
        }
        let fd = Glibc_open(path, O_RDWR | O_CLOEXEC, 0)
        guard fd >= 0 else {
            throw BoardError(.notAllowed, "\(start); \(String(cString: strerror(errno)))\(end)")
        }
        defer { close(fd) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0x4000_0000  // SQLite's PENDING byte, then RESERVED, then the SHARED range: 512 bytes.
        lock.l_len = 512
        guard fcntl(fd, F_SETLK, &lock) == 0 else {
            var probe = lock
            let holder =
                fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != Int16(F_UNLCK) ? processDescription(probe.l_pid) : "another process"
            throw BoardError(.notAllowed, "\(start); \(busy(holder))\(end)")
        }
        defer {
            lock.l_type = Int16(F_UNLCK)
            _ = fcntl(fd, F_SETLK, &lock)
        }
        return try body()
    }

    // MARK: After opening

    /// Gives the `-wal` and `-shm` this process owns the board file's group and mode, so that every user the
    /// board is shared with can use them (a folder without the set-group-ID bit gives new files the creator's
    /// group). Failures are ignored: a later writer of the group then gets the precise error of
    /// ``checkSidecars(of:writing:)``.
    static func alignSidecars(of path: String) {
        var board = stat()
        guard stat(path, &board) == 0 else { return }
        for suffix in sidecarSuffixes {
            var info = stat()
            let sidecar = path + suffix
            guard stat(sidecar, &info) == 0, info.st_uid == geteuid() else { continue }
            if info.st_gid != board.st_gid { _ = chown(sidecar, uid_t.max, board.st_gid) }
            let mode = board.st_mode & 0o666
            if info.st_mode & 0o777 != mode { _ = chmod(sidecar, mode) }
        }
    }

    /// A warning when every user of the machine can read the board, or nil.
    static func exposureWarning(for path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & 0o004 != 0 else { return nil }
        return
            "the board \(path) is readable by every user of this machine (mode \(octal(info.st_mode & 0o777))): the master key is not in it, but the registry, the flags and the audit log are; share it with one group instead: chmod o-rwx \(path) \(sharingGuide)"
    }

    // MARK: Words

    static func octal(_ mode: mode_t) -> String { "0" + String(mode, radix: 8) }

    static func userName(_ uid: uid_t) -> String {
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name { return String(cString: name) }
        return "uid:\(uid)"
    }

    static func groupName(_ gid: gid_t) -> String {
        if let entry = getgrgid(gid), let name = entry.pointee.gr_name { return String(cString: name) }
        return "gid:\(gid)"
    }

    /// "owner alice, group plugboard, mode 0640".
    static func ownerDescription(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "missing" }
        return "owner \(userName(info.st_uid)), group \(groupName(info.st_gid)), mode \(octal(info.st_mode & 0o777))"
    }

    /// "process 123 (sqlite3, user bob)", from `/proc` where there is one.
    static func processDescription(_ pid: pid_t) -> String {
        let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        var info = stat()
        let user = stat("/proc/\(pid)", &info) == 0 ? ", user \(userName(info.st_uid))" : ""
        return "process \(pid) (\(command.map { Validate.escaped($0) } ?? "unknown")\(user))"
    }
}
