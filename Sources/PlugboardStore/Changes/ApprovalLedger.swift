import Foundation
import GRDB
package import PlugboardModel

/// Which audited actions start or widen what runs, and where: what `audit verify` holds to the approval policies.
package struct WideningActions: Sendable {
    /// Action → whether it widens board-wide (true) or in its row's environment (false).
    package let actions: [AuditAction: Bool]

    package init(_ actions: [AuditAction: Bool]) { self.actions = actions }
}

/// Replays the audit log's approval policies, change requests and approvals, and names every change that widened what
/// runs in a protected environment without the approvals its policy required at that time: a row no change request
/// covers (no `change.apply` or `change.emergency` row of the same change), or a request applied with fewer approvals
/// than required by people other than its author's person (the `person` its audit rows name), each counted once.
enum ApprovalLedger {
    private struct Request {
        var author: String
        /// The person behind the author (the `person` its `change.open` row names, else the author).
        var person: String
        var digest: String
        var environment: String?
        /// Principal → the digest approved and the person behind the approval.
        var approvals: [String: (digest: String, person: String)] = [:]

        /// The people other than the author's person who approved `digest`, each counted once.
        var approvers: Int {
            Set(approvals.filter { $0.key != author && $0.value.digest == digest && $0.value.person != person }.map { $0.value.person })
                .count
        }
    }

    static func problems(_ db: Database, widening: WideningActions) throws -> [String] {
        // A board never protected has no approval policy row (a row set back to 0 stays; the state proof holds the table
        // to the log), and nothing to replay.
        guard !widening.actions.isEmpty, try db.tableExists("approval_policies"),
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM approval_policies)")) == true
        else { return [] }
        var policies: [String: Int] = [:]
        var requests: [String: Request] = [:]
        var uncovered: [Int64: (what: String, needed: Int)] = [:]
        var problems: [String] = []
        let replayed = Array(widening.actions.keys) + [.policySet, .changeOpen, .changeApprove, .changeApply, .changeEmergency]
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT seq, actor, action, target_type, target_id, environment, before_json, after_json FROM audit_log
                WHERE outcome = 'ok' AND action IN (SELECT value FROM json_each(?)) ORDER BY seq
                """, arguments: [AuditAction.jsonList(replayed)])
        func object(_ text: String?) -> [String: Any] {
            text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
        }
        func required(_ environment: String?) -> Int {
            if let environment { return policies[environment] ?? 0 }
            return policies.values.max() ?? 0
        }
        func scope(_ environment: String?) -> String { environment.map { "in \($0)" } ?? "board-wide" }
        while let row = try rows.next() {
            let seq: Int64 = row["seq"]
            guard let action = AuditAction(stored: row["action"]) else { continue }
            let environment: String? = row["environment"]
            let targetID: String = row["target_id"] ?? ""
            let after = object(row["after_json"])
            switch action {
            case .changeOpen:
                let author: String = row["actor"]
                requests[targetID] = Request(
                    author: author, person: after["person"] as? String ?? author, digest: after["digest"] as? String ?? "",
                    environment: environment)
            case .changeApprove:
                let approver: String = row["actor"]
                requests[targetID]?.approvals[approver] = (after["digest"] as? String ?? "", after["person"] as? String ?? approver)
            case .changeApply, .changeEmergency:
                let count = (after["rows"] as? Int) ?? 0
                for covered in max(1, seq - Int64(count))..<seq { uncovered[covered] = nil }
                guard action == .changeApply else { break }
                let needed = required(environment)
                let approvers = requests[targetID]?.approvers ?? 0
                if approvers < needed {
                    problems.append(
                        "audit row \(seq) applied change request \(targetID) \(scope(environment)) with \(approvers) of the \(needed) approvals its policy required"
                    )
                }
            case .advisorySetAction:
                // Only a loosening of what hosts do waits for approvals.
                let needed = required(environment)
                if Self.rank(after["effective"]) < Self.rank(object(row["before_json"])["effective"]), needed > 0 {
                    uncovered[seq] = (action.name + " " + scope(environment), needed)
                }
            case .advisoryImport:
                // Only a text that lets hosts run more (its row says why) waits for approvals, board-wide.
                let needed = required(nil)
                if after["loosens"] is String, needed > 0 { uncovered[seq] = (action.name + " " + scope(nil), needed) }
            default:
                let needed = required(widening.actions[action] == true ? nil : environment)
                if action == .policySet {
                    let before = object(row["before_json"])
                    if (row["target_type"] as String?) == "approval_policy", let environment, let approvals = after["approvals"] as? Int {
                        let approvers = (before["approvers"] as? String ?? "default", after["approvers"] as? String ?? "default")
                        if approvals < ((before["approvals"] as? Int) ?? 0)
                            || (after["signed_approvals"] as? String == "off" && before["signed_approvals"] as? String == "require")
                            || ApprovalRights.loosens(from: approvers.0, to: approvers.1)
                        {
                            if needed > 0 { uncovered[seq] = (action.name + " " + scope(environment), needed) }
                        }
                        policies[environment] = approvals
                        continue
                    }
                    func strictness(_ object: [String: Any]) -> Int {
                        (object["signatures"] as? String).flatMap(SignaturePolicy.init(rawValue:))?.strictness
                            ?? Self.rank(object["advisories"])
                    }
                    let loosened = strictness(after) < strictness(before)
                    if loosened, needed > 0 { uncovered[seq] = (action.name + " " + scope(environment), needed) }
                    continue
                }
                if needed > 0 { uncovered[seq] = (action.name + " " + scope(widening.actions[action] == true ? nil : environment), needed) }
            }
        }
        for (seq, row) in uncovered.sorted(by: { $0.key < $1.key }) {
            problems.append(
                "audit row \(seq), \(row.what), was applied without the \(row.needed) approvals its policy required: no approved change request covers it"
            )
        }
        return problems
    }

    /// An advisory action's place from the mildest (0, also for none) to the strictest.
    private static func rank(_ value: Any?) -> Int {
        (value as? String).flatMap(AdvisoryAction.init(rawValue:)).flatMap { AdvisoryAction.allCases.firstIndex(of: $0) } ?? 0
    }
}
