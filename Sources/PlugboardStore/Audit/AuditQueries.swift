import Crypto
import GRDB
import GRDBSQLite
import PlugboardModel

/// The SQL of the audit log.
enum AuditQueries {
    /// The last row's sequence and hash, or nil for an empty log.
    static func head(_ db: Database) throws -> AuditCheckpoint? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM audit_log ORDER BY seq DESC LIMIT 1")).map {
            AuditCheckpoint(seq: $0["seq"], hash: $0["hash"], stateRoot: $0["state_root"])
        }
    }

    /// The last row's sequence and hash, what the next row chains to (nil for an empty log): two columns by index,
    /// for every change's append.
    static func lastLink(_ db: Database) throws -> (seq: Int64, hash: String)? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")).map { ($0[0], $0[1]) }
    }

    /// Inserts a row: `fields` in the chain's canonical order (``AuditLog/fields(of:)``), then its hashes.
    /// With 14 fields (chain v2), the last two are `state_changes` and `state_root`; with 15 (v3), then `via`.
    static func insert(_ db: Database, fields: [String?], prevHash: String, hash: String) throws {
        let sql = fields.count == 15 ? insertV3 : fields.count == 14 ? insertV2 : insertV1
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(fields + [prevHash, hash]))
    }

    /// The `INSERT` of a row of chain v1 (12 fields) or v2 (with `state_changes` and `state_root`), then its hashes.
    private static let insertV1 = insertSQL(stateColumns: false)
    private static let insertV2 = insertSQL(stateColumns: true)
    private static let insertV3 = insertSQL(stateColumns: true, via: true)

    private static func insertSQL(stateColumns: Bool, via: Bool = false) -> String {
        let columns =
            [
                "seq", "at", "actor", "on_behalf_of", "action", "outcome", "target_type", "target_id", "environment", "reason",
                "before_json", "after_json",
            ] + (stateColumns ? ["state_changes", "state_root"] : []) + (via ? ["via"] : []) + ["prev_hash", "hash"]
        return
            "INSERT INTO audit_log (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
    }

    /// One row by its sequence number.
    static func record(_ db: Database, seq: Int64) throws -> AuditRecord? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(recordColumns(db)) FROM audit_log WHERE seq = ?"), arguments: [seq])
            .map(AuditRecord.init(row:))
    }

    /// Whether the log has the state proof's columns (migration 0006).
    static func hasStateColumns(_ db: Database) -> Bool {
        // From the schema SQLite has parsed already, without compiling a statement.
        sqlite3_table_column_metadata(db.sqliteConnection, "main", "audit_log", "state_root", nil, nil, nil, nil, nil) == SQLITE_OK
    }

    /// Whether the log has the column `via` (migration 0012).
    static func hasViaColumn(_ db: Database) -> Bool {
        sqlite3_table_column_metadata(db.sqliteConnection, "main", "audit_log", "via", nil, nil, nil, nil, nil) == SQLITE_OK
    }

    /// The columns of a row in ``AuditRecord/init(row:)``'s order: `NULL` for the state proof's columns on a board
    /// from before migration 0006, and for `via` before migration 0012.
    static func recordColumns(_ db: Database) -> String {
        """
        seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment, reason, before_json, after_json, \
        prev_hash, hash, \(hasStateColumns(db) ? "state_changes, state_root" : "NULL, NULL"), \(hasViaColumn(db) ? "via" : "NULL")
        """
    }

    /// One row as `AuditLog.verify` needs it: whether its content matches its hash (recomputed from SQLite's column
    /// buffers, without making a string of each field), and the columns that chain it.
    struct ChainRow {
        var seq: Int64
        var contentMatchesHash: Bool
        var prevHash: String
        var hash: String
        var stateChanges: String?
        var stateRoot: String?
    }

    /// Calls `body` with every row in `seq` order, as ``ChainRow``s: the content hashed as `AuditLog.chainHash` does,
    /// from the column buffers (a fraction of the allocations of reading ``AuditRecord``s).
    /// With `after`, only the rows after that sequence number.
    static func forEachChainRow(_ db: Database, after: Int64 = 0, _ body: (ChainRow) throws -> Void) throws {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1024)
        try StateQueries.forEachRow(db, sql: "SELECT \(recordColumns(db)) FROM audit_log WHERE seq > \(after) ORDER BY seq") { handle in
            func text(_ column: Int32) -> UnsafeRawBufferPointer? {
                guard sqlite3_column_type(handle, column) != SQLITE_NULL, let start = sqlite3_column_text(handle, column) else {
                    return nil
                }
                return UnsafeRawBufferPointer(start: start, count: Int(sqlite3_column_bytes(handle, column)))
            }
            func string(_ column: Int32) -> String? { text(column).map { String(decoding: $0, as: UTF8.self) } }
            func field(_ value: UnsafeRawBufferPointer?) {
                guard let value else {
                    bytes.append(UInt8(ascii: "-"))
                    bytes.append(10)
                    return
                }
                bytes.appendDecimal(Int64(value.count))
                bytes.append(UInt8(ascii: ":"))
                bytes.append(contentsOf: value)
                bytes.append(10)
            }
            let seq = sqlite3_column_int64(handle, 0)
            let isV3 = text(16) != nil
            let isV2 = !isV3 && text(15) != nil
            // AuditLog.chainHash's encoding: the previous hash, the format line, then the fields.
            bytes.removeAll(keepingCapacity: true)
            if let prev = text(12) { bytes.append(contentsOf: prev) }
            let format = isV3 ? "\nplugboard-audit-v3\n" : isV2 ? "\nplugboard-audit-v2\n" : "\nplugboard-audit-v1\n"
            bytes.append(contentsOf: format.utf8)
            var decimal: [UInt8] = []
            decimal.appendDecimal(seq)
            decimal.withUnsafeBytes { field($0) }
            for column: Int32 in 1...11 { field(text(column)) }
            if isV2 || isV3 {
                field(text(14))
                field(text(15))
            }
            if isV3 { field(text(16)) }
            let computed = SHA256.hash(data: bytes)
            let stored = text(13)
            try body(
                ChainRow(
                    seq: seq, contentMatchesHash: stored.map { computed.matchesHex($0) } ?? false, prevHash: string(12) ?? "",
                    hash: string(13) ?? "", stateChanges: string(14), stateRoot: string(15)))
            return true
        }
    }

    /// Calls `body` with each row matching `query`, oldest first, one row in memory at a time; with a limit, the
    /// newest `limit` rows.
    ///
    /// A target (``AuditQuery/target``) goes through the index by target (`target_type, target_id, seq`) although the
    /// query names no type: the log's few target types are found by stepping through the index (`types`, a loose
    /// index scan), then each type's rows with the id, and those of its versions (`ID@…`, the ids from `ID@` up to
    /// `IDA`), are looked up in it. A million-row log answers in milliseconds instead of reading every row. A time or
    /// an actor (which also matches the declared principal, a column without an index) is checked on the rows the
    /// other filters leave, newest first when there is a limit.
    static func forEachRecord(_ db: Database, matching query: AuditQuery, _ body: (AuditRecord) throws -> Void) throws {
        var clauses: [String] = []
        var arguments: [String: (any DatabaseValueConvertible)?] = [:]
        var prefix = ""
        if let target = query.target {
            prefix = """
                WITH RECURSIVE types(type) AS (
                    SELECT min(target_type) FROM audit_log
                    UNION ALL SELECT (SELECT min(target_type) FROM audit_log WHERE target_type > type) FROM types WHERE type IS NOT NULL
                ), matched(seq) AS (
                    SELECT seq FROM audit_log WHERE target_type IN (SELECT type FROM types WHERE type IS NOT NULL) AND target_id = :target
                    UNION ALL
                    SELECT seq FROM audit_log WHERE target_type IN (SELECT type FROM types WHERE type IS NOT NULL)
                        AND target_id >= :target || '@' AND target_id < :target || 'A'
                )

                """
            clauses.append("seq IN (SELECT seq FROM matched)")
            arguments["target"] = target
        }
        if let after = query.after, query.limit == nil {
            clauses.append("seq > :after")
            arguments["after"] = after
        }
        if let since = query.since {
            clauses.append("at >= :since")
            arguments["since"] = since
        }
        if let actor = query.by {
            clauses.append("(actor = :actor OR on_behalf_of = :actor)")
            arguments["actor"] = actor
        }
        if let action = query.action {
            clauses.append("action = :action")
            arguments["action"] = action
        }
        var select = "SELECT \(recordColumns(db)) FROM audit_log"
        if !clauses.isEmpty { select += " WHERE " + clauses.joined(separator: " AND ") }
        let sql: String
        if let limit = query.limit {
            // The newest rows, then in the log's order: SQLite keeps `limit` rows, not the log.
            sql = prefix + "SELECT * FROM (\(select) ORDER BY seq DESC LIMIT :limit) ORDER BY seq"
            arguments["limit"] = limit
        } else {
            sql = prefix + select + " ORDER BY seq"
        }
        let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
        while let row = try rows.next() { try body(AuditRecord(row: row)) }
    }

    /// Rows matching `query`, oldest first.
    static func records(_ db: Database, matching query: AuditQuery) throws -> [AuditRecord] {
        var records: [AuditRecord] = []
        try forEachRecord(db, matching: query) { records.append($0) }
        return records
    }
}

extension AuditRecord {
    /// A row selected with ``AuditQueries/recordColumns(_:)``, read by position.
    init(row: Row) {
        self.init(
            seq: row[0], at: row[1], by: row[2], onBehalfOf: row[3], action: row[4], outcome: row[5], targetType: row[6],
            targetID: row[7], environment: row[8], reason: row[9], beforeJSON: row[10], afterJSON: row[11], prevHash: row[12],
            hash: row[13], stateChanges: row[14], stateRoot: row[15], via: row[16])
    }
}
