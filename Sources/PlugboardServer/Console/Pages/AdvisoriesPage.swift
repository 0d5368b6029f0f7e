import PlugboardModel
import PlugboardOperations

/// `/ui/advisories`: the board's advisories, each with its severity, its action in every environment, the registered
/// releases it affects and the hosts that run one of them; and, for each plug-in that hosts run an affected release
/// of, the fix and the command that brings it (`plugboard advisory exposure`). Read-only: advisories are imported,
/// and their actions chosen, with the CLI or the API.
struct AdvisoriesPage: ConsoleView {
    static let template = "advisories"

    /// The most advisories the page shows, standing ones first.
    static let limit = 100

    let advisories: [Advisory]
    /// Each plug-in of an environment whose hosts run an affected release.
    let exposures: [Exposure]
    /// What the page leaves out, when there are more than ``limit`` advisories.
    let more: String?

    /// One advisory, in the words the template shows.
    struct Advisory: Sendable {
        let id: String
        /// The id as an element id's part.
        let anchor: String
        let severity: String
        let summary: String
        /// `standing`, or when it was withdrawn.
        let state: String
        let aliases: [String]
        let affects: [Affect]
        /// Its action in each environment (none while it is withdrawn).
        let actions: [Action]
        /// Each host that runs a release it affects, as a sentence.
        let hosts: [String]
    }

    /// What an advisory affects in one plug-in.
    struct Affect: Sendable {
        let pluginID: String
        let href: String
        let ranges: String
        /// The registered releases its ranges cover, or `none`.
        let versions: String
    }

    /// An advisory's action in one environment, and where it comes from.
    struct Action: Sendable {
        let environment: String
        let action: String
        /// `chosen`, `its severity`, or `the floor`.
        let source: String
    }

    /// One plug-in in one environment whose hosts run an affected release, and its fix.
    struct Exposure: Sendable {
        let environment: String
        let pluginID: String
        let href: String
        /// Each host with the release it runs.
        let hosts: String
        /// The fix's release, or why there is none.
        let fix: String
        /// The command that brings it, or `-`.
        let command: String
    }

    static func read(_ reads: ConsoleReads) throws -> AdvisoriesPage {
        let listed = try reads.perform(AdvisoryOperations.List(affecting: false))
        let standing = listed.filter { $0.withdrawn == nil } + listed.filter { $0.withdrawn != nil }
        let exposures = try reads.perform(AdvisoryOperations.Exposure(id: nil, env: nil))
        let shown = try standing.prefix(limit).map { summary in
            let detail = try reads.perform(AdvisoryOperations.Show(id: try AdvisoryID(validating: summary.id)))
            return Advisory(
                id: detail.id, anchor: ConsolePages.escape(detail.id), severity: detail.severity.rawValue,
                summary: detail.summary ?? "no summary", state: detail.withdrawn.map { "withdrawn \($0)" } ?? "standing",
                aliases: detail.aliases,
                affects: detail.plugins.map { plugin in
                    Affect(
                        pluginID: plugin.pluginID, href: ConsolePages.link("/ui/plugins", plugin.pluginID),
                        ranges: plugin.ranges.map(\.text).joined(separator: "; "),
                        versions: plugin.affectedVersions.isEmpty ? "none" : plugin.affectedVersions.joined(separator: ", "))
                },
                actions: detail.actions.map { action in
                    let source =
                        action.floor.map { $0 == action.action && action.chosen != action.action } == true
                        ? "the floor of \(action.environment)" : action.chosen == nil ? "its severity" : "chosen"
                    return Action(environment: action.environment, action: action.action.rawValue, source: source)
                },
                hosts: exposures.flatMap { exposure in
                    exposure.hosts.filter { $0.advisories.contains(detail.id) }.map {
                        "\($0.hostID) in \(exposure.environment) runs \(exposure.pluginID)@\($0.version) (\($0.action.rawValue))"
                    }
                })
        }
        return AdvisoriesPage(
            advisories: shown,
            exposures: exposures.map { exposure in
                Exposure(
                    environment: exposure.environment, pluginID: exposure.pluginID,
                    href: ConsolePages.link("/ui/plugins", exposure.pluginID, env: exposure.environment),
                    hosts: exposure.hosts.map { "\($0.hostID) (\($0.version))" }.joined(separator: ", "),
                    fix: exposure.fix.map { $0 + (exposure.fixIsLower ? ", lower than what runs" : "") } ?? "none: \(exposure.note ?? "")",
                    command: exposure.command.map { $0 + (exposure.opensChangeRequest ? " (opens a change request)" : "") } ?? "-")
            },
            more: listed.count > limit
                ? "The page shows \(limit) of \(listed.count) advisories; plugboard advisory list shows every one." : nil)
    }
}
