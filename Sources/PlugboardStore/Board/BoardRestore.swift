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
    /// The stops and narrowings carried forward from the replaced board.
    package let carried: [CarriedStop]
    /// The stops of the replaced board that the backup lacks and that were not carried (`--without-carry-forward`).
    package let notCarried: [CarriedStop]
    /// Why no stop was carried forward, when none could be or none was to be.
    package let carryForwardNote: String?
}

extension Board {
    /// Replaces the board at `path` with the backup at `source`, or creates it there when no board is left.
    ///
    /// Who may: an admin of the board being replaced, as that board records it (a refusal is audited there); when
    /// there is no board at `path`, an admin of the backup; when the board at `path` cannot be read as a board, an
    /// admin of the backup who owns the board's file (or root).
    ///
    /// Nothing is touched until the backup verifies (a board, a schema not newer than this binary, its audit chain and
    /// state root). The board being replaced is checkpointed (its write-ahead log copied into it and emptied) and read:
    /// its stops (kill switches, yanks, signer and token revocations) and its narrowings (`Narrowings`). The backup
    /// is copied beside the board, and there the stops it lacks are made again unless `carryForward` is false, and it is
    /// narrowed to the replaced board in every case, each with a `restore.carried-forward` audit row, followed by a
    /// `board.restore` row: one change. Then, holding SQLite's locks of the old board (so no process can have it open;
    /// one that does is named and the restore refused), and only if the board did not change since it was read, the
    /// old board is kept beside as `<board>.replaced-<time>` and the copy renamed into place (`BoardFiles.swap(_:into:expecting:)`).
    package static func restore(from source: String, to path: String, carryForward: Bool, by actor: Principal) throws(BoardError)
        -> BoardRestore
    {
        try BoardFiles.checkSource(source, board: path)
        var info = stat()
        let replacing = lstat(path, &info) == 0
        let refusal = "cannot restore the board at \(path)"
        var replaced: ReplacedBoard?
        if replacing {
            try BoardSharing.whileUnused(path, refusal) { () throws(BoardError) in }
            replaced = try ReplacedBoard.read(path, by: actor, refusal: refusal)
        } else if stat(path + "-wal", &info) == 0, info.st_size > 0 {
            throw BoardError(
                .conflict,
                "\(refusal): a write-ahead log (\(path)-wal) is left where there is no board, and it would be replayed onto the restored one; move it away first"
            )
        }
        let temporary = try BoardFiles.createTemporary(near: path, purpose: "restore")
        var done = false
        defer { if !done { BoardFiles.removeWithSidecars(temporary) } }
        try BoardFiles.copy(source, to: temporary, modeOf: replacing ? path : nil)
        let backupHead = try BoardFiles.verify(temporary, describing: "the backup \(source)")

        var note: String?
        if let replaced, replaced.records == nil {
            note = replaced.unreadable.map { "the board being replaced could not be read (\($0)), so nothing was carried from it" }
        } else if !replacing {
            note = "there was no board at \(path) to carry anything from"
        } else if !carryForward {
            note = "carrying forward was turned off (--without-carry-forward)"
        }
        let recorded = try recordRestore(
            of: temporary, from: source, backupHead: backupHead, replaced: replaced, carryForward: carryForward, by: actor)
        BoardFiles.removeSidecars(of: temporary)  // closed with its WAL checkpointed and empty

        var kept: String?
        if let replaced {
            kept = try BoardSharing.whileUnused(path, refusal) { () throws(BoardError) -> String in
                try BoardFiles.swap(temporary, into: path, expecting: replaced.files)
            }
        } else {
            try BoardFiles.syncAndLink(temporary, to: path)
        }
        done = true
        return BoardRestore(
            path: path, from: source, backupSeq: backupHead.seq, seq: recorded.head.seq, hash: recorded.head.hash,
            stateRoot: recorded.head.stateRoot, replacedBoardKeptAt: kept, migrated: recorded.migrated, carried: recorded.carried,
            notCarried: recorded.notCarried, carryForwardNote: note)
    }

