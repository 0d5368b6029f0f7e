import PlugboardModel
import PlugboardOperations

/// `/ui/plugins/{id}`: a plug-in's state in one environment with the controls that fit it (Kill while it runs,
/// Revive while a kill switch covers it, a version chosen from the registered ones), the hosts that loaded or skipped
/// it, its versions, environments and kill switches.
struct PluginPage: ConsoleView {
    static let template = "plugin"

    let detail: Detail
    let env: String
    /// The page's own path, where the environment switcher leads.
    let action: String
    let switcher: [EnvironmentChoice]
    let enabled: Bool
    let pinned: String?
    let active: String?
    /// Whether a kill switch over the plug-in (or every plug-in) is active.
    let killed: Bool
    let killReason: String
    let controls: Bool
    /// The forms, rendered.
    let forms: [String]
    let hosts: [Host]
    let versions: [Version]
    let environments: [Environment]
    let killSwitches: [KillSwitchRow]

    /// What the plug-in is.
    struct Detail: Sendable {
        let id: String
        let name: String
        let description: String?
    }

    /// A host's report of the plug-in.
    struct Host: Sendable {
        let hostID: String
        let hostQuery: String
        let environment: String
        let version: String
        let state: String
        let reason: String
        let reportedAt: String
    }

    /// A registered version.
    struct Version: Sendable {
        let version: String
        let registeredAt: String
        let registeredBy: String
        let signature: String
        let killed: Bool
        let yanked: Bool
        let yankReason: String
    }

    /// The plug-in in one environment.
    struct Environment: Sendable {
        let environment: String
        let enabled: Bool
        let href: String
        let pinnedVersion: String?
    }

    /// A kill switch, active or lifted.
    struct KillSwitchRow: Sendable {
        let scope: String
        let version: String
        let reason: String
        let killedAt: String
        let killedBy: String
        let revivedAt: String?
        let revivedBy: String
    }

    static func read(_ reads: ConsoleReads) throws -> PluginPage {
        let page = reads.page
        let id = try PluginID(validating: page.parameter ?? "")
        let detail = try reads.perform(PluginOperations.Show(id: id))
        let (env, all) = try reads.environment()
        let state = detail.environments.first { $0.environment == env }
        let active = detail.killSwitches.filter(\.active)
        let wholeKill = active.first { $0.scope == "plugin" }
        let allKill = active.first { $0.scope == "all" }
        let versionKills = Set(active.filter { $0.scope == "version" }.compactMap(\.version))
        let hosts = try reads.perform(PluginOperations.Status(id: id))
        let registered = detail.versions.reversed().map(\.version)
        let unyanked = detail.versions.reversed().filter { $0.yankedAt == nil }.map(\.version)
        func options(_ versions: [String], whole: String? = nil, selected: String? = nil) -> [FormOption] {
            (whole.map { [FormOption(value: "", label: $0, selected: false)] } ?? [])
                + versions.map { FormOption(value: $0, label: $0, selected: $0 == selected) }
        }
        let fixed = ["id": id.text]
        let inEnv = ["id": id.text, "env": env]
        var forms: [String?] = []
        // Kill while the plug-in runs: the whole plug-in, or one version no kill switch covers yet.
        if wholeKill == nil {
            let versions = registered.filter { !versionKills.contains($0) }
            forms.append(
                ConsoleForms.form(
                    PluginOperations.Kill.self, page, fixed: fixed, omit: ["all"],
                    choices: ["version": options(versions, whole: "every version")], button: "Kill", danger: true))
        }
        // Revive while a kill switch over it (or one of its versions) is active: only what is killed.
        if wholeKill != nil || !versionKills.isEmpty {
            let versions = registered.filter { versionKills.contains($0) }
            forms.append(
                ConsoleForms.form(
                    PluginOperations.Revive.self, page, fixed: fixed, omit: ["all"], require: ["reason"],
                    choices: ["version": options(versions, whole: wholeKill == nil ? nil : "every version")], button: "Revive"))
        }
        forms += [
            state?.enabled == true
                ? ConsoleForms.form(PluginOperations.Disable.self, page, fixed: inEnv, button: "Disable in \(env)", danger: true)
                : ConsoleForms.form(PluginOperations.Enable.self, page, fixed: inEnv, button: "Enable in \(env)"),
            ConsoleForms.form(
                PluginOperations.Pin.self, page, fixed: inEnv,
                choices: ["version": options(registered, selected: state?.pinnedVersion ?? state?.activeVersion)],
                button: "Pin in \(env)"),
            state?.pinnedVersion == nil
                ? nil : ConsoleForms.form(PluginOperations.Unpin.self, page, fixed: inEnv, button: "Unpin in \(env)"),
            unyanked.isEmpty
                ? nil
                : ConsoleForms.form(
                    PluginOperations.Yank.self, page, fixed: fixed, choices: ["version": options(unyanked)], button: "Yank", danger: true),
        ]
        let shownForms = forms.compactMap { $0 }
        let kill = wholeKill ?? allKill
        return PluginPage(
            detail: Detail(id: detail.id, name: detail.name, description: detail.description), env: env,
            action: ConsolePages.link("/ui/plugins", detail.id), switcher: EnvironmentChoice.list(all, env),
            enabled: state?.enabled ?? false, pinned: state?.pinnedVersion, active: state?.activeVersion, killed: kill != nil,
            killReason: kill?.reason ?? "", controls: !shownForms.isEmpty, forms: shownForms,
            hosts: hosts.map { host in
                Host(
                    hostID: host.hostID, hostQuery: ConsolePages.escape(host.hostID), environment: host.environment,
                    version: host.version ?? "–", state: host.state.rawValue, reason: host.reason ?? host.warning ?? "",
                    reportedAt: host.reportedAt)
            },
            versions: detail.versions.reversed().map { version in
                Version(
                    version: version.version, registeredAt: version.registeredAt, registeredBy: version.registeredBy,
                    signature: version.signature.message, killed: version.killed || versionKills.contains(version.version),
                    yanked: version.yankedAt != nil, yankReason: version.yankReason ?? "")
            },
            environments: detail.environments.map { environment in
                Environment(
                    environment: environment.environment, enabled: environment.enabled,
                    href: ConsolePages.link("/ui/plugins", detail.id, env: environment.environment),
                    pinnedVersion: environment.pinnedVersion)
            },
            killSwitches: detail.killSwitches.reversed().map { kill in
                KillSwitchRow(
                    scope: kill.scope, version: kill.version ?? "", reason: kill.reason, killedAt: kill.killedAt, killedBy: kill.killedBy,
                    revivedAt: kill.revivedAt, revivedBy: kill.revivedBy ?? "")
            })
    }
}
