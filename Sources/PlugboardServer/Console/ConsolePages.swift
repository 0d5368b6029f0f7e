import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import Synchronization

/// What one page is rendered with: who asks, the request's query, the CSRF token its forms carry.
final class ConsolePage: Sendable {
    /// The page's path and query, where its forms come back to.
    let path: String
    let csrf: String
    /// A read-only session sees no form.
    let readOnly: Bool
    let principal: Principal
    /// Who made the session's access token (a token the author of a change request made does not approve it).
    let tokenMadeBy: String
    let query: [String: String]
    /// The path's parameter (`/ui/plugins/{id}`), if the page has one.
    let parameter: String?
    /// The remembered verification of the audit log, and the lane that verifies it again.
    let verifier: ConsoleVerifier
    let lane: WorkerThreads
    private let forms = Mutex(0)

    init(
        path: String, csrf: String, readOnly: Bool, principal: Principal, tokenMadeBy: String = "", query: [String: String],
        parameter: String?, verifier: ConsoleVerifier, lane: WorkerThreads
    ) {
        self.tokenMadeBy = tokenMadeBy
        self.verifier = verifier
        self.lane = lane
        self.path = path
        self.csrf = csrf
        self.readOnly = readOnly
        self.principal = principal
        self.query = query
        self.parameter = parameter
    }

    /// A number for the next form's element ids, unique on the page.
    func nextFormID() -> Int {
        forms.withLock { count in
            count += 1
            return count
        }
    }

    /// A query value, nil when absent or empty.
    func value(_ name: String) -> String? { query[name].flatMap { $0.isEmpty ? nil : $0 } }

    /// Performs a read as the person, checked as the API checks it (a bad query value is refused with its sentence).
    func read<Op: ParsedOperation>(_ operation: Op, on board: Board) throws(BoardError) -> Op.Response {
        try operation.checked().perform(on: board, as: principal).value
    }

    /// The environment the page shows: `?env=`, else `default`, else the first.
    func environment(_ board: Board) throws(BoardError) -> (name: String, all: [String]) {
        let all = try board.environments()
        if let asked = value("env") {
            try Validate.environment(asked)
            return (asked, all)
        }
        return (all.contains("default") ? "default" : all.first ?? "default", all)
    }

    /// The environments for a `<select>`, the shown one selected.
    static func choices(_ all: [String], _ selected: String) -> [[String: Any]] {
        all.map { ["name": $0, "selected": $0 == selected] as [String: Any] }
    }
}

/// `audit verify` for the console's pages, remembered for the board's version: the chain is verified again only
/// after a change. A verification that took long (a long log) runs again in the background after the next change, and
/// the pages say the last result, and that the newest rows are being checked, until it is done.
final class ConsoleVerifier: Sendable {
    private struct State {
        var version: BoardVersion?
        var ok = false
        var sentence = ""
        var took = Duration.zero
        var running = false
    }

    /// A verification that took longer than this runs in the background next time.
    static let inline = Duration.milliseconds(20)
    private let state = Mutex(State())

    func sentence(_ board: Board, as principal: Principal, lane: WorkerThreads) throws -> (Bool, String) {
        let version = try board.version()
        let known = state.withLock { $0 }
        if known.version == version { return (known.ok, known.sentence) }
        if known.version == nil || known.took < Self.inline {
            try verify(board, principal, version)
            let now = state.withLock { $0 }
            return (now.ok, now.sentence)
        }
        let start = state.withLock { state in
            defer { state.running = true }
            return !state.running
        }
        if start {
            lane.submit { [self] in
                try? verify(board, principal, version)
                state.withLock { $0.running = false }
            }
        }
        return (known.ok, known.sentence + " The newest changes are being checked.")
    }