    /// What `recordRestore(of:from:backupHead:replaced:carryForward:by:)` did to the copy.
    private struct Recorded {
        let migrated: [String]
        let carried: [CarriedStop]
        let notCarried: [CarriedStop]
        let head: AuditCheckpoint
    }

    /// Opens the copy of the backup at `temporary`, applies the migrations its older schema lacks, carries the replaced
    /// board's stops (unless `carryForward` is false) and narrowings into it and records the restore, in one change;
    /// checkpoints its WAL and closes it.
    private static func recordRestore(
        of temporary: String, from source: String, backupHead: AuditCheckpoint, replaced: ReplacedBoard?, carryForward: Bool,
        by actor: Principal
    ) throws(BoardError) -> Recorded {
        let board = try Board.open(at: temporary, requireCurrentSchema: false)
        if replaced?.records == nil {
            // No board to check the actor against: an admin of the backup, as the backup records it.
            try board.read { db in try RequiredRole.requireAdmin(db, by: actor, doing: "restore the board") }
        }
        let migrated = try board.migrate(by: actor).map(\.fileName)
        // Admins only, checked above (or on the replaced board) before the migrations: the change needs no second check.
        let (carried, notCarried) = try board.change(actor, refusal: AuditEntry(action: .boardRestore, targetType: "board")) {
            change in
            let records = replaced?.records
            let stops = try records?.stops.carry(into: change, apply: carryForward) ?? []
            let narrowed = try records?.narrowings.narrow(change) ?? []
            let carried = (carryForward ? stops : []) + narrowed
            try change.record(
                AuditEntry(
                    action: .boardRestore, targetType: "board", targetID: (source as NSString).lastPathComponent,
                    after: .object([
                        "backup_seq": .int(Int(backupHead.seq)), "backup_hash": .string(backupHead.hash),
                        "replaced_a_board": .bool(replaced != nil), "carried_forward": .int(carried.count),
                        "not_carried": .int(carryForward ? 0 : stops.count),
                    ])))
            return (carried, carryForward ? [] : stops)
        }
        guard let head = try board.auditCheckpoint() else {
            throw BoardError(.integrity, "the restored board has no audit log; this is a bug in Plugboard")
        }
        guard try board.checkpointWAL(evenIfReplicated: true) == .done else {
            throw BoardError(.io, "cannot complete the restored copy of the board (its write-ahead log could not be checkpointed)")
        }
        return Recorded(migrated: migrated, carried: carried, notCarried: notCarried, head: head)
    }
}

/// The board a restore replaces, as read before anything moves: what it stops and narrows, and the state of its files
/// then, which must be unchanged when the restored copy takes its place.
struct ReplacedBoard: Sendable {
    struct Records: Sendable {
        let stops: StopRecords
        let narrowings: Narrowings
    }

    /// Nil when the board could not be read.
    let records: Records?
    /// Why the board could not be read.
    let unreadable: String?
    /// The board's files once checkpointed, before it was read.
    let files: BoardFiles.Fingerprint

