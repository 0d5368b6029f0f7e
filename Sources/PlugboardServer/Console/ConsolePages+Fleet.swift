import Foundation
import PlugboardFlags
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// The fleet, flags, audit log, tokens and rollouts pages.
extension ConsolePages {
    /// The hosts one page of the fleet shows.
    static let hostsPerPage = 25

    static func fleet(_ board: Board, _ page: ConsolePage) throws -> String {
        let plugin = try page.value("plugin").map { text throws(BoardError) in try PluginID(validating: text) }
        let version = page.value("version")
        let host = page.value("host")
        // The hosts that reported (the plug-in, when one is asked for), a page at a time; then their reports.
        var reporting = try board.reportingHosts(pluginID: plugin?.text).map(\.hostID)
        if let host { reporting = reporting.filter { $0 == host } }
        if let version, let plugin {
            let running = try page.read(PluginOperations.Status(id: plugin), on: board).filter { $0.version == version }
            let hosts = Set(running.map(\.hostID))
            reporting = reporting.filter { hosts.contains($0) }
        }
        let after = page.value("after")
        let remaining = after.map { after in reporting.filter { $0 > after } } ?? reporting
        let shown = Array(remaining.prefix(hostsPerPage))
        let rows = shown.isEmpty ? [] : try board.loadStatus(pluginID: plugin?.text, hosts: Set(shown))
        let hosts = hostsByReport(rows)
        var next: String?
        if remaining.count > hostsPerPage, let last = shown.last {
            var query = ["after=\(escape(last))"]
            if let plugin { query.append("plugin=\(escape(plugin.text))") }
            if let version { query.append("version=\(escape(version))") }
            next = "/ui/fleet?" + query.joined(separator: "&")
        }
        let now = Date()
        return ConsoleTemplates.render(
            "fleet",
            [
                "plugin": plugin?.text ?? "", "version": version ?? "", "filtered": plugin != nil || version != nil || host != nil,
                "hostCount": reporting.count == 1 ? "1 host" : "\(reporting.count) hosts", "next": some(next),
                "hosts": hosts.map { host -> [String: Any] in
                    [
                        "hostID": host.hostID, "anchor": escape(host.hostID), "environment": host.environment, "source": host.source,
                        "reportedAt": host.reportedAt, "hostVersion": host.hostVersion, "stale": isStale(host.reportedAt, now),
                        "entries": host.entries.map { entry -> [String: Any] in
                            [
                                "pluginID": entry.pluginID, "href": link("/ui/plugins", entry.pluginID, env: entry.environment),
                                "environment": entry.environment, "version": entry.version ?? "–",
                                "state": entry.state.rawValue, "reason": entry.reason ?? entry.warning ?? "",
                            ]
                        },
                    ]
                },
            ])
    }

    // MARK: Flags

    static func flags(_ board: Board, _ page: ConsolePage) throws -> String {
        let (env, all) = try page.environment(board)
        let unused = page.value("unused").flatMap(Int.init)
        let flags = try page.read(FlagOperations.List(env: env, unused: unused), on: board)
        return ConsoleTemplates.render(
            "flags",
            [
                "env": env, "environments": ConsolePage.choices(all, env), "unused": unused != nil,
                "flags": flags.map { flag -> [String: Any] in
                    [
                        "name": flag.name, "href": link("/ui/flags", flag.name, env: flag.environment), "environment": flag.environment,
                        "type": flag.type, "enabled": flag.enabled,
                        "archived": flag.archived, "potentiallyStale": flag.potentiallyStale, "strategyCount": flag.strategyCount,
                        "variantCount": flag.variantCount, "owner": flag.owner,
                    ]
                },
            ])
    }

