import Foundation
import PlugboardModel
import PlugboardOperations

/// `/ui/`: what waits for the person, whether the audit log verifies, the active kill switches, the hosts, the
/// environments and the last changes.
struct OverviewPage: ConsoleView {
    static let template = "overview"

    /// What waits for the person (``WaitingSection``), or nothing on a board that protects no environment.
    let waiting: String
    let verified: Bool
    let verification: String
    let kills: [Kill]
    let hasKills: Bool
    let killCount: Int
    let hostsUp: Int
    let hostsStale: Int
    let freshMinutes: Int
    let environments: [EnvironmentLink]
    let changes: [AuditRowView]

    /// An active kill switch.
    struct Kill: Sendable {
        let target: String
        /// The plug-in's page, when it covers one plug-in.
        let pluginHref: String?
        let reason: String
        let killedAt: String
        let killedBy: String
    }

    static func read(_ reads: ConsoleReads) throws -> OverviewPage {
        let (verified, verification) = try reads.verification()
        let kills = try reads.killSwitches().map { kill in
            Kill(
                target: kill.target?.description ?? kill.scope, pluginHref: kill.pluginID.map { ConsolePages.link("/ui/plugins", $0) },
                reason: kill.reason, killedAt: kill.killedAt, killedBy: kill.killedBy)
        }
        let hosts = try reads.reportingHosts()
        let now = Date()
        let stale = hosts.filter { ConsolePages.isStale($0.reportedAt, now) }.count
        let changes = try reads.perform(BoardOperations.Audit(since: nil, actor: nil, target: nil, limit: 10, after: nil))
        return OverviewPage(
            waiting: try WaitingSection.read(reads).map(ConsoleTemplates.render) ?? "", verified: verified, verification: verification,
            kills: kills, hasKills: !kills.isEmpty, killCount: kills.count, hostsUp: hosts.count - stale, hostsStale: stale,
            freshMinutes: Int(ConsolePages.staleAfter / 60),
            environments: try reads.environments().map { EnvironmentLink(name: $0, href: "/ui/plugins?env=" + ConsolePages.escape($0)) },
            changes: changes.records.reversed().map(ConsolePages.auditRow))
    }
}