    /// Checks that `actor` is an admin of the board at `path` (a refusal is audited there), checkpoints it so that its
    /// write-ahead log is empty and every committed change is in the board file, and reads its stops and narrowings.
    /// A board that cannot be read as a board (not SQLite, damaged, not a Plugboard board) may be replaced only by the
    /// owner of its file or root, and only when its write-ahead log is empty: the changes in a log that cannot be
    /// checkpointed would be lost. Any other failure to open it (busy, locked, a newer schema) refuses the restore.
    static func read(_ path: String, by actor: Principal, refusal: String) throws(BoardError) -> ReplacedBoard {
        // Before SQLite opens it: opening a board it cannot read may leave its log emptied.
        let log = BoardFiles.Fingerprint(path).wal
        let opened: (records: Records, files: BoardFiles.Fingerprint)
        do {
            opened = try readOpen(path, by: actor, refusal: refusal)
        } catch let error as Unreadable {
            try requireFileOwner(path, refusal: refusal, because: error.message)
            let files = BoardFiles.Fingerprint(path)
            guard files.wal.size <= 0, log.size <= 0 else {
                throw BoardError(
                    .conflict,
                    "\(refusal): it cannot be read as a board (\(error.message)), and its write-ahead log (\(path)-wal, \(max(log.size, files.wal.size)) bytes) holds changes that only it can replay; stop any process writing it, or move \(path) and \(path)-wal aside together, then run the restore again"
                )
            }
            return ReplacedBoard(records: nil, unreadable: error.message, files: files)
        } catch let error as BoardError {
            throw error
        } catch {
            throw BoardError(.io, "\(refusal): \(error)")
        }
        // The board is closed now. Its files were fingerprinted right after the checkpoint, before its records were
        // read: a change another process committed since then (after the records were read, say) grew the empty log
        // or was copied into the board file when the last connection closed, and is caught here and again at the swap.
        guard BoardFiles.Fingerprint(path) == opened.files else { throw BoardFiles.changedWhileRead(path) }
        return ReplacedBoard(records: opened.records, unreadable: nil, files: opened.files)
    }

    private struct Unreadable: Error {
        let message: String
    }

    /// Opens the board, checks the actor, checkpoints it, fingerprints its files and reads it; the board is closed when
    /// this returns. Only an error that says the file is not a readable board counts as `Unreadable`.
    private static func readOpen(_ path: String, by actor: Principal, refusal: String) throws -> (
        records: Records, files: BoardFiles.Fingerprint
    ) {
        let board: Board
        do { board = try Board.open(at: path, requireCurrentSchema: false) } catch {
            if error.code == .notABoard { throw Unreadable(message: error.message) }
            throw BoardError(error.code, "\(refusal): \(error.message)")
        }
        try board.change(
            actor, refusal: AuditEntry(action: .boardRestore, targetType: "board"),
            requiring: .admin(doing: "restore the board at \(path)")
        ) { _ in }
        guard try board.checkpointWAL(evenIfReplicated: true) == .done else {
            throw BoardError(
                .notAllowed,
                "\(refusal): its write-ahead log could not be copied into it, because another process opened the board meanwhile; stop it and run the restore again"
            )
        }
        // Taken while this connection is open and before anything is read: every commit from now on changes it.
        let files = BoardFiles.Fingerprint(path)
        guard files.wal.size <= 0 else { throw BoardFiles.changedWhileRead(path) }
        let records: Records
        do {
            records = try board.read { db in Records(stops: try StopRecords.read(db), narrowings: try Narrowings.read(db)) }
        } catch {
            if error.code == .notABoard { throw Unreadable(message: error.message) }
            throw error
        }
        pauseForTests(after: "read")
        return (records, files)
    }

    /// When `PLUGBOARD_TEST_RESTORE_PAUSE` names a folder (process tests only), creates `<folder>/<step>` and waits, at
    /// most two minutes, until `<folder>/resume` exists, so that a test can change the board at that step.
    private static func pauseForTests(after step: String) {
        guard let folder = ProcessInfo.processInfo.environment["PLUGBOARD_TEST_RESTORE_PAUSE"], !folder.isEmpty else { return }
        _ = FileManager.default.createFile(atPath: folder + "/" + step, contents: nil)
        let deadline = Date().addingTimeInterval(120)
        while access(folder + "/resume", F_OK) != 0, Date() < deadline { usleep(10_000) }
    }

    /// Passes for the owner of the board's file and for root.
    private static func requireFileOwner(_ path: String, refusal: String, because problem: String) throws(BoardError) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_uid == geteuid() || geteuid() == 0 else {
            throw BoardError(
                .notAllowed,
                "\(refusal): it cannot be read as a board (\(problem)), so its admins cannot be checked, and only the owner of its file (\(BoardSharing.ownerDescription(path))) or root may replace it"
            )
        }
    }
}
