import Foundation
import PlugboardModel
import PlugboardOperations

/// `/ui/`: what waits for the person, whether the audit log verifies, the active kill switches, the hosts, the
/// environments, the last changes and the webhook endpoints failing for a day.
struct OverviewPage: ConsoleView {
    static let template = "overview"

    /// What waits for the person (``WaitingSection``), or nothing on a board that protects no environment.
    let waiting: String
    let verification: VerificationView
    let kills: [Kill]
    let hostsUp: Int
    let hostsStale: Int
    let freshMinutes: Int
    /// Each environment, linked to its page of plug-ins.
    let environments: [LinkedRow<String>]
    let changes: [AuditRowView]
    /// Webhook endpoints that have failed for a day or more.
    var failingWebhooks: [WebhookEndpoint] = []

    /// An active kill switch.
    struct Kill: Sendable {
        let kill: KillSwitch
        /// What it covers, as people read it.
        let target: String
        /// The plug-in's page, when it covers one plug-in.
        let pluginHref: String?
    }

    static func read(_ reads: ConsoleReads) throws -> OverviewPage {
        let verification = try reads.verification()
        let kills = try reads.killSwitches().map { kill in
            Kill(
                kill: kill, target: kill.target?.description ?? kill.scope,
                pluginHref: kill.pluginID.map { ConsolePages.link("/ui/plugins", $0) })
        }
        let hosts = try reads.reportingHosts()
        let now = Date()
        let stale = hosts.filter { ConsolePages.isStale($0.reportedAt, now) }.count
        let changes = try reads.perform(BoardOperations.Audit(since: nil, actor: nil, target: nil, limit: 10, after: nil))
        return OverviewPage(
            waiting: try WaitingSection.read(reads).map(ConsoleTemplates.render) ?? "", verification: verification,
            kills: kills, hostsUp: hosts.count - stale, hostsStale: stale,
            freshMinutes: Int(ConsolePages.staleAfter / 60),
            environments: try reads.environments().map { LinkedRow(item: $0, href: "/ui/plugins?env=" + ConsolePages.escape($0)) },
            changes: changes.records.reversed().map(AuditRowView.init),
            failingWebhooks: try reads.perform(WebhookOperations.List()).filter { $0.enabled && $0.failing })
    }
}
