extension Board {
    /// Recomputes the audit chain, checks the append-only triggers and, when given, that the log extends `checkpoint`.
    public func verifyAudit(checkpoint: AuditCheckpoint? = nil) throws(BoardError) -> AuditVerification {
        try read { db in try AuditLog.verify(db, checkpoint: checkpoint) }
    }

    /// The current head of the audit chain, or nil for an empty log.
    public func auditCheckpoint() throws(BoardError) -> AuditCheckpoint? {
        try read { db in try AuditQueries.head(db) }
    }

    /// Audit rows matching `query`, oldest first.
    public func auditRecords(_ query: AuditQuery) throws(BoardError) -> [AuditRecord] {
        try read { db in try AuditQueries.records(db, matching: query) }
    }
}

extension Board {
    /// Appends `entries` to the audit log in one change, touching no other table: for benchmarks and tests that need
    /// a long log quickly. Not public: every real change records its own rows.
    package func appendAuditEntries(_ entries: [AuditEntry], actor: Principal) throws(BoardError) {
        try change(actor, refusal: AuditEntry(action: "audit.append", targetType: "audit_log")) { change in
            for entry in entries { try change.record(entry) }
        }
    }
}
