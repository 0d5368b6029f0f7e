import Crypto
import Foundation
import GRDB

/// What a change writes to the audit log (the board fills in sequence, time, actor and hashes).
public struct AuditEntry: Sendable, Hashable {
    /// Whether the change was made or refused.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// The change was made.
        case ok
        /// The attempt was refused (not allowed, not found); nothing else changed.
        case refused
    }

    /// A dotted verb such as `plugin.enable`, `plugin.kill`, `owner.add`.
    public var action: String
    /// Made or refused.
    public var outcome: Outcome
    /// The kind of thing changed: `plugin`, `plugin_version`, `kill_switch`, `owner`, `admin`, `environment`, …
    public var targetType: String
    /// The id of the thing changed.
    public var targetID: String?
    /// The environment the change applies to, when it applies to one.
    public var environment: String?
    /// The reason given (kill, yank, revive), or the refusal message.
    public var reason: String?
    /// The state before the change.
    public var before: AuditJSON?
    /// The state after the change.
    public var after: AuditJSON?

    /// Creates an entry.
    public init(
        action: String, outcome: Outcome = .ok, targetType: String, targetID: String? = nil,
        environment: String? = nil, reason: String? = nil, before: AuditJSON? = nil, after: AuditJSON? = nil
    ) {
        self.action = action
        self.outcome = outcome
        self.targetType = targetType
        self.targetID = targetID
        self.environment = environment
        self.reason = reason
        self.before = before
        self.after = after
    }
}

/// One row of the audit log as stored.
public struct AuditRecord: Sendable, Hashable, Codable {
    public let seq: Int64
    public let at: String
    public let actor: String
    public let onBehalfOf: String?
    public let action: String
    public let outcome: String
    public let targetType: String
    public let targetID: String?
    public let environment: String?
    public let reason: String?
    public let beforeJSON: String?
    public let afterJSON: String?
    public let prevHash: String
    public let hash: String

    init(row: Row) {
        seq = row["seq"]
        at = row["at"]
        actor = row["actor"]
        onBehalfOf = row["on_behalf_of"]
        action = row["action"]
        outcome = row["outcome"]
        targetType = row["target_type"]
        targetID = row["target_id"]
        environment = row["environment"]
        reason = row["reason"]
        beforeJSON = row["before_json"]
        afterJSON = row["after_json"]
        prevHash = row["prev_hash"]
        hash = row["hash"]
    }
}

/// The head of the audit chain: keep it somewhere else to detect a truncated or rewritten log later.
public struct AuditCheckpoint: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The sequence number of the last row.
    public let seq: Int64
    /// The hash of the last row.
    public let hash: String

    /// Creates a checkpoint.
    public init(seq: Int64, hash: String) {
        self.seq = seq
        self.hash = hash
    }

    /// Parses `SEQ:HASH` as printed by `plugboard audit checkpoint`.
    public init(parsing text: String) throws(BoardError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let seq = Int64(parts[0]), seq >= 0,
            parts[1].count == 64, parts[1].allSatisfy({ $0.isHexDigit && !$0.isUppercase })
        else {
            throw .invalid(
                "checkpoint '\(Validate.printable(text))' is not valid: expected SEQ:HASH as printed by plugboard audit checkpoint")
        }
        self.seq = seq
        self.hash = String(parts[1])
    }

    /// `SEQ:HASH`.
    public var description: String { "\(seq):\(hash)" }
}

/// The result of recomputing the audit chain.
public struct AuditVerification: Sendable, Hashable, Codable {
    /// True when every row, the chain, the triggers and the checkpoint (if given) check out.
    public let ok: Bool
    /// How many rows were checked.
    public let rowsChecked: Int
    /// The current head of the chain.
    public let head: AuditCheckpoint?
    /// The sequence number of the first bad row, when one is found.
    public let firstBadSeq: Int64?
    /// What is wrong, one sentence per problem (the first names the first bad row).
    public let problems: [String]
}

