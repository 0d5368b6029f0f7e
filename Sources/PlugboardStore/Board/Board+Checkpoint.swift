import GRDB
import GRDBSQLite
package import PlugboardModel

extension Board {
    /// What ``checkpointWAL()`` did.
    package enum CheckpointOutcome: Sendable, Equatable {
        /// The WAL was copied into the board file and truncated to zero bytes.
        case done
        /// A reader in another process kept the checkpoint from completing (after the busy timeout).
        case readerBusy
        /// The board is replicated by Litestream, which checkpoints it: Plugboard makes no checkpoint of its own.
        case replicated
        /// The board was opened read-only.
        case readOnly
    }

    /// Copies the WAL into the board file and truncates the WAL to zero bytes (`PRAGMA wal_checkpoint(TRUNCATE)`),
    /// so that page images written before, such as data keys that were just shredded, no longer sit in the WAL.
    ///
    /// On a board Litestream replicates, the checkpoint does not wait: Litestream holds a read transaction so that no
    /// frame is checkpointed away before it copied it, so a truncating checkpoint would only wait out the busy timeout,
    /// and Litestream checkpoints the WAL itself. A table named `_litestream_seq` alone proves nothing (anyone who
    /// may write the board can add one): when the board has it, the checkpoint is tried with a short wait, and the
    /// board counts as replicated only when a reader in another process kept it from completing. `evenIfReplicated`
    /// checkpoints a board file no other process can have open (a restore's copy), with the usual wait. Never throws
    /// for a checkpoint that could not complete.
    @discardableResult
    package func checkpointWAL(evenIfReplicated: Bool = false) throws(BoardError) -> CheckpointOutcome {
        guard !isReadOnly else { return .readOnly }
        do {
            return try writer.writeWithoutTransaction { db in
                let mayBeReplicated = try !evenIfReplicated && hasLitestreamTable(db)
                if mayBeReplicated { sqlite3_busy_timeout(db.sqliteConnection, Self.replicatedCheckpointWait) }
                defer { if mayBeReplicated { sqlite3_busy_timeout(db.sqliteConnection, Int32(Self.busyTimeout * 1000)) } }
                let row = try Row.fetchOne(db.cachedStatement(sql: "PRAGMA wal_checkpoint(TRUNCATE)"))
                if (row?[0] as Int?) == 0 { return .done }
                return mayBeReplicated ? .replicated : .readerBusy
            }
        } catch {
            throw mapError(error)
        }
    }

    /// How long, in milliseconds, a checkpoint of a board that may be replicated waits for readers.
    static let replicatedCheckpointWait: Int32 = 250

    /// True when the board has Litestream's bookkeeping table `_litestream_seq`, which Litestream adds when it starts
    /// replicating. Only a hint: the table stays when Litestream stops, and anyone who may write the board can add it.
    func hasLitestreamTable(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_litestream_seq'")) ?? false
    }
}
