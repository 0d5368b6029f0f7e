import GRDB

/// The SQL of the audit log.
enum AuditQueries {
    /// The last row's sequence and hash, or nil for an empty log.
    static func head(_ db: Database) throws -> AuditCheckpoint? {
        try Row.fetchOne(db, sql: "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").map {
            AuditCheckpoint(seq: $0["seq"], hash: $0["hash"])
        }
    }

    /// Inserts a row: `fields` in the chain's canonical order (``AuditLog/fields(of:)``), then its hashes.
    static func insert(_ db: Database, fields: [String?], prevHash: String, hash: String) throws {
        try db.execute(
            sql: """
                INSERT INTO audit_log (seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment,
                                       reason, before_json, after_json, prev_hash, hash)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: StatementArguments(fields + [prevHash, hash]))
    }

    /// Calls `body` with every row, in sequence order, without loading the whole log.
    static func forEachRecord(_ db: Database, _ body: (AuditRecord) throws -> Void) throws {
        let cursor = try Row.fetchCursor(db, sql: "SELECT * FROM audit_log ORDER BY seq")
        while let row = try cursor.next() { try body(AuditRecord(row: row)) }
    }

    /// The names of the triggers on the audit log.
    static func triggerNames(_ db: Database) throws -> Set<String> {
        try Set(String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_log'"))
    }

    /// Rows matching `query`, oldest first.
    static func records(_ db: Database, matching query: AuditQuery) throws -> [AuditRecord] {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let since = query.since {
            clauses.append("at >= ?")
            arguments += [since]
        }
        if let actor = query.actor {
            clauses.append("(actor = ? OR on_behalf_of = ?)")
            arguments += [actor, actor]
        }
        if let target = query.target {
            clauses.append("(target_id = ? OR substr(target_id, 1, length(?) + 1) = ? || '@')")
            arguments += [target, target, target]
        }
        var sql = "SELECT * FROM audit_log"
        if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
        sql += " ORDER BY seq DESC"
        if let limit = query.limit {
            sql += " LIMIT ?"
            arguments += [limit]
        }
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map(AuditRecord.init(row:)).reversed()
    }
}

extension AuditRecord {
    init(row: Row) {
        self.init(
            seq: row["seq"], at: row["at"], actor: row["actor"], onBehalfOf: row["on_behalf_of"], action: row["action"],
            outcome: row["outcome"], targetType: row["target_type"], targetID: row["target_id"], environment: row["environment"],
            reason: row["reason"], beforeJSON: row["before_json"], afterJSON: row["after_json"], prevHash: row["prev_hash"],
            hash: row["hash"])
    }
}
