package import Foundation
import GRDB
package import PlugboardModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `plugboard restore` did.
package struct BoardRestore: Sendable, Hashable, Codable {
    /// The board that was restored.
    package let path: String
    /// The backup it was restored from.
    package let from: String
    /// The head of the backup's audit log, as verified before anything was touched.
    package let backupSeq: Int64
    /// The head of the restored board (the backup's, followed by the restore's own audit rows).
    package let seq: Int64
    package let hash: String
    package let stateRoot: String?
    /// Where the board it replaced was kept, if there was one.
    package let replacedBoardKeptAt: String?
    /// The migrations applied to the backup, whose schema was older than this binary's.
    package let migrated: [String]
    /// The stops carried forward from the replaced board.
    package let carried: [CarriedStop]
    /// Why nothing was carried forward, when nothing could be.
    package let carryForwardNote: String?
}

extension Board {
    /// Replaces the board at `path` with the backup at `source`, or creates it there when no board is left.
    ///
    /// Nothing is touched until the backup verifies (a board, a schema not newer than this binary, its audit chain and
    /// state root). The backup is copied beside the board, and there, unless `carryForward` is false, the kill
    /// switches, yanks, signer revocations and token revocations that the replaced board has and the backup lacks are
    /// made again, each with a `restore.carried-forward` audit row, followed by a `board.restore` row: one change, by a
    /// board admin. Then the old board is kept beside as `<board>.replaced-<time>` and the copy renamed into place, while
    /// holding SQLite's locks of the old board, so no process can have it open; a process that does is named and the
    /// restore refused.
    package static func restore(from source: String, to path: String, carryForward: Bool, by actor: Principal) throws(BoardError)
        -> BoardRestore
    {
        try BoardFiles.checkSource(source, board: path)
        let replacing = FileManager.default.fileExists(atPath: path)
        let refusal = "cannot restore the board at \(path)"
        if replacing { try BoardSharing.whileUnused(path, refusal) { () throws(BoardError) in } }
        let temporary = try BoardFiles.createTemporary(near: path, purpose: "restore")
        var done = false
        defer { if !done { BoardFiles.removeWithSidecars(temporary) } }
        try BoardFiles.copy(source, to: temporary, modeOf: replacing ? path : nil)
        let backupHead = try BoardFiles.verify(temporary, describing: "the backup \(source)")

        var stops: StopRecords?
        var note: String?
        if !carryForward {
            note = "carrying forward was turned off (--without-carry-forward)"
        } else if !replacing {
            note = "there was no board at \(path) to carry anything from"
        } else {
            do throws(BoardError) {
                let old = try Board.open(at: path, readOnly: true, requireCurrentSchema: false)
                stops = try old.read { db in try StopRecords.read(db) }
            } catch {
                note = "the board being replaced could not be read (\(error.message)), so nothing was carried from it"
            }
        }
        let (migrated, carried, head) = try recordRestore(
            of: temporary, from: source, backupHead: backupHead, replacing: replacing ? path : nil, stops: stops, by: actor)
        BoardFiles.removeSidecars(of: temporary)  // closed with its WAL checkpointed and empty

        var kept: String?
        if replacing {
            kept = try BoardSharing.whileUnused(path, refusal) { () throws(BoardError) -> String in
                try BoardFiles.swap(temporary, into: path)
            }
        } else {
            try BoardFiles.syncAndRename(temporary, to: path)
        }
        done = true
        return BoardRestore(
            path: path, from: source, backupSeq: backupHead.seq, seq: head.seq, hash: head.hash, stateRoot: head.stateRoot,
            replacedBoardKeptAt: kept, migrated: migrated, carried: carried, carryForwardNote: note)
    }

    /// Opens the copy of the backup at `temporary`, applies the migrations its older schema lacks, carries `stops` into
    /// it and records the restore, in one change by a board admin; checkpoints its WAL and closes it. Returns the
    /// migrations applied, what was carried and the copy's new head.
    private static func recordRestore(
        of temporary: String, from source: String, backupHead: AuditCheckpoint, replacing: String?, stops: StopRecords?,
        by actor: Principal
    ) throws(BoardError) -> ([String], [CarriedStop], AuditCheckpoint) {
        let board = try Board.open(at: temporary, requireCurrentSchema: false)
        try board.read { db in try Access.requireAdmin(db, by: actor, doing: "restore the board") }
        let migrated = try board.migrate(by: actor).map(\.fileName)
        // Admins only, checked above before the migrations: the change itself needs no second check.
        let carried = try board.change(actor, refusal: AuditEntry(action: "board.restore", targetType: "board")) { change in
            let carried = try stops?.carry(into: change) ?? []
            try change.record(
                AuditEntry(
                    action: "board.restore", targetType: "board", targetID: (source as NSString).lastPathComponent,
                    after: .object([
                        "backup_seq": .int(Int(backupHead.seq)), "backup_hash": .string(backupHead.hash),
                        "replaced_a_board": .bool(replacing != nil), "carried_forward": .int(carried.count),
                    ])))
            return carried
        }
        guard let head = try board.auditCheckpoint() else {
            throw BoardError(.integrity, "the restored board has no audit log; this is a bug in Plugboard")
        }
        guard try board.checkpointWAL(evenIfReplicated: true) == .done else {
            throw BoardError(.io, "cannot complete the restored copy of the board (its write-ahead log could not be checkpointed)")
        }
        return (migrated, carried, head)
    }
}

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

    /// Keeps the board at `path` beside it as `<board>.replaced-<time>` (with its write-ahead log, if one is left) and
    /// renames `temporary` into its place. The caller holds the board's locks. Returns where the old board is kept.
    static func swap(_ temporary: String, into path: String) throws(BoardError) -> String {
        let stamp = Timestamp.now().filter { $0.isNumber }
        var kept = "\(path).replaced-\(stamp)"
        var attempt = 1
        while FileManager.default.fileExists(atPath: kept) {
            attempt += 1
            kept = "\(path).replaced-\(stamp)-\(attempt)"
        }
        guard link(path, kept) == 0 else {
            throw BoardError(.io, "cannot keep the board being replaced as \(kept): \(String(cString: strerror(errno)))")
        }
        var wal = stat()
        if stat(path + "-wal", &wal) == 0, wal.st_size > 0 {
            guard rename(path + "-wal", kept + "-wal") == 0 else {
                unlink(kept)
                throw BoardError(.io, "cannot keep the write-ahead log of the board being replaced: \(String(cString: strerror(errno)))")
            }
        }
        unlink(path + "-wal")
        unlink(path + "-shm")
        try syncAndRename(temporary, to: path)
        return kept
    }
}
