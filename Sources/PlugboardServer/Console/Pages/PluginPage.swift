import PlugboardModel
import PlugboardOperations

/// `/ui/plugins/{id}`: a plug-in's state in one environment with the controls that fit it (Kill while it runs,
/// Revive while a kill switch covers it, a version chosen from the registered ones), the hosts that loaded or skipped
/// it, its versions, environments and kill switches.
struct PluginPage: ConsoleView {
    static let template = "plugin"

    let detail: PluginDetail
    let switcher: EnvironmentSwitcher
    /// The plug-in in the switcher's environment.
    let state: EnvironmentState?
    /// The kill switch over the plug-in (or every plug-in) that is active.
    let kill: KillSwitch?
    let controls: ControlsView?
    /// The hosts' reports of the plug-in, each linked to the host on the Fleet page.
    let hosts: [LinkedRow<HostLoadStatus>]
    let versions: [Version]
    /// Each environment, linked to the plug-in's page in it.
    let environments: [LinkedRow<EnvironmentState>]
    /// Its kill switches, the oldest first.
    let killSwitches: [KillSwitch]

    /// A registered version, and whether an active kill switch covers it.
    struct Version: Sendable {
        let info: PluginVersionInfo
        let killed: Bool
    }

    static func read(_ reads: ConsoleReads) throws -> PluginPage {
        let page = reads.page
        let id = try PluginID(validating: page.parameter ?? "")
        let detail = try reads.perform(PluginOperations.Show(id: id))
        let switcher = try reads.switcher(action: ConsolePages.link("/ui/plugins", detail.id))
        let env = switcher.env
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
        return PluginPage(
            detail: detail, switcher: switcher, state: state, kill: wholeKill ?? allKill, controls: .of(forms),
            hosts: hosts.map { LinkedRow(item: $0, href: "/ui/fleet?host=" + ConsolePages.escape($0.hostID)) },
            versions: detail.versions.reversed().map { Version(info: $0, killed: $0.killed || versionKills.contains($0.version)) },
            environments: detail.environments.map {
                LinkedRow(item: $0, href: ConsolePages.link("/ui/plugins", detail.id, env: $0.environment))
            },
            killSwitches: Array(detail.killSwitches.reversed()))
    }
}