    private func verify(_ board: Board, _ principal: Principal, _ version: BoardVersion) throws {
        let started = ContinuousClock.now
        let result = try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: principal).value
        let sentence =
            result.ok
            ? "The audit log verifies: \(result.rowsChecked) rows, \(result.stateRowsChecked) rows of state proven."
            : "The audit log does not verify: " + (result.problems.first ?? "see plugboard audit verify") + "."
        let took = ContinuousClock.now - started
        state.withLock { state in
            state.version = version
            state.ok = result.ok
            state.sentence = sentence
            state.took = took
        }
    }
}

/// The console's pages: their paths, sections, titles and what each reads (through the operations, as the person).
enum ConsolePages {
    /// One page.
    struct Route: Sendable {
        /// The path under `/ui`.
        let path: String
        /// The name of the path's parameter, if any.
        var parameter: String?
        /// The navigation section it belongs to.
        let section: String
        /// Whether it follows the board's changes live.
        var live = true
        let title: @Sendable (ConsolePage) -> String
        let render: @Sendable (Board, ConsolePage) throws -> String
    }

    /// The navigation.
    static let sections: [(label: String, href: String)] = [
        ("Overview", "/ui/"), ("Plug-ins", "/ui/plugins"), ("Fleet", "/ui/fleet"), ("Flags", "/ui/flags"), ("Audit", "/ui/audit"),
        ("Tokens", "/ui/tokens"), ("Rollouts", "/ui/rollouts"), ("Changes", "/ui/changes"),
    ]

    static let all: [Route] = [
        Route(path: "/", section: "Overview", title: { _ in "Overview" }, render: overview),
        Route(path: "/plugins", section: "Plug-ins", title: { _ in "Plug-ins" }, render: plugins),
        Route(path: "/plugins/{id}", parameter: "id", section: "Plug-ins", title: { $0.parameter ?? "Plug-in" }, render: plugin),
        Route(path: "/fleet", section: "Fleet", title: { _ in "Fleet" }, render: fleet),
        Route(path: "/flags", section: "Flags", title: { _ in "Flags" }, render: flags),
        Route(path: "/flags/{name}", parameter: "name", section: "Flags", title: { $0.parameter ?? "Flag" }, render: flag),
        Route(path: "/audit", section: "Audit", live: false, title: { _ in "Audit log" }, render: audit),
        Route(path: "/tokens", section: "Tokens", title: { _ in "Tokens" }, render: tokens),
        Route(path: "/rollouts", section: "Rollouts", title: { _ in "Rollouts" }, render: rollouts),
        Route(path: "/changes", section: "Changes", title: { _ in "Change requests" }, render: changes),
        Route(
            path: "/changes/{id}", parameter: "id", section: "Changes", title: { "Change request \($0.parameter ?? "")" }, render: change),
    ]

    /// A host whose last report is older than this is shown as stale.
    static let staleAfter: TimeInterval = 600

    // MARK: Overview

    static func overview(_ board: Board, _ page: ConsolePage) throws -> String {
        let (verified, verification) = try verificationSentence(board, page)
        let kills = try board.killSwitches().map { kill -> [String: Any] in
            let target = kill.target?.description ?? kill.scope
            return [
                "target": target, "pluginHref": some(kill.pluginID.map { link("/ui/plugins", $0) }), "reason": kill.reason,
                "killedAt": kill.killedAt,
                "killedBy": kill.killedBy,
            ]
        }
        let hosts = try board.reportingHosts()
        let now = Date()
        let stale = hosts.filter { isStale($0.reportedAt, now) }.count
        let changes = try page.read(BoardOperations.Audit(since: nil, actor: nil, target: nil, limit: 10, after: nil), on: board)
        return ConsoleTemplates.render(
            "overview",
            [
                "verified": verified, "verification": verification, "kills": kills, "hasKills": !kills.isEmpty, "killCount": kills.count,
                "hostsUp": hosts.count - stale, "hostsStale": stale, "freshMinutes": Int(staleAfter / 60),
                "environments": try board.environments(), "changes": changes.records.reversed().map(auditRow),
                "waiting": try waiting(board, page),
            ])
    }

