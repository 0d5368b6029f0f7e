import GRDB
package import PlugboardModel

extension Board {
    /// Recomputes the audit chain, checks the append-only triggers and, when given, that the log extends `checkpoint`.
    package func verifyAudit(checkpoint: AuditCheckpoint? = nil, widening: WideningActions? = nil) throws(BoardError)
        -> AuditVerification
    {
        flushRefusals()
        return try read { db in try AuditLog.verify(db, checkpoint: checkpoint, widening: widening) }
    }

    /// The current head of the audit chain, or nil for an empty log.
    package func auditCheckpoint() throws(BoardError) -> AuditCheckpoint? {
        try read { db in try AuditQueries.head(db) }
    }

    /// Audit rows matching `query`, oldest first. For a log of any length, prefer ``readAuditLog(_:)``, which holds
    /// one row in memory at a time.
    package func auditRecords(_ query: AuditQuery) throws(BoardError) -> [AuditRecord] {
        flushRefusals()
        return try read { db in try AuditQueries.records(db, matching: query) }
    }

    /// Reads the audit log as one consistent state of the board: `body` may go over it several times with
    /// ``AuditLogReader/forEach(_:_:)`` (a table's column widths, then its rows) and sees the same rows each time.
    ///
    /// The read transaction lasts as long as `body`: writers go on meanwhile, but the WAL cannot be checkpointed past
    /// this read until it ends.
    package func readAuditLog<T>(_ body: (AuditLogReader) throws -> T) throws(BoardError) -> T {
        flushRefusals()
        return try read { db in try body(AuditLogReader(db: db)) }
    }
}

/// The audit log inside ``Board/readAuditLog(_:)``. Use it only inside that closure: it reads through the closure's
/// transaction.
package struct AuditLogReader {
    let db: Database

    /// Calls `body` with each row matching `query`, oldest first (with a limit, the newest `limit` rows), one row in
    /// memory at a time. An error `body` throws stops the reading and is rethrown.
    package func forEach(_ query: AuditQuery, _ body: (AuditRecord) throws -> Void) throws {
        try AuditQueries.forEachRecord(db, matching: query, body)
    }
}

extension Board {
    /// Appends `entries` to the audit log in one change, touching no other table: for benchmarks and tests that need
    /// a long log quickly. Not public: every real change records its own rows.
    package func appendAuditEntries(_ entries: [AuditEntry], by actor: Principal) throws(BoardError) {
        try change(actor, refusal: AuditEntry(action: .auditAppend, targetType: "audit_log")) { change in
            for entry in entries { try change.record(entry) }
        }
    }
}
