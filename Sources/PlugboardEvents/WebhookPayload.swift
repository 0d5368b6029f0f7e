package import Foundation
package import PlugboardModel

/// The body of one event, in an endpoint's format.
///
/// The Standard Webhooks body carries the audit row with its place in the hash chain (`seq`, `prev_hash`, `hash`,
/// `state_root`), so that a receiver that keeps the last hash it saw detects a missing or edited row. It carries the
/// row's `before` and `after` too, unless the body would then reach ``limit``: it is then sent thin (`"thin": true`),
/// and the whole row is `plugboard audit --json` away.
package struct WebhookPayload: Sendable {
    /// The most bytes a body has.
    package static let limit = 20 * 1024

    /// The board's id: the first half of `webhook-id`.
    package let boardID: String
    /// The console's address (`https://plugboard.example.com`), for links; nil for none.
    package let consoleURL: String?

    /// A payload maker.
    package init(boardID: String, consoleURL: String?) {
        self.boardID = boardID
        self.consoleURL = consoleURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    }

    /// The `webhook-id` of a row: `BOARD:SEQ`, the same at every attempt.
    package func id(_ row: AuditRecord) -> String { "\(boardID):\(row.seq)" }

    /// The console's page of the row's target: the plug-in, the flag or the change request, else the audit log.
    package func link(_ row: AuditRecord) -> String? {
        guard let consoleURL else { return nil }
        let id = (row.targetID ?? "").split(separator: "@").first.map(String.init) ?? ""
        let escaped = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? ""
        switch row.targetType {
        case "plugin" where !id.isEmpty: return "\(consoleURL)/ui/plugins/\(escaped)"
        case "flag" where !id.isEmpty: return "\(consoleURL)/ui/flags/\(escaped)"
        case "change" where !id.isEmpty: return "\(consoleURL)/ui/changes/\(escaped)"
        case "rollout": return "\(consoleURL)/ui/rollouts"
        default: return "\(consoleURL)/ui/audit"
        }
    }

    /// The body of `row` in `format`.
    package func body(_ row: AuditRecord, format: WebhookFormat) -> Data {
        let object: [String: Any] =
            switch format {
            case .standard: standard(row)
            case .slack: WebhookFormats.slack(row, link: link(row), summary: summary(row))
            case .teams: WebhookFormats.teams(row, link: link(row), summary: summary(row))
            case .datadog: WebhookFormats.datadog(row, link: link(row), summary: summary(row))
            }
        return Self.encode(object)
    }

    /// Standard Webhooks' envelope: `type`, `timestamp` and the row as `data`.
    func standard(_ row: AuditRecord) -> [String: Any] {
        var data: [String: Any] = [
            "board": boardID, "seq": row.seq, "prev_hash": row.prevHash, "hash": row.hash, "state_root": row.stateRoot ?? NSNull(),
            "action": row.action, "outcome": row.outcome, "target_type": row.targetType, "target_id": row.targetID ?? NSNull(),
            "environment": row.environment ?? NSNull(), "actor": row.by, "on_behalf_of": row.onBehalfOf ?? NSNull(),
            "via": row.via ?? NSNull(), "reason": row.reason ?? NSNull(), "at": row.at, "console_url": link(row) ?? NSNull(),
        ]
        var envelope: [String: Any] = ["type": row.action, "timestamp": row.at]
        envelope["data"] = data
        let thin = Self.encode(envelope).count
        data["before"] = Self.json(row.beforeJSON)
        data["after"] = Self.json(row.afterJSON)
        envelope["data"] = data
        if Self.encode(envelope).count >= Self.limit {
            data["before"] = nil
            data["after"] = nil
            data["thin"] = true
            envelope["data"] = data
            // A row whose own fields exceed the limit (a long reason) keeps its chain fields and the reason's start.
            if thin >= Self.limit, let reason = row.reason { data["reason"] = String(reason.prefix(1024)) }
            envelope["data"] = data
        }
        return envelope
    }

    /// One sentence: who did what to which target, where and why.
    package func summary(_ row: AuditRecord) -> String {
        let who = row.onBehalfOf.map { "\($0) (as \(row.by))" } ?? row.by
        let target = row.targetID.map { " \($0)" } ?? ""
        let place = row.environment.map { " in \($0)" } ?? ""
        let why = row.reason.map { ": \($0)" } ?? ""
        let refused = row.outcome == "ok" ? "" : " (refused)"
        switch row.outcome == "ok" ? row.action : "" {
        case AuditAction.pluginKill.name: return "Kill switch: \(who) killed\(target)\(place)\(why)"
        case AuditAction.rolloutAbort.name:
            return "Rollout aborted\(target.isEmpty ? "" : " for" + target)\(place) by \(who)\(why)"
        default: return "\(who) \(row.action)\(target)\(place)\(refused)\(why)"
        }
    }

    static func json(_ text: String?) -> Any {
        guard let text, let data = text.data(using: .utf8),
            let value = try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
        else { return NSNull() }
        return value
    }

    static func encode(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }
}