/// Filters for reading the audit log.
public struct AuditQuery: Sendable, Hashable {
    /// Only rows at or after this time (ISO-8601 text compares in time order).
    public var since: String?
    /// Only rows whose OS user or declared principal is this name.
    public var actor: String?
    /// Only rows whose target id is this; a plug-in id also matches its versions (`id@version`).
    public var target: String?
    /// At most this many rows, the newest.
    public var limit: Int?

    /// Creates a query.
    public init(since: String? = nil, actor: String? = nil, target: String? = nil, limit: Int? = nil) {
        self.since = since
        self.actor = actor
        self.target = target
        self.limit = limit
    }
}

/// The append-only, hash-chained audit log.
///
/// Each row's `hash` is `SHA-256(prev_hash ‖ "\n" ‖ canonical encoding of the row)`, hex, where the canonical
/// encoding is the line `plugboard-audit-v1` followed by the fields `seq, at, actor, on_behalf_of, action,
/// outcome, target_type, target_id, environment, reason, before_json, after_json`, each written as
/// `-\n` when NULL and `<UTF-8 byte length>:<bytes>\n` otherwise. The first row's `prev_hash` is 64 zeros.
/// The README shows how to recompute it with a few lines of Python.
public enum AuditLog {
    /// The `prev_hash` of the first row.
    public static let genesisHash = String(repeating: "0", count: 64)

