package import PlugboardModel
package import PlugboardStore
package import PlugboardVersioning

/// Reads and changes of plug-ins: the requests behind `plugboard plugin …`.
package enum PluginRequests {
    /// `plugin list`: the plug-ins and their state in an environment.
    package struct List: AdminRequest {
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
    package struct Show: AdminRequest {
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
    package struct Status: AdminRequest {
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

    /// `plugin enable ID` and `plugin disable ID`.
    package struct SetEnabled: AdminRequest {
        package var id: String
        package var env: String
        package var enabled: Bool
        package init(id: String, env: String, enabled: Bool) {
            self.id = id
            self.env = env
            self.enabled = enabled
        }
        package static let route = AdminRoute(
            "plugin.enable", .put, "/plugins/{id}/enabled", .write, summary: "Enable or disable a plug-in in the environment.",
            parameters: [
                .path("id", "The plug-in id."), .env(.body),
                AdminParameter("enabled", .body, .boolean, required: true, "True to enable, false to disable."),
            ], response: "ChangeResult", lane: .stop)
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.pluginID(id)
            try Validate.environment(env)
            return AdminReply(try board.setEnabled(id, enabled, environment: env, by: actor))
        }
    }

    /// `plugin kill` and `plugin revive`: a kill switch over a plug-in, one version, or all plug-ins.
    package struct Kill: AdminRequest {
        /// The plug-in; nil with `all`.
        package var id: String?
        package var version: String?
        package var all: Bool
        package var reason: String?
        /// True to lift the kill switch instead (`revive`).
        package var revive: Bool
        package init(id: String?, version: String?, all: Bool, reason: String?, revive: Bool) {
            self.id = id
            self.version = version
            self.all = all
            self.reason = reason
            self.revive = revive
        }
        package static let route = AdminRoute(
            "plugin.kill", .post, "/kill-switches", .write,
            summary: "Throw (or, with revive, lift) a kill switch over a plug-in, one of its versions, or all plug-ins.",
            parameters: [
                AdminParameter("id", .body, "The plug-in id (omit with all)."),
                AdminParameter("version", .body, "Only this version of the plug-in."),
                AdminParameter("all", .body, .boolean, required: true, "Every plug-in on the board (admins only)."),
                AdminParameter("reason", .body, "Why (required to kill)."),
                AdminParameter("revive", .body, .boolean, required: true, "Lift the kill switch instead of throwing it."),
            ], response: "ChangeResult", lane: .stop)

        /// What the request acts on, checked.
        package func target() throws(BoardError) -> KillTarget {
            if all {
                guard id == nil, version == nil else { throw BoardError(.invalidInput, "--all takes no plug-in id and no --version") }
                return .all
            }
            guard let id else { throw BoardError(.invalidInput, "name a plug-in id, or use --all") }
            try Validate.pluginID(id)
            guard let version else { return .plugin(id) }
            return .version(id, try AdminParse.version(version))
        }

        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            let target = try target()
            if let reason { try Validate.reason(reason) }
            if revive { return AdminReply(try board.revive(target, reason: reason, by: actor)) }
            guard let reason else { throw BoardError(.invalidInput, "a kill switch needs a reason (--reason)") }
            return AdminReply(try board.kill(target, reason: reason, by: actor))
        }
    }

    /// `plugin yank ID VERSION` and `plugin unyank ID VERSION`.
    package struct Yank: AdminRequest {
        package var id: String
        package var version: String
        package var reason: String?
        /// True to undo the yank (`unyank`).
        package var undo: Bool
        package init(id: String, version: String, reason: String?, undo: Bool) {
            self.id = id
            self.version = version
            self.reason = reason
            self.undo = undo
        }
        package static let route = AdminRoute(
            "plugin.yank", .post, "/plugins/{id}/versions/{version}/yank", .write,
            summary: "Yank a version so hosts no longer pick it (or, with undo, undo the yank).",
            parameters: [
                .path("id", "The plug-in id."), .path("version", "The version."),
                AdminParameter("reason", .body, "Why (required to yank)."),
                AdminParameter("undo", .body, .boolean, required: true, "Undo the yank instead."),
            ], response: "ChangeResult", lane: .stop)
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.pluginID(id)
            let parsed = try AdminParse.version(version)
            if let reason { try Validate.reason(reason) }
            if !undo, reason == nil { throw BoardError(.invalidInput, "a yank needs a reason (--reason)") }
            return AdminReply(try board.yank(id, version: parsed, reason: reason, undo: undo, by: actor))
        }
    }

    /// `plugin pin ID VERSION` and `plugin unpin ID`.
    package struct Pin: AdminRequest {
        package var id: String
        package var env: String
        /// The version to pin; nil removes the pin.
        package var version: String?
        package init(id: String, env: String, version: String?) {
            self.id = id
            self.env = env
            self.version = version
        }
        package static let route = AdminRoute(
            "plugin.pin", .put, "/plugins/{id}/pin", .write,
            summary: "Pin a plug-in to one version in the environment (without a version: remove the pin).",
            parameters: [.path("id", "The plug-in id."), .env(.body), AdminParameter("version", .body, "The version to pin.")],
            response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            try Validate.pluginID(id)
            try Validate.environment(env)
            guard let version else { return AdminReply(try board.unpin(id, environment: env, by: actor)) }
            return AdminReply(try board.pin(id, version: try AdminParse.version(version), environment: env, by: actor))
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
