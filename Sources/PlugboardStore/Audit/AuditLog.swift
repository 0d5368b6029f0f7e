import Crypto
import Foundation
import GRDB
import PlugboardModel

/// The append-only, hash-chained audit log.
///
/// Each row's `hash` is `SHA-256(prev_hash ‖ "\n" ‖ canonical encoding of the row)`, hex, where the canonical
/// encoding is the line `plugboard-audit-v1` followed by the fields `seq, at, actor, on_behalf_of, action,
/// outcome, target_type, target_id, environment, reason, before_json, after_json`, each written as
/// `-\n` when NULL and `<UTF-8 byte length>:<bytes>\n` otherwise. The first row's `prev_hash` is 64 zeros.
/// Format v2 (`plugboard-audit-v2`) adds `state_changes, state_root`; format v3 (`plugboard-audit-v3`), for changes
/// made through the operations API, adds `via` after them.
/// The store's DocC article "Reading the board" shows how to recompute it with a few lines of Python.
package enum AuditLog {
    /// The `prev_hash` of the first row.
    package static let genesisHash = String(repeating: "0", count: 64)

    /// Appends `entry` inside the caller's transaction and returns the stored row's sequence and hash. Only
    /// ``AuditedChange`` and the refusal path of `Board.change` call it. With `state`, the row is written in chain format
    /// v2 and carries the change's state digests and the state root after it.
    @discardableResult
    static func append(
        _ db: Database, by actor: Principal, entry: AuditEntry, at: String = Timestamp.now(), state: (changes: String?, root: String)? = nil
    ) throws -> AuditCheckpoint {
        let last = try AuditQueries.lastLink(db)
        let seq = (last?.seq ?? 0) + 1
        let prevHash = last?.hash ?? genesisHash
        var fields: [String?] = [
            String(seq), at, actor.osUser, actor.onBehalfOf, entry.action.name, entry.outcome.rawValue, entry.targetType,
            entry.targetID, entry.environment, entry.reason, entry.before?.canonicalText, entry.after?.canonicalText,
        ]
        if let state { fields += [state.changes, state.root] }
        if let via = actor.via {
            if state == nil { fields += [nil, nil] }
            fields.append(via)
        }
        let hash = chainHash(prevHash: prevHash, fields: fields)
        try AuditQueries.insert(db, fields: fields, prevHash: prevHash, hash: hash)
        return AuditCheckpoint(seq: seq, hash: hash, stateRoot: state?.root)
    }

    /// The hash of a row given the previous row's hash and the row's fields in canonical order: 12 fields for chain
    /// format v1, 14 (with `state_changes` and `state_root`) for v2, 15 (then `via`) for v3.
    package static func chainHash(prevHash: String, fields: [String?]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        bytes.append(contentsOf: prevHash.utf8)
        let format =
            fields.count == 15 ? "\nplugboard-audit-v3\n" : fields.count == 14 ? "\nplugboard-audit-v2\n" : "\nplugboard-audit-v1\n"
        bytes.append(contentsOf: format.utf8)
        for field in fields {
            guard let field else {
                bytes.append(UInt8(ascii: "-"))
                bytes.append(10)
                continue
            }
            var text = field
            text.withUTF8 { utf8 in
                bytes.appendDecimal(Int64(utf8.count))
                bytes.append(UInt8(ascii: ":"))
                bytes.append(contentsOf: utf8)
            }
            bytes.append(10)
        }
        return SHA256.hash(data: bytes).hex
    }

    /// The fields of a stored row in canonical order: v2 when the row has a state root.
    static func fields(of record: AuditRecord) -> [String?] {
        let v1: [String?] = [
            String(record.seq), record.at, record.by, record.onBehalfOf, record.action, record.outcome, record.targetType,
            record.targetID, record.environment, record.reason, record.beforeJSON, record.afterJSON,
        ]
        if let via = record.via { return v1 + [record.stateChanges, record.stateRoot, via] }
        return record.stateRoot == nil ? v1 : v1 + [record.stateChanges, record.stateRoot]
    }

    /// Whether a stored row's hash matches its content.
    static func isIntact(_ record: AuditRecord) -> Bool {
        chainHash(prevHash: record.prevHash, fields: fields(of: record)) == record.hash
    }

    /// `sql` with every run of white space made one space, trimmed.
    /// ASCII white space only, byte by byte: it runs on every object of the schema at every check of a board.
    static func normalized(_ sql: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(sql.utf8.count)
        var pendingSpace = false
        for byte in sql.utf8 {
            if byte == 0x20 || (0x09...0x0D).contains(byte) {
                pendingSpace = !bytes.isEmpty
            } else {
                if pendingSpace { bytes.append(0x20) }
                pendingSpace = false
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Recomputes the whole chain, checks the append-only triggers, and, when given, the checkpoint and the approvals of
    /// changes that widened what runs in protected environments (``ApprovalLedger``).
    static func verify(_ db: Database, checkpoint: AuditCheckpoint? = nil, widening: WideningActions? = nil) throws -> AuditVerification {
        var problems: [String] = []
        var firstBad: Int64?
        func fail(_ seq: Int64?, _ message: String) {
            if firstBad == nil, let seq { firstBad = seq }
            problems.append(message)
        }

        var expectedSeq: Int64 = 1
        var expectedPrev = genesisHash
        var count = 0
        // The row of the checkpoint and the last row, as found (not a map of every row).
        var checkpointRow: (hash: String, root: String?)?
        var lastRowRoot: String?
        var expected: [StateEntity: String] = [:]
        var lastRoot: String?
        try AuditQueries.forEachChainRow(db) { record in
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
            if !record.contentMatchesHash {
                fail(record.seq, "audit row \(record.seq) was edited: its content does not match its hash")
            }
            if record.seq == checkpoint?.seq { checkpointRow = (record.hash, record.stateRoot) }
            lastRowRoot = record.stateRoot
            if let root = record.stateRoot {
                lastRoot = root
                if let text = record.stateChanges {
                    if let changes = StateDigest.parseChanges(text) {
                        for (entity, digest) in changes { expected[entity] = digest }
                    } else {
                        fail(record.seq, "audit row \(record.seq) has state digests that cannot be read")
                    }
                }
            } else if lastRoot != nil {
                fail(record.seq, "audit row \(record.seq) has no state root although the rows before it have one")
            }
            expectedSeq = record.seq + 1
            expectedPrev = record.hash
        }
        let head: AuditCheckpoint? =
            count == 0 ? nil : AuditCheckpoint(seq: expectedSeq - 1, hash: expectedPrev, stateRoot: lastRowRoot)

        // The structure first: a dropped or replaced table, index or trigger of the proof is tampering, never "a board
        // from before the proof".
        for problem in try SchemaProof.problems(db) { fail(nil, problem) }

        var stateRows = 0
        var stateRoot: String?
        if try StateQueries.isTracked(db) || lastRoot != nil || SchemaProof.appliedVersions(db).contains(StateQueries.proofMigration) {
            if lastRoot == nil {
                fail(nil, "the board has the state proof's tables but no audit row records a state root: its baseline row is missing")
            }
            // The root of the live rows, whatever the index beside them says (or whether it is there at all).
            let comparison = try StateLedger.compare(db, expected: expected, recordedRoot: lastRoot)
            stateRows = comparison.rows
            stateRoot = comparison.root
            for problem in comparison.problems { fail(nil, problem) }
        }

        if let checkpoint {
            if let stored = checkpointRow {
                if stored.hash != checkpoint.hash {
                    fail(
                        checkpoint.seq,
                        "audit row \(checkpoint.seq) does not match the checkpoint: the log was rewritten after the checkpoint was taken")
                }
                if let root = checkpoint.stateRoot, stored.root != root {
                    fail(
                        checkpoint.seq,
                        "the state root of audit row \(checkpoint.seq) does not match the checkpoint: the state was rewritten after the checkpoint was taken"
                    )
                }
            } else if checkpoint.seq > 0 {
                fail(
                    checkpoint.seq,
                    "audit row \(checkpoint.seq) of the checkpoint is gone: the log was truncated (it now ends at row \(head?.seq ?? 0))")
            }
        }
        if let widening { for problem in try ApprovalLedger.problems(db, widening: widening) { fail(nil, problem) } }
        return AuditVerification(
            ok: problems.isEmpty, rowsChecked: count, head: head, firstBadSeq: firstBad, problems: problems, stateRowsChecked: stateRows,
            stateRoot: stateRoot)
    }
}
