import PlugboardFlags
import PlugboardModel
import PlugboardOperations

/// `/ui/flags/{name}`: a flag, its state in one environment with the controls that fit it, its strategies and
/// constraints as text in every environment, and its usage counts.
struct FlagPage: ConsoleView {
    static let template = "flag"

    let detail: FlagDetail
    let switcher: EnvironmentSwitcher
    /// Whether the flag is on in the switcher's environment.
    let enabled: Bool
    let controls: ControlsView?
    /// The flag in each environment, its strategies as people read them.
    let environments: [Environment]

    /// The flag in one environment.
    struct Environment: Sendable {
        let definition: FlagEnvironmentDefinition
        /// Its strategies as people read them (``strategyText(_:)``).
        let strategies: [String]
    }

    static func read(_ reads: ConsoleReads) throws -> FlagPage {
        let page = reads.page
        let name = try FlagName(validating: page.parameter ?? "")
        let detail = try reads.perform(FlagOperations.Show(name: name))
        let switcher = try reads.switcher(action: ConsolePages.link("/ui/flags", detail.name))
        let env = switcher.env
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
        ]
        return FlagPage(
            detail: detail, switcher: switcher, enabled: state?.enabled ?? false, controls: .of(forms),
            environments: detail.environments.map { Environment(definition: $0, strategies: $0.strategies.map(strategyText)) })
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
}