    /// Appends `entry` inside the caller's transaction and returns the stored row's sequence and hash.
    @discardableResult
    public static func append(_ db: Database, actor: Actor, entry: AuditEntry, at: String = Timestamp.now()) throws -> AuditCheckpoint {
        let last = try Row.fetchOne(db, sql: "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")
        let seq: Int64 = (last?["seq"] ?? 0) + 1
        let prevHash: String = last?["hash"] ?? genesisHash
        let fields: [String?] = [
            String(seq), at, actor.osUser, actor.onBehalfOf, entry.action, entry.outcome.rawValue, entry.targetType,
            entry.targetID, entry.environment, entry.reason, entry.before?.canonicalText, entry.after?.canonicalText,
        ]
        let hash = chainHash(prevHash: prevHash, fields: fields)
        var values: [(any DatabaseValueConvertible)?] = [seq]
        values += fields.dropFirst().map { $0 as (any DatabaseValueConvertible)? }
        values += [prevHash, hash]
        try db.execute(
            sql: """
                INSERT INTO audit_log (seq, at, actor, on_behalf_of, action, outcome, target_type, target_id, environment,
                                       reason, before_json, after_json, prev_hash, hash)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: StatementArguments(values))
        return AuditCheckpoint(seq: seq, hash: hash)
    }

    /// The hash of a row given the previous row's hash and the row's fields in canonical order.
    public static func chainHash(prevHash: String, fields: [String?]) -> String {
        var bytes = Data(prevHash.utf8)
        bytes.append(contentsOf: "\nplugboard-audit-v1\n".utf8)
        for field in fields {
            if let field {
                let utf8 = Data(field.utf8)
                bytes.append(contentsOf: "\(utf8.count):".utf8)
                bytes.append(utf8)
                bytes.append(UInt8(ascii: "\n"))
            } else {
                bytes.append(contentsOf: "-\n".utf8)
            }
        }
        return SHA256.hex(bytes)
    }

    /// The fields of a stored row in canonical order.
    static func fields(of record: AuditRecord) -> [String?] {
        [
            String(record.seq), record.at, record.actor, record.onBehalfOf, record.action, record.outcome, record.targetType,
            record.targetID, record.environment, record.reason, record.beforeJSON, record.afterJSON,
        ]
    }

    /// The triggers that make the table append-only.
    static let requiredTriggers = ["audit_log_no_update", "audit_log_no_delete"]

    /// Recomputes the whole chain, checks the append-only triggers, and, when given, the checkpoint.
    public static func verify(_ db: Database, checkpoint: AuditCheckpoint? = nil) throws -> AuditVerification {
        var problems: [String] = []
        var firstBad: Int64?
        func fail(_ seq: Int64?, _ message: String) {
            if firstBad == nil, let seq { firstBad = seq }
            problems.append(message)
        }

        var expectedSeq: Int64 = 1
        var expectedPrev = genesisHash
        var count = 0
        var hashes: [Int64: String] = [:]
        let cursor = try Row.fetchCursor(db, sql: "SELECT * FROM audit_log ORDER BY seq")
        while let row = try cursor.next() {
            let record = AuditRecord(row: row)
            count += 1
            if record.seq != expectedSeq {
                if record.seq > expectedSeq {
                    let missing = expectedSeq == record.seq - 1 ? "row \(expectedSeq) is" : "rows \(expectedSeq)-\(record.seq - 1) are"
                    fail(expectedSeq, "audit \(missing) missing before row \(record.seq): rows were deleted")
                } else {
                    fail(record.seq, "audit row \(record.seq) is out of order")
                }
            }
            if record.prevHash != expectedPrev {
                fail(
                    record.seq,
                    "audit row \(record.seq) does not chain to the row before it (prev_hash differs): a row was deleted, inserted or reordered"
                )
            }
            if chainHash(prevHash: record.prevHash, fields: fields(of: record)) != record.hash {
                fail(record.seq, "audit row \(record.seq) was edited: its content does not match its hash")
            }
            hashes[record.seq] = record.hash
            expectedSeq = record.seq + 1
            expectedPrev = record.hash
        }
        let head: AuditCheckpoint? = count == 0 ? nil : AuditCheckpoint(seq: expectedSeq - 1, hash: expectedPrev)

        let triggers = try Set(String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_log'"))
        for name in requiredTriggers where !triggers.contains(name) {
            fail(nil, "the append-only trigger \(name) on audit_log was dropped: the table can be edited behind the CLI's back")
        }

        if let checkpoint {
            if let stored = hashes[checkpoint.seq] {
                if stored != checkpoint.hash {
                    fail(
                        checkpoint.seq,
                        "audit row \(checkpoint.seq) does not match the checkpoint: the log was rewritten after the checkpoint was taken")
                }
            } else if checkpoint.seq > 0 {
                fail(
                    checkpoint.seq,
                    "audit row \(checkpoint.seq) of the checkpoint is gone: the log was truncated (it now ends at row \(head?.seq ?? 0))")
            }
        }
        return AuditVerification(ok: problems.isEmpty, rowsChecked: count, head: head, firstBadSeq: firstBad, problems: problems)
    }

    /// Reads audit rows matching `query`, oldest first.
    public static func fetch(_ db: Database, query: AuditQuery) throws -> [AuditRecord] {
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

extension Board {
    /// Recomputes the audit chain (see ``AuditLog/verify(_:checkpoint:)``).
    public func verifyAudit(checkpoint: AuditCheckpoint? = nil) throws(BoardError) -> AuditVerification {
        try read { db in try AuditLog.verify(db, checkpoint: checkpoint) }
    }

    /// The current head of the audit chain, or nil for an empty log.
    public func auditCheckpoint() throws(BoardError) -> AuditCheckpoint? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")
                .map { AuditCheckpoint(seq: $0["seq"], hash: $0["hash"]) }
        }
    }

    /// Audit rows matching `query`, oldest first.
    public func auditRecords(_ query: AuditQuery) throws(BoardError) -> [AuditRecord] {
        try read { db in try AuditLog.fetch(db, query: query) }
    }

    /// Runs a change in one transaction; if it is refused as not allowed or not found, records the refused
    /// attempt in the audit log (in a transaction of its own) and rethrows. Invalid input is not recorded:
    /// it leaves the board byte-for-byte unchanged.
    public func change<T>(_ actor: Actor, refusal: AuditEntry, _ body: (Database) throws -> T) throws(BoardError) -> T {
        do {
            return try write(body)
        } catch  where error.code == .notAllowed || error.code == .notFound {
            var entry = refusal
            entry.outcome = .refused
            entry.reason = error.message
            _ = try? write { db in try AuditLog.append(db, actor: actor, entry: entry) }
            throw error
        }
    }
}
