import Foundation
import GRDB
import GRDBSQLite
package import PlugboardModel

// The only ways into the board's tables. Reads run in a read transaction. A change of the board's policy runs in
// `change(_:refusal:requiring:_:)`: one `BEGIN IMMEDIATE` transaction that checks who may make it and must record its
// audit rows, or it is rolled back; its last audit row commits to the digests of the rows it changed (the state
// proof, State/). Runtime data that is not policy (a token's last use) goes through `writeUnaudited(_:)`, which names
// why it is not audited; hosts' load reports and SDK usage go to the telemetry file (Telemetry/), never here.

/// One audited change in progress: the transaction, who makes it and when. Record its audit rows with ``record(_:)``.
///
/// The store hands one to each operation; ``Board/changeSecrets(_:refusal:requiring:_:)`` hands one to the secure
/// storage. A change that writes rows but records no audit row is rolled back, so no caller can skip the audit log.
package final class AuditedChange {
    /// Who makes the change.
    package let actor: Principal
    /// When: the same timestamp for every row the change writes.
    package let now: String
    let db: Database
    private let changesAtStart: Int
    private var rolledBackChanges = 0
    /// The audit rows recorded so far: written when the change ends, the last one with the change's state digests.
    private var entries: [AuditEntry] = []
    var recordedCount: Int { entries.count }
    /// The audit rows recorded so far.
    var recordedEntries: [AuditEntry] { entries }
    /// Commit to the digests of every row of policy, not only those this change touched (a migration's baseline).
    var baseline = false
    /// What the board's connection keeps between changes, and what this change learned for it once committed.
    private let cache: StateCache
    /// The schema's facts as this change knows them (kept by ``cache`` once the change committed).
    private var schema: StateCache.Schema
    /// The state of the file when the change began, before it wrote anything.
    private let stateAtStart: ProvenRows.FileState
    /// The board's proofs of rows read outside changes, carried across this change once committed.
    private let proven: ProvenRows
    /// What this change committed to, when it touched rows of the state proof.
    private var commitment: StateLedger.Commitment?

    /// Begins a change in `db`'s transaction: prepares the noting of touched rows (``prepareStateTracking(_:_:)``).
    init(db: Database, by actor: Principal, now: String, cache: StateCache, proven: ProvenRows) throws {
        self.db = db
        self.actor = actor
        self.now = now
        self.cache = cache
        self.proven = proven
        // Before anything is written, the tracking's own rows included.
        stateAtStart = try ProvenRows.state(db)
        var schema = try cache.schema(db)
        try Self.prepareStateTracking(db, &schema)
        self.schema = schema
        changesAtStart = db.totalChangesCount
    }

    /// Installs this connection's triggers that note touched rows when some are missing (a new connection, or a
    /// migration made a table of policy), and forgets rows noted by an earlier transaction. Checked against the
    /// schema unless a committed change already did so for this version of the schema: a rolled-back installation is
    /// never taken for a done one.
    private static func prepareStateTracking(_ db: Database, _ schema: inout StateCache.Schema) throws {
        if !schema.triggers {
            if try !StateQueries.triggersInstalled(db) { try StateQueries.installTriggers(db) }
            schema.triggers = true
        }
        try StateQueries.clearTouched(db)
    }

    /// Keeps what the change learned, once it committed (see ``StateCache``), and carries the proofs of rows across it
    /// (``ProvenRows/carry(from:to:rows:removed:buckets:)``).
    func committed() {
        // Own commits do not move `data_version`; only the connection's count of changed rows moved.
        let stateAfter = ProvenRows.FileState(
            connection: stateAtStart.connection, dataVersion: stateAtStart.dataVersion,
            changedRows: sqlite3_total_changes64(db.sqliteConnection))
        cache.keep(
            schema: schema,
            buckets: commitment.map { StateCache.Buckets(state: stateAfter, hashes: $0.buckets, entries: $0.bucketEntries) })
        if let commitment {
            proven.carry(
                from: stateAtStart, to: stateAfter, rows: commitment.digests.compactMap { $0.value == nil ? nil : $0.key },
                removed: commitment.digests.compactMap { $0.value == nil ? $0.key : nil }, buckets: commitment.touchedBuckets)
        }
    }

    /// Records `entry` in the audit log, in this change's transaction. Rows are written in order when the change's
    /// body returns; the last one carries the digests of the rows the change left behind.
    package func record(_ entry: AuditEntry) throws {
        entries.append(entry)
    }

    /// Writes the recorded rows: with the state proof (migration 0006), the digests of the touched rows and the state
    /// root go into the last row, and every row carries the root.
    func finish() throws {
        guard !entries.isEmpty else { return }
        // A migration in this change moved the schema: what was known of the one before says nothing of it.
        let version = try StateQueries.schemaVersion(db)
        let schemaMoved = version != schema.version
        if schemaMoved { schema = StateCache.Schema(version: version) }
        guard try schema.isTracked(db) else {
            // A change on a board whose proof was dropped behind the log would only bury the tampering deeper.
            if try StateQueries.expectsProof(db) {
                throw BoardError(
                    .integrity,
                    "the board's state proof (table state_buckets) was dropped behind the audit log, so nothing is changed; run plugboard audit verify"
                )
            }
            for entry in entries { try AuditLog.append(db, by: actor, entry: entry, at: now) }
            return
        }
        // The stored bucket hashes and entries as the last committed change of this connection left them, when
        // nothing else wrote the file since and this change did not rewrite the index as a whole.
        let kept = baseline || schemaMoved ? nil : cache.buckets(in: stateAtStart)
        let commitment = try StateLedger.commit(db, baseline: baseline, schema: &schema, kept: kept)
        self.commitment = commitment
        for (index, entry) in entries.enumerated() {
            let last = index == entries.count - 1
            try AuditLog.append(db, by: actor, entry: entry, at: now, state: (last ? commitment.changes : nil, commitment.root))
        }
    }

    /// Runs `body` in a savepoint; returning false (or throwing) rolls back what it wrote, which then needs no
    /// audit row.
    func savepoint(_ body: () throws -> Bool) throws {
        let before = db.totalChangesCount
        var kept = false
        defer { if !kept { rolledBackChanges += db.totalChangesCount - before } }
        try db.inSavepoint {
            kept = try body()
            return kept ? .commit : .rollback
        }
    }

    /// Whether rows were written that stay written.
    var wroteRows: Bool { db.totalChangesCount - changesAtStart - rolledBackChanges > 0 }
}

