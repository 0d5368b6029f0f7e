import GRDB

/// The SQL of the audit log.
enum AuditQueries {
    /// The last row's sequence and hash, or nil for an empty log.
    static func head(_ db: Database) throws -> AuditCheckpoint? {
        try Row.fetchOne(db, sql: "SELECT * FROM audit_log ORDER BY seq DESC LIMIT 1").map {
            AuditCheckpoint(seq: $0["seq"], hash: $0["hash"], stateRoot: $0["state_root"])
        }
    }

    /// Inserts a row: `fields` in the chain's canonical order (``AuditLog/fields(of:)``), then its hashes.
    /// With 14 fields (chain v2), the last two are `state_changes` and `state_root`.
    static func insert(_ db: Database, fields: [String?], prevHash: String, hash: String) throws {
        if fields.count == 14 {
            try db.execute(
                sql: """
                    INSERT INTO audit_log (seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment,
                                           reason, before_json, after_json, state_changes, state_root, prev_hash, hash)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: StatementArguments(fields + [prevHash, hash]))
        } else {
            try db.execute(
                sql: """
                    INSERT INTO audit_log (seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment,
                                           reason, before_json, after_json, prev_hash, hash)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: StatementArguments(fields + [prevHash, hash]))
        }
    }

    /// One row by its sequence number.
    static func record(_ db: Database, seq: Int64) throws -> AuditRecord? {
        try Row.fetchOne(db, sql: "SELECT * FROM audit_log WHERE seq = ?", arguments: [seq]).map(AuditRecord.init(row:))
    }

    /// Calls `body` with every row, in sequence order, without loading the whole log.
    static func forEachRecord(_ db: Database, _ body: (AuditRecord) throws -> Void) throws {
        let state =
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM pragma_table_info('audit_log') WHERE name = 'state_root')") ?? false
        let cursor = try Row.fetchCursor(
            db,
            sql: """
                SELECT seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment, reason, before_json,
                       after_json, prev_hash, hash, \(state ? "state_changes, state_root" : "NULL, NULL") FROM audit_log ORDER BY seq
                """)
        // By position, which is cheaper than looking each column up by name.
        while let row = try cursor.next() {
            try body(
                AuditRecord(
                    seq: row[0], at: row[1], actor: row[2], onBehalfOf: row[3], action: row[4], outcome: row[5], targetType: row[6],
                    targetID: row[7], environment: row[8], reason: row[9], beforeJSON: row[10], afterJSON: row[11], prevHash: row[12],
                    hash: row[13], stateChanges: row[14], stateRoot: row[15]))
        }
    }

    /// The triggers on the audit log: name → SQL.
    static func triggers(_ db: Database) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_log'") {
            result[row[0]] = row[1] ?? ""
        }
        return result
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
            hash: row["hash"], stateChanges: row["state_changes"], stateRoot: row["state_root"])
    }
}