    /// The result of `audit verify` for the page: see ``ConsoleVerifier``.
    static func verificationSentence(_ board: Board, _ page: ConsolePage) throws -> (Bool, String) {
        try page.verifier.sentence(board, as: page.principal, lane: page.lane)
    }

    // MARK: Plug-ins

    static let pageSize = 100

    static func plugins(_ board: Board, _ page: ConsolePage) throws -> String {
        let (env, all) = try page.environment(board)
        let after = try page.value("after").map { text throws(BoardError) in try PluginID(validating: text) }
        let search = page.value("q")
        let plugins = try page.read(PluginOperations.List(env: env, limit: pageSize, after: after, search: search), on: board)
        var next: String?
        if plugins.count == pageSize, let last = plugins.last?.id {
            next = "/ui/plugins?env=\(escape(env))&after=\(escape(last))" + (search.map { "&q=\(escape($0))" } ?? "")
        }
        return ConsoleTemplates.render(
            "plugins",
            [
                "env": env, "environments": ConsolePage.choices(all, env), "query": search ?? "", "next": some(next),
                "plugins": plugins.map { plugin -> [String: Any] in
                    [
                        "id": plugin.id, "href": link("/ui/plugins", plugin.id, env: plugin.environment), "name": plugin.name,
                        "environment": plugin.environment, "enabled": plugin.enabled,
                        "killed": plugin.killed, "activeVersion": plugin.activeVersion ?? "–", "latestVersion": plugin.latestVersion ?? "–",
                        "pinnedVersion": plugin.pinnedVersion ?? "",
                    ]
                },
            ])
    }

    static func plugin(_ board: Board, _ page: ConsolePage) throws -> String {
        let id = try PluginID(validating: page.parameter ?? "")
        let detail = try page.read(PluginOperations.Show(id: id), on: board)
        let (env, _) = try page.environment(board)
        let state = detail.environments.first { $0.environment == env }
        let activeKill = detail.killSwitches.first { $0.active && ($0.scope == "plugin" || $0.scope == "all") }
        let versionKills = Set(detail.killSwitches.filter { $0.active && $0.scope == "version" }.compactMap(\.version))
        let hosts = try page.read(PluginOperations.Status(id: id), on: board)
        let fixed = ["id": id.text]
        let inEnv = ["id": id.text, "env": env]
        let forms = [
            ConsoleForms.form(PluginOperations.Kill.self, page, fixed: fixed, omit: ["all"], button: "Kill", danger: true),
            ConsoleForms.form(PluginOperations.Revive.self, page, fixed: fixed, omit: ["all"], require: ["reason"], button: "Revive"),
            state?.enabled == true
                ? ConsoleForms.form(PluginOperations.Disable.self, page, fixed: inEnv, button: "Disable in \(env)", danger: true)
                : ConsoleForms.form(PluginOperations.Enable.self, page, fixed: inEnv, button: "Enable in \(env)"),
            ConsoleForms.form(PluginOperations.Pin.self, page, fixed: inEnv, button: "Pin in \(env)"),
            state?.pinnedVersion == nil
                ? nil : ConsoleForms.form(PluginOperations.Unpin.self, page, fixed: inEnv, button: "Unpin in \(env)"),
            ConsoleForms.form(PluginOperations.Yank.self, page, fixed: fixed, button: "Yank", danger: true),
        ].compactMap { $0 }
        return ConsoleTemplates.render(
            "plugin",
            [
                "detail": ["id": detail.id, "name": detail.name, "description": some(detail.description)] as [String: Any],
                "env": env, "enabled": state?.enabled ?? false, "pinned": some(state?.pinnedVersion), "active": some(state?.activeVersion),
                "killed": activeKill != nil, "killReason": activeKill?.reason ?? "", "controls": !forms.isEmpty, "forms": forms,
                "hosts": hosts.map { host -> [String: Any] in
                    [
                        "hostID": host.hostID, "hostQuery": escape(host.hostID), "environment": host.environment,
                        "version": host.version ?? "–",
                        "state": host.state.rawValue, "reason": host.reason ?? host.warning ?? "", "reportedAt": host.reportedAt,
                    ]
                },
                "versions": detail.versions.reversed().map { version -> [String: Any] in
                    [
                        "version": version.version, "registeredAt": version.registeredAt, "registeredBy": version.registeredBy,
                        "signature": version.signature.message, "killed": version.killed || versionKills.contains(version.version),
                        "yanked": version.yankedAt != nil, "yankReason": version.yankReason ?? "",
                    ]
                },
                "environments": detail.environments.map { environment -> [String: Any] in
                    [
                        "environment": environment.environment, "enabled": environment.enabled,
                        "href": link("/ui/plugins", detail.id, env: environment.environment),
                        "pinnedVersion": some(environment.pinnedVersion),
                    ]
                },
                "killSwitches": detail.killSwitches.reversed().map { kill -> [String: Any] in
                    [
                        "scope": kill.scope, "version": kill.version ?? "", "reason": kill.reason, "killedAt": kill.killedAt,
                        "killedBy": kill.killedBy, "revivedAt": some(kill.revivedAt), "revivedBy": kill.revivedBy ?? "",
                    ]
                },
            ])
    }