/// Who may make a change, checked inside its transaction.
package enum RequiredRole: Sendable, Hashable {
    /// A board admin.
    case admin(doing: String)
    /// The plug-in's owners or a board admin; the plug-in must be registered.
    case pluginOwners(String, doing: String)
    /// The plug-in's owners or maintainers, or a board admin; the plug-in must be registered.
    case pluginMaintainers(String, doing: String)
}

extension Board {
    /// Runs `body` with read access to a consistent view of the board.
    func read<T>(_ body: (Database) throws -> T) throws(BoardError) -> T {
        do {
            return try readTransaction(body)
        } catch {
            throw mapError(error)
        }
    }

    /// Runs `body` in one deferred transaction that is rolled back when it ends: it sees one consistent state of the
    /// board, and nothing it wrote could stay. Errors pass through unchanged.
    ///
    /// Not GRDB's `read`, which turns `PRAGMA query_only` on before and off after each read: setting a flag pragma
    /// expires every prepared statement of the connection, so every cached statement would be compiled again (with
    /// GRDB's authorizer) at each read; that was most of the time of a secure-storage read.
    func readTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.writeWithoutTransaction { db in
            // Cached statements: GRDB's `inTransaction` compiles `BEGIN` and `ROLLBACK` again each time.
            func rollBack() throws {
                if db.isInsideTransaction { try db.cachedStatement(sql: "ROLLBACK TRANSACTION").execute() }
            }
            try db.cachedStatement(sql: "BEGIN DEFERRED TRANSACTION").execute()
            let result: T
            do {
                result = try body(db)
            } catch {
                try? rollBack()
                throw error
            }
            try rollBack()
            return result
        }
    }

    /// Why a write is not audited: it is runtime data, not a change of the board's policy.
    enum UnauditedWrite {
        /// When a token was last used (`plugboard serve`, in batches; registrations and usage go to the telemetry file).
        case clientUsage
        /// How far webhook delivery got: an endpoint's cursor, attempts and last answer.
        case webhookDelivery
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction without an audit row; see ``UnauditedWrite`` for the only
    /// writes that may. Such writes do not change ``version()``. Errors pass through unchanged, for layers with
    /// errors of their own; ``BoardError``s are mapped by the caller.
    ///
    /// Such a write commits without waiting for the disk (`PRAGMA synchronous = NORMAL` for its transaction only):
    /// what it records is progress that may be lost (a power failure sends an event again, which receivers
    /// deduplicate, or forgets a token's last use), never a change, and a write that is not made durable on its own
    /// holds the write lock for microseconds rather than an `fdatasync`, so a kill switch written meanwhile waits for
    /// neither. The WAL keeps the board consistent: the next durable commit or checkpoint syncs its frames too.
    func writeUnaudited<T>(_ why: UnauditedWrite, _ body: (Database) throws -> T) throws -> T {
        guard !isReadOnly else {
            throw BoardError(.notAllowed, "the board at \(path) was opened read-only; this needs write access")
        }
        return try transaction(durable: false) { db in
            let result = try body(db)
            // Rows of policy an unaudited write touches are only columns left out of the proof (a token's last use):
            // forget them, so that nothing reads them as written by a change in progress.
            if try StateQueries.hasTouchedTable(db) { try StateQueries.clearTouched(db) }
            return result
        }
    }

    /// Runs one audited change: checks `access`, runs `body`, and commits only if every row it wrote comes with an
    /// audit row (``AuditedChange/record(_:)``). If the change is refused as not allowed or not found, the refused
    /// attempt is recorded with `refusal`'s action and target (``recordRefusal(_:by:because:)``, bounded per principal),
    /// and the error rethrown. Invalid input is not recorded: it leaves the board byte-for-byte unchanged.
    func change<T>(
        _ actor: Principal, refusal: AuditEntry, requiring access: RequiredRole? = nil, _ body: (AuditedChange) throws -> T
    ) throws(BoardError) -> T {
        guard !isReadOnly else {
            throw BoardError(.notAllowed, "the board at \(path) was opened read-only; changes need write access")
        }
        // Counted refusals this change writes before its rows: put back unless it commits.
        var counted: [RefusalBursts.Row] = []
        do {
            let result = try transaction { db in
                // The role first: a refusal then costs no preparation of the state's tracking, which its rollback would undo.
                if let access { try RequiredRole.check(access, db, by: actor) }
                let change = try AuditedChange(db: db, by: actor, now: clock.timestamp(), cache: stateCache, proven: provenRows)
                let result = try body(change)
                // An operation rehearsed or applied as a change request: its first audited change is the one.
                if let hook = changeHook, !hook.fired, change.recordedCount > 0 { try hook.run(change) }
                if change.wroteRows && change.recordedCount == 0 {
                    throw BoardError(
                        .integrity,
                        "the change '\(refusal.action)' wrote to the board without an audit row, so it was rolled back; this is a bug in Plugboard"
                    )
                }
                // Refusals counted in memory come before this change's rows, with the state root before it.
                if change.recordedCount > 0 {
                    counted = refusals.take(now: clock.instant())
                    try Self.appendRefusals(db, counted)
                }
                try change.finish()
                return (result, change)
            } committed: {
                noteOwnChange()
                $0.1.committed()
            }.0
            return result
        } catch {
            refusals.putBack(counted)
            if error is ChangeHook.Rehearsed { throw BoardError(.conflict, "the change was rehearsed and rolled back") }
            let error = mapError(error)
            recordRefusal(refusal, by: actor, because: error)
            throw error
        }
    }

    /// One `BEGIN IMMEDIATE` transaction; any error rolls everything back and passes through unchanged. `committed`
    /// runs once the transaction committed, still on the connection, with the body's result. Unless `durable` is
    /// false, the commit returns only once the WAL is on the disk.
    func transaction<T>(durable: Bool = true, _ body: (Database) throws -> T, committed: (T) -> Void = { _ in }) throws -> T {
        try writer.writeWithoutTransaction { db in
            // The connection's own setting (FULL, SQLite's default) is put back after this transaction.
            let synchronous = durable ? nil : try Int.fetchOne(db.cachedStatement(sql: "PRAGMA synchronous"))
            if !durable { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
            defer { if let synchronous { try? db.execute(sql: "PRAGMA synchronous = \(synchronous)") } }
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            committed(result!)
            return result!
        }
    }

    /// Turns any error into a ``BoardError`` that names the board and says what to do.
    func mapError(_ error: any Error) -> BoardError {
        if let error = error as? BoardError { return error }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return BoardError(
                    .io,
                    "the board at \(path) is busy: another process held the write lock for more than \(Int(Self.busyTimeout)) seconds; try again"
                )
            case .SQLITE_READONLY:
                return BoardError(.notAllowed, "the board at \(path) is read-only for this user; run as a user who can write it")
            case .SQLITE_NOTADB, .SQLITE_CORRUPT:
                return BoardError(.notABoard, "\(path) is not a readable Plugboard board (the database file is damaged or not SQLite)")
            case .SQLITE_CONSTRAINT:
                return BoardError(
                    .conflict,
                    "the board refused the change because it would break a constraint (\(error.message ?? "constraint failed")); nothing was changed"
                )
            default:
                return BoardError(
                    .io,
                    "the board at \(path) could not complete the operation (SQLite: \(error.message ?? "\(error.resultCode)")); nothing was changed"
                )
            }
        }
        return BoardError(.io, "the operation on the board at \(path) failed: \(Self.describe(error)); nothing was changed")
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
    }
}
