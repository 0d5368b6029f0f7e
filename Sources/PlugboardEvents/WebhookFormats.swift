import Foundation
import PlugboardModel

/// The chat and monitoring formats: a Slack incoming webhook's blocks, a Microsoft Teams Adaptive Card message, and a
/// Datadog Events API event. Each names the target, the reason and the person, and links to the console.
enum WebhookFormats {
    /// Whether the row stopped something (a kill switch thrown, a rollout aborted): sent first, shown as an alert.
    static func isStop(_ row: AuditRecord) -> Bool {
        row.outcome == "ok" && (row.action == AuditAction.pluginKill.name || row.action == AuditAction.rolloutAbort.name)
    }

    static func facts(_ row: AuditRecord) -> [(String, String)] {
        var facts: [(String, String)] = [("Action", row.action)]
        if let target = row.targetID { facts.append((row.targetType == "plugin" ? "Plug-in" : "Target", target)) }
        if let environment = row.environment { facts.append(("Environment", environment)) }
        facts.append(("By", row.onBehalfOf.map { "\($0) (as \(row.by))" } ?? row.by))
        if let reason = row.reason { facts.append(("Reason", reason)) }
        facts.append(("Audit seq", String(row.seq)))
        return facts
    }

    /// Slack: a header line and the facts in blocks, with a button to the console page.
    static func slack(_ row: AuditRecord, link: String?, summary: String) -> [String: Any] {
        let lines = facts(row).map { "*\($0.0):* \(escapeSlack($0.1))" }.joined(separator: "\n")
        var blocks: [[String: Any]] = [
            [
                "type": "section",
                "text": ["type": "mrkdwn", "text": (isStop(row) ? ":rotating_light: " : "") + "*\(escapeSlack(summary))*"],
            ],
            ["type": "section", "text": ["type": "mrkdwn", "text": lines]],
        ]
        if let link {
            blocks.append([
                "type": "actions",
                "elements": [["type": "button", "text": ["type": "plain_text", "text": "Open in the console"], "url": link]],
            ])
        }
        return ["text": summary, "blocks": blocks]
    }

    /// Microsoft Teams: a message with one Adaptive Card (a workflow's "post to a channel when a webhook request is
    /// received", or an incoming webhook).
    static func teams(_ row: AuditRecord, link: String?, summary: String) -> [String: Any] {
        var card: [String: Any] = [
            "$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard", "version": "1.4",
            "body": [
                ["type": "TextBlock", "text": summary, "weight": "Bolder", "wrap": true, "color": isStop(row) ? "Attention" : "Default"],
                ["type": "FactSet", "facts": facts(row).map { ["title": $0.0, "value": $0.1] }],
            ],
        ]
        if let link { card["actions"] = [["type": "Action.OpenUrl", "title": "Open in the console", "url": link]] }
        return [
            "type": "message",
            "attachments": [["contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": NSNull(), "content": card]],
        ]
    }

    /// Datadog's Events API (v1 `POST /api/v1/events`): title, text, alert type, tags and an aggregation key.
    static func datadog(_ row: AuditRecord, link: String?, summary: String) -> [String: Any] {
        var tags = ["source:plugboard", "action:\(row.action)"]
        if let environment = row.environment { tags.append("env:\(environment)") }
        if row.targetType == "plugin", let target = row.targetID { tags.append("plugin:\(target)") }
        var text = facts(row).map { "\($0.0): \($0.1)" }.joined(separator: "\n")
        if let link { text += "\n\(link)" }
        var event: [String: Any] = [
            "title": String(summary.prefix(100)), "text": text, "source_type_name": "plugboard", "tags": tags,
            "alert_type": isStop(row) ? "error" : (row.outcome == "ok" ? "info" : "warning"),
            "aggregation_key": "\(row.targetType):\(row.targetID ?? "")",
        ]
        if let date = Timestamp.parse(row.at) { event["date_happened"] = Int(date.timeIntervalSince1970) }
        return event
    }

    static func escapeSlack(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;")
    }
}