    // MARK: Shared

    /// One host, from its rows of load reports.
    struct Host {
        let hostID: String
        let environment: String
        let hostVersion: String
        let source: String
        let reportedAt: String
        let entries: [HostLoadStatus]
    }

    /// The hosts of load-report rows, by host id.
    static func hostsByReport(_ rows: [HostLoadStatus]) -> [Host] {
        Dictionary(grouping: rows, by: \.hostID).map { id, rows in
            let last = rows.max { $0.reportedAt < $1.reportedAt } ?? rows[0]
            return Host(
                hostID: id, environment: last.environment, hostVersion: last.hostVersion, source: last.source ?? "the board file",
                reportedAt: last.reportedAt, entries: rows.sorted { $0.pluginID < $1.pluginID })
        }.sorted { $0.hostID < $1.hostID }
    }

    static func isStale(_ reportedAt: String, _ now: Date) -> Bool {
        guard let date = Timestamp.parse(reportedAt) else { return true }
        return now.timeIntervalSince(date) > staleAfter
    }

    /// An audit row as a table row.
    static func auditRow(_ record: AuditRecord) -> [String: Any] {
        let target = [record.targetType, record.targetID].compactMap { $0 }.joined(separator: " ")
        return [
            "seq": record.seq, "at": record.at, "by": record.onBehalfOf.map { "\($0) (as \(record.by))" } ?? record.by,
            "via": some(record.via), "action": record.action, "refused": record.outcome != "ok", "target": target,
            "reason": record.reason ?? "", "change": record.beforeJSON != nil || record.afterJSON != nil,
            "before": record.beforeJSON.map { "before: \($0)" } ?? "before: –",
            "after": record.afterJSON.map { "after: \($0)" } ?? "after: –",
        ]
    }

    /// An optional value for a template: absent values are `false`, so that `{{#name}}…{{/name}}` leaves them out.
    static func some(_ value: (any Sendable)?) -> Any { value ?? false }

    /// A query value or a path segment, percent-encoded for a link: every byte but ASCII letters, digits and `-._~`.
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// The characters a link leaves as they are (RFC 3986's unreserved ones).
    private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    /// The link to the page of `name` under `base` (`/ui/flags`, `/ui/plugins`), in `env` when given: the name is one
    /// percent-encoded path segment, whatever it holds (a flag's `"`, `<`, `?`, `#` or `/`); the template escapes the
    /// whole link for HTML.
    static func link(_ base: String, _ name: String, env: String? = nil) -> String {
        base + "/" + escape(name) + (env.map { "?env=" + escape($0) } ?? "")
    }
}
