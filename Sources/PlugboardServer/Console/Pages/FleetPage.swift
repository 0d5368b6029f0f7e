import Foundation
import PlugboardModel
import PlugboardOperations

/// `/ui/fleet`: every host that reported, 25 a page, with where it reads the board, its last report and what it
/// loaded and skipped; filtered by plug-in, version and host.
struct FleetPage: ConsoleView {
    static let template = "fleet"

    let plugin: String
    let version: String
    let filtered: Bool
    /// `N hosts`.
    let hostCount: String
    let next: String?
    let hosts: [Host]

    /// One host.
    struct Host: Sendable {
        let hostID: String
        /// The host's id as an element id's part.
        let anchor: String
        let environment: String
        let source: String
        let reportedAt: String
        let hostVersion: String
        let stale: Bool
        let entries: [Entry]
    }

    /// What a host reported of one plug-in.
    struct Entry: Sendable {
        let pluginID: String
        let href: String
        let version: String
        let state: String
        let reason: String
    }

    /// The hosts one page of the fleet shows.
    static let hostsPerPage = 25

    static func read(_ reads: ConsoleReads) throws -> FleetPage {
        let page = reads.page
        let escape = ConsolePages.escape
        let plugin = try page.value("plugin").map { text throws(BoardError) in try PluginID(validating: text) }
        let version = page.value("version")
        let host = page.value("host")
        // The hosts that reported (the plug-in, when one is asked for), a page at a time; then their reports.
        var reporting = try reads.reportingHosts(pluginID: plugin?.text).map(\.hostID)
        if let host { reporting = reporting.filter { $0 == host } }
        if let version, let plugin {
            let running = try reads.perform(PluginOperations.Status(id: plugin)).filter { $0.version == version }
            let hosts = Set(running.map(\.hostID))
            reporting = reporting.filter { hosts.contains($0) }
        }
        let after = page.value("after")
        let remaining = after.map { after in reporting.filter { $0 > after } } ?? reporting
        let shown = Array(remaining.prefix(hostsPerPage))
        let rows = shown.isEmpty ? [] : try reads.loadStatus(pluginID: plugin?.text, hosts: Set(shown))
        var next: String?
        if remaining.count > hostsPerPage, let last = shown.last {
            var query = ["after=\(escape(last))"]
            if let plugin { query.append("plugin=\(escape(plugin.text))") }
            if let version { query.append("version=\(escape(version))") }
            next = "/ui/fleet?" + query.joined(separator: "&")
        }
        let now = Date()
        return FleetPage(
            plugin: plugin?.text ?? "", version: version ?? "", filtered: plugin != nil || version != nil || host != nil,
            hostCount: reporting.count == 1 ? "1 host" : "\(reporting.count) hosts", next: next,
            hosts: ConsolePages.hostsByReport(rows).map { host in
                Host(
                    hostID: host.hostID, anchor: escape(host.hostID), environment: host.environment, source: host.source,
                    reportedAt: host.reportedAt, hostVersion: host.hostVersion, stale: ConsolePages.isStale(host.reportedAt, now),
                    entries: host.entries.map { entry in
                        Entry(
                            pluginID: entry.pluginID, href: ConsolePages.link("/ui/plugins", entry.pluginID, env: entry.environment),
                            version: entry.version ?? "–", state: entry.state.rawValue, reason: entry.reason ?? entry.warning ?? "")
                    })
            })
    }
}
