import Foundation
import PlugboardModel
import PlugboardOperations

/// `/ui/fleet`: every host that reported, 25 a page, with where it reads the board, its last report and what it
/// loaded and skipped; filtered by plug-in, version and host.
struct FleetPage: ConsoleView {
    static let template = "fleet"

    /// The request's query: the plug-in and the version asked for, shown again in the filter's form.
    let query: [String: String]
    let filtered: Bool
    /// `N hosts`.
    let hostCount: String
    let next: String?
    let hosts: [Host]

    /// One host, from its rows of load reports.
    struct Host: Sendable {
        /// Its last report: its id, environment and version, where it reads the board.
        let latest: HostLoadStatus
        /// The host's id as an element id's part.
        let anchor: String
        let stale: Bool
        /// What it reported of each plug-in, linked to the plug-in's page in the host's environment.
        let entries: [LinkedRow<HostLoadStatus>]

        init(_ rows: [HostLoadStatus], now: Date) {
            latest = rows.max { $0.reportedAt < $1.reportedAt } ?? rows[0]
            anchor = ConsolePages.escape(latest.hostID)
            stale = ConsolePages.isStale(latest.reportedAt, now)
            entries = rows.sorted { $0.pluginID < $1.pluginID }.map { row in
                LinkedRow(item: row, href: ConsolePages.link("/ui/plugins", row.pluginID, env: row.environment))
            }
        }
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
            query: page.query, filtered: plugin != nil || version != nil || host != nil,
            hostCount: reporting.count == 1 ? "1 host" : "\(reporting.count) hosts", next: next,
            hosts: Dictionary(grouping: rows, by: \.hostID).values.map { Host($0, now: now) }.sorted { $0.latest.hostID < $1.latest.hostID }
        )
    }
}
