package import PlugboardModel
package import PlugboardStore
package import PlugboardVersioning

/// Reads and changes of plug-ins: the requests behind `plugboard plugin …`.
package enum PluginRequests {
    /// `plugin list`: the plug-ins and their state in an environment.
    package struct List: RoutedRequest {
        package var env: String
        /// At most this many plug-ins (a page); nil for all.
        package var limit: Int?
        /// Only plug-ins whose id sorts after this one (the last id of the previous page).
        package var after: String?
        package init(env: String, limit: Int? = nil, after: String? = nil) {
            self.env = env
            self.limit = limit
            self.after = after
        }
        package static let route = AdminRoute(
            "plugin.list", .get, "/plugins", .read,
            summary: "List plug-ins and their state in the environment, in id order; a page with limit and after.",
            parameters: [
                .env(.query), AdminParameter("limit", .query, .integer, "At most this many plug-ins (1-10000)."),
                AdminParameter("after", .query, "Only plug-ins whose id sorts after this one (the previous page's last id)."),
            ], response: "PluginSummaryList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[PluginSummary]> {
            try Validate.environment(env)
            if let limit, !(1...10_000).contains(limit) { throw BoardError(.invalidInput, "limit must be between 1 and 10000") }
            return AdminReply(try board.pluginSummaries(environment: env, after: after, limit: limit))
        }
    }

    /// `plugin show ID`.
    package struct Show: RoutedRequest {
        package var id: String
        package init(id: String) { self.id = id }
        package static let route = AdminRoute(
            "plugin.show", .get, "/plugins/{id}", .read, summary: "Show a plug-in: versions, environments, owners, kill switches.",
            parameters: [.path("id", "The plug-in id.")], response: "PluginDetail")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<PluginDetail> {
            try Validate.pluginID(id)
            return AdminReply(try board.pluginDetail(id))
        }
    }

    /// `plugin status [ID]`: what each host loaded or skipped, and why.
    package struct Status: RoutedRequest {
        package var id: String?
        package init(id: String?) { self.id = id }
        package static let route = AdminRoute(
            "plugin.status", .get, "/plugin-status", .read, summary: "What each host loaded or skipped, and why.",
            parameters: [AdminParameter("id", .query, "Only this plug-in.")], response: "LoadStatusList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[HostLoadStatus]> {
            if let id {
                try Validate.pluginID(id)
                _ = try board.pluginDetail(id)  // a clear "not registered" for a typo
            }
            let rows = try board.loadStatus(pluginID: id)
            return AdminReply(rows, notes: TelemetryNotes.drops(board, hosts: true))
        }
    }
}

/// Parsing of request fields with the CLI's sentences.
package enum AdminParse {
    /// A semantic version, or a refusal naming it.
    package static func version(_ text: String) throws(BoardError) -> SemanticVersion {
        do { return try SemanticVersion(text) } catch { throw BoardError(.invalidInput, error.message) }
    }

    /// A length of time written as a positive count and one of `units` (from `s`, `m`, `h`, `d`, `w`: `30s`, `10m`, `12h`,
    /// `90d`, `2w`), in seconds; nil for anything else.
    package static func duration(_ text: String, units: String) -> Double? {
        let seconds: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400]
        guard let unit = text.last, units.contains(unit), let length = seconds[unit], let count = Int(text.dropLast()), count > 0
        else { return nil }
        return Double(count) * length
    }
}

/// What telemetry the board did not keep, as notes for stderr: what `plugin status` and `clients` show may then be
/// incomplete.
package enum TelemetryNotes {
    /// Notes on drops of hosts' reports (`hosts`) or SDKs' usage, and drops that concern both.
    package static func drops(_ board: Board, hosts: Bool) -> [String] {
        guard let drops = try? board.telemetryDrops() else { return [] }
        return drops.filter { drop in
            drop.concernsHosts == hosts || drop.kind == TelemetryDrop.Kind.storedRowsOverCap || drop.kind == TelemetryDrop.Kind.fileFull
        }.map { drop in
            "\(drop.count) \(Validate.escaped(drop.kind)) were dropped, the last at \(drop.lastAt); what is shown may be incomplete"
        }
    }
}