    static func flag(_ board: Board, _ page: ConsolePage) throws -> String {
        let name = try FlagName(validating: page.parameter ?? "")
        let detail = try page.read(FlagOperations.Show(name: name), on: board)
        let (env, _) = try page.environment(board)
        let state = detail.environments.first { $0.environment == env }
        let inEnv = ["name": name.text, "env": env]
        let forms = [
            state?.enabled == true
                ? ConsoleForms.form(FlagOperations.Disable.self, page, fixed: inEnv, button: "Turn off in \(env)", danger: true)
                : ConsoleForms.form(FlagOperations.Enable.self, page, fixed: inEnv, button: "Turn on in \(env)"),
            ConsoleForms.form(FlagOperations.Rollout.self, page, fixed: inEnv, button: "Roll out in \(env)"),
            detail.archivedAt == nil
                ? ConsoleForms.form(FlagOperations.Archive.self, page, fixed: ["name": name.text], button: "Archive", danger: true)
                : ConsoleForms.form(FlagOperations.Unarchive.self, page, fixed: ["name": name.text], button: "Unarchive"),
        ].compactMap { $0 }
        return ConsoleTemplates.render(
            "flag",
            [
                "detail": [
                    "name": detail.name, "type": detail.type, "description": some(detail.description), "owner": detail.owner,
                    "createdAt": detail.createdAt, "createdBy": detail.createdBy, "archivedAt": some(detail.archivedAt),
                ] as [String: Any],
                "controls": !forms.isEmpty, "forms": forms,
                "environments": detail.environments.map { environment -> [String: Any] in
                    [
                        "environment": environment.environment, "enabled": environment.enabled,
                        "strategies": environment.strategies.map(strategyText), "hasVariants": !environment.variants.isEmpty,
                        "variants": environment.variants.map { ["name": $0.name, "weight": $0.weight] as [String: Any] },
                    ]
                },
                "usage": detail.usage.map { usage -> [String: Any] in
                    ["environment": usage.environment, "yes": usage.yes, "no": usage.no, "lastSeen": some(usage.lastSeen)]
                },
            ])
    }

