import Crypto
import Foundation
import GRDB
package import PlugboardModel

/// The state of the rows a change touches: each row (table and key, as the state proof names it) with the digest it
/// had before the change (`-` for a row that did not exist).
package struct ChangeBase: Sendable, Hashable {
    /// `table<TAB>key` → digest or `-`.
    package let rows: [String: String]

    package init(rows: [String: String]) { self.rows = rows }

    /// Sorted lines `table<TAB>key<TAB>digest`: what the board stores.
    package var text: String { rows.keys.sorted().map { "\($0)\t\(rows[$0] ?? "-")" }.joined(separator: "\n") }

    /// The SHA-256 (hex) of ``text``: what an approval names.
    package var digest: String { SHA256Hex.of(text) }

    /// A stored base.
    package init(text: String) {
        var rows: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3 { rows["\(parts[0])\t\(parts[1])"] = String(parts[2]) }
        }
        self.rows = rows
    }

    /// The rows whose state differs between `self` and `other`, for people (`plugin_environments com.example.pay/production`).
    package func moved(to other: ChangeBase) -> [String] {
        Set(rows.keys).union(other.rows.keys).filter { rows[$0] != other.rows[$0] }.sorted().map { key in
            let parts = key.split(separator: "\t", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return key }
            return "\(parts[0]) \(StateEntity(table: parts[0], key: parts[1]).readableKey)"
        }
    }
}

/// What a rehearsal of an operation found: the audit entries it would write and the state of the rows it touches.
package struct Rehearsal: Sendable {
    package let rows: [ChangeRow]
    package let base: ChangeBase
}

/// How a change request is applied: which request, who applies it, and whether as an emergency.
package enum ChangeApplication: Sendable {
    /// An approved request: its number and who applies it (the last approver, the author, or the schedule).
    case approved(id: Int64, by: String)
    /// A protected change applied at once by an admin, without approvals: the request to record, and why.
    case emergency(NewChangeRequest, reason: String)
}

/// A change request about to be opened: the operation as the API carries it, and what the policy asks of it.
package struct NewChangeRequest: Sendable {
    package let operation: String
    package let body: String
    package let environment: String?
    package let summary: String
    package let required: Int
    package let signed: Bool
    package let authorApplies: Bool

    /// SHA-256 (hex) of `plugboard-change-v1\n` + operation + `\n` + body.
    package var digest: String { ChangeDigest.of(operation: operation, body: body) }

    /// A value with each stored property given.
    package init(operation: String, body: String, environment: String?, summary: String, required: Int, signed: Bool, authorApplies: Bool) {
        self.operation = operation
        self.body = body
        self.environment = environment
        self.summary = summary
        self.required = required
        self.signed = signed
        self.authorApplies = authorApplies
    }
}

/// The digest of a change: what approvals name, and approvers sign.
package enum ChangeDigest {
    package static func of(operation: String, body: String) -> String {
        ApprovalStatement.changeDigest(operation: operation, body: body)
    }
}

/// What the first audited change of an operation does besides its own work, when the operation runs on the board that
/// ``Board/rehearse(_:)`` or ``Board/applying(_:_:)`` hands it (``Board/changeHook``), read by
/// ``Board/change(_:refusal:requiring:_:)``. An operation performed on any other board is never a rehearsal.
final class ChangeHook: @unchecked Sendable {
    enum Mode {
        case rehearse
        case apply(ChangeApplication)
    }

    /// The rehearsal that ended the change (rolled back).
    struct Rehearsed: Error {}

    let mode: Mode
    /// Whether the operation's first audited change ran the hook; later changes of the same operation run plain.
    private(set) var fired = false
    private(set) var rehearsal: Rehearsal?
    /// The request applied, once recorded.
    private(set) var appliedID: Int64?

    init(_ mode: Mode) { self.mode = mode }

    /// Runs in `change`'s transaction after its body, before its audit rows are written.
    func run(_ change: AuditedChange) throws {
        fired = true
        let base = try Self.base(change.db)
        switch mode {
        case .rehearse:
            rehearsal = Rehearsal(rows: change.recordedEntries.map(\.changeRow), base: base)
            throw Rehearsed()
        case .apply(let application):
            appliedID = try ChangeRecords.apply(application, base: base, rows: change.recordedEntries.count, change)
        }
    }

    /// The state before this change of every row it touched, from the state proof's index.
    static func base(_ db: Database) throws -> ChangeBase {
        var rows: [String: String] = [:]
        for entity in try StateQueries.touched(db) where !ChangeRecords.ownTables.contains(entity.table) {
            rows["\(entity.table)\t\(entity.key)"] = try StateQueries.indexedDigest(db, entity) ?? "-"
        }
        return ChangeBase(rows: rows)
    }
}

extension AuditEntry {
    var changeRow: ChangeRow {
        ChangeRow(
            action: action.name, targetType: targetType, targetID: targetID, environment: environment, before: before?.canonicalText,
            after: after?.canonicalText)
    }
}

/// SHA-256 of a text, in lower-case hex.
enum SHA256Hex {
    static func of(_ text: String) -> String { SHA256.hex(Data(text.utf8)) }
}
