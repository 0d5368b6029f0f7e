import Crypto
import Foundation
import GRDB

/// The append-only, hash-chained audit log.
///
/// Each row's `hash` is `SHA-256(prev_hash ‖ "\n" ‖ canonical encoding of the row)`, hex, where the canonical
/// encoding is the line `plugboard-audit-v1` followed by the fields `seq, at, actor, on_behalf_of, action,
/// outcome, target_type, target_id, environment, reason, before_json, after_json`, each written as
/// `-\n` when NULL and `<UTF-8 byte length>:<bytes>\n` otherwise. The first row's `prev_hash` is 64 zeros.
/// The store's DocC article "Reading the board" shows how to recompute it with a few lines of Python.
public enum AuditLog {
    /// The `prev_hash` of the first row.
    public static let genesisHash = String(repeating: "0", count: 64)

    /// Appends `entry` inside the caller's transaction and returns the stored row's sequence and hash. Only
    /// ``AuditedChange/record(_:)`` and the migration runner call it.
    @discardableResult
    static func append(_ db: Database, actor: Principal, entry: AuditEntry, at: String = Timestamp.now()) throws -> AuditCheckpoint {
        let last = try AuditQueries.head(db)
        let seq = (last?.seq ?? 0) + 1
        let prevHash = last?.hash ?? genesisHash
        let fields: [String?] = [
            String(seq), at, actor.osUser, actor.onBehalfOf, entry.action, entry.outcome.rawValue, entry.targetType,
            entry.targetID, entry.environment, entry.reason, entry.before?.canonicalText, entry.after?.canonicalText,
        ]
        let hash = chainHash(prevHash: prevHash, fields: fields)
        try AuditQueries.insert(db, fields: fields, prevHash: prevHash, hash: hash)
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
    static func verify(_ db: Database, checkpoint: AuditCheckpoint? = nil) throws -> AuditVerification {
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
        try AuditQueries.forEachRecord(db) { record in
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

        let triggers = try AuditQueries.triggerNames(db)
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
}