    /// A strategy as people read it: `flexibleRollout (rollout 50, stickiness default) when userId IN a, b`.
    static func strategyText(_ strategy: Strategy) -> String {
        var text = strategy.name
        let parameters = (strategy.parameters ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        if !parameters.isEmpty { text += " (" + parameters.joined(separator: ", ") + ")" }
        let constraints = (strategy.constraints ?? []).map { constraint in
            let values = constraint.values?.joined(separator: ", ") ?? constraint.value ?? ""
            return "\(constraint.contextName) \(constraint.inverted == true ? "NOT " : "")\(constraint.operator) \(values)"
        }
        if !constraints.isEmpty { text += " when " + constraints.joined(separator: " and ") }
        if let segments = strategy.segments, !segments.isEmpty {
            text += " in segments " + segments.map(String.init).joined(separator: ", ")
        }
        return text
    }

    // MARK: Audit

    /// The most rows the audit page shows, the newest first.
    static let auditRows = 200

    static func audit(_ board: Board, _ page: ConsolePage) throws -> String {
        let (verified, verification) = try verificationSentence(board, page)
        let request = BoardOperations.Audit(
            since: page.value("since"), actor: page.value("actor"), target: page.value("target"), action: page.value("action"),
            limit: auditRows, after: nil)
        let records = try page.read(request, on: board).records
        return ConsoleTemplates.render(
            "audit",
            [
                "verified": verified, "verification": verification, "actor": page.value("actor") ?? "",
                "target": page.value("target") ?? "",
                "action": page.value("action") ?? "", "since": page.value("since") ?? "", "records": records.reversed().map(auditRow),
            ])
    }

    // MARK: Tokens

    static func tokens(_ board: Board, _ page: ConsolePage) throws -> String {
        // Admins see every principal's access tokens and the SDK tokens; others their own access tokens.
        let sdk = try adminsOnly { () throws(BoardError) in try page.read(TokenOperations.ListTokens(), on: board) }
        let mine = try PrincipalName(validating: page.principal.osUser)
        let access = try page.read(TokenOperations.ListAccessTokens(principal: sdk == nil ? mine : nil), on: board)
        return ConsoleTemplates.render(
            "tokens",
            [
                "admin": sdk != nil, "controls": !page.readOnly,
                "access": access.map { token -> [String: Any] in
                    let revoke =
                        token.state == .active
                        ? ConsoleForms.form(
                            TokenOperations.RevokeAccessToken.self, page, fixed: ["name": token.name, "principal": token.principal],
                            button: "Revoke", danger: true) ?? "" : ""
                    return [
                        "principal": token.principal, "name": token.name, "prefix": token.prefix, "readOnly": token.readOnly,
                        "state": token.state.rawValue, "expiresAt": token.expiresAt ?? "never", "lastUsedAt": token.lastUsedAt ?? "never",
                        "revoke": revoke, "controls": !page.readOnly,
                    ]
                },
                "sdk": (sdk ?? []).map { token -> [String: Any] in
                    [
                        "name": token.name, "environment": token.environment, "kind": token.kind.rawValue, "prefix": token.prefix,
                        "state": token.state.rawValue, "lastUsedAt": token.lastUsedAt ?? "never",
                    ]
                },
            ])
    }

    /// What `read` answers, or nil when it is refused as not allowed (a read for admins only).
    static func adminsOnly<T>(_ read: () throws(BoardError) -> T) throws(BoardError) -> T? {
        let result = Result { () throws(BoardError) in try read() }
        switch result {
        case .success(let value): return value
        case .failure(let error): if error.code == .notAllowed { return nil } else { throw error }
        }
    }

    // MARK: Rollouts

    static func rollouts(_ board: Board, _ page: ConsolePage) throws -> String {
        let (env, all) = try page.environment(board)
        let statuses = try board.rolloutStatuses(pluginID: nil, environment: env)
        return ConsoleTemplates.render(
            "rollouts",
            [
                "env": env, "environments": ConsolePage.choices(all, env),
                "rollouts": statuses.map { status -> [String: Any] in
                    let rollout = status.rollout
                    let fixed = ["id": rollout.pluginID, "env": rollout.environment]
                    let running = rollout.state == .running || rollout.state == .paused
                    let forms: [String] =
                        running
                        ? [
                            rollout.state == .running
                                ? ConsoleForms.form(RolloutOperations.Pause.self, page, fixed: fixed, button: "Pause")
                                : ConsoleForms.form(RolloutOperations.Resume.self, page, fixed: fixed, button: "Resume"),
                            ConsoleForms.form(RolloutOperations.Abort.self, page, fixed: fixed, button: "Abort", danger: true),
                        ].compactMap { $0 } : []
                    return [
                        "anchor": escape(rollout.pluginID), "pluginID": rollout.pluginID,
                        "href": link("/ui/plugins", rollout.pluginID, env: rollout.environment), "environment": rollout.environment,
                        "from": rollout.previous ?? "–", "version": rollout.version, "state": rollout.state.rawValue,
                        "percent": rollout.percent, "stepList": rollout.steps.map { "\($0)%" }.joined(separator: ", "),
                        "nextStepAt": some(status.nextStepAt), "maxFailureRate": status.maxFailureRate, "minHosts": status.minHosts,
                        "figures": ([status.current] + (status.previous.map { [$0] } ?? [])).map { figures -> [String: Any] in
                            [
                                "version": figures.version, "hosts": figures.hosts, "activated": figures.activated,
                                "failed": figures.failed,
                                "crashed": figures.crashed, "quarantined": figures.quarantined,
                                "rate": RolloutFigures.percent(figures.failureRate),
                            ]
                        },
                        "history": status.history.map { step -> [String: Any] in
                            ["percent": step.percent, "reachedAt": step.reachedAt, "by": step.by, "figures": some(step.figures?.summary)]
                        },
                        "controls": !forms.isEmpty, "forms": forms,
                    ]
                },
            ])
    }
}
