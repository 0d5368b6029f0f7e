import PlugboardFlags
import PlugboardModel
import PlugboardOperations

/// `/ui/flags/{name}`: a flag, its state in one environment with the controls that fit it, its strategies and
/// constraints as text in every environment, and its usage counts.
struct FlagPage: ConsoleView {
    static let template = "flag"

    let detail: Detail
    let env: String
    /// The page's own path, where the environment switcher leads.
    let action: String
    let switcher: [EnvironmentChoice]
    /// Whether the flag is on in `env`.
    let enabled: Bool
    let controls: Bool
    /// The forms, rendered.
    let forms: [String]
    let environments: [Environment]
    let usage: [Usage]

    /// What the flag is.
    struct Detail: Sendable {
        let name: String
        let type: String
        let description: String?
        let owner: String
        let createdAt: String
        let createdBy: String
        let archivedAt: String?
    }

    /// The flag in one environment.
    struct Environment: Sendable {
        let environment: String
        let enabled: Bool
        /// Its strategies as people read them.
        let strategies: [String]
        let hasVariants: Bool
        let variants: [Variant]
    }

    /// A variant and its weight.
    struct Variant: Sendable {
        let name: String
        let weight: Int
    }

    /// What SDKs reported evaluating in one environment.
    struct Usage: Sendable {
        let environment: String
        let yes: Int
        let no: Int
        let lastSeen: String?
    }

    static func read(_ reads: ConsoleReads) throws -> FlagPage {
        let page = reads.page
        let name = try FlagName(validating: page.parameter ?? "")
        let detail = try reads.perform(FlagOperations.Show(name: name))
        let (env, all) = try reads.environment()
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
        return FlagPage(
            detail: Detail(
                name: detail.name, type: detail.type, description: detail.description, owner: detail.owner, createdAt: detail.createdAt,
                createdBy: detail.createdBy, archivedAt: detail.archivedAt),
            env: env, action: ConsolePages.link("/ui/flags", detail.name), switcher: EnvironmentChoice.list(all, env),
            enabled: state?.enabled ?? false, controls: !forms.isEmpty, forms: forms,
            environments: detail.environments.map { environment in
                Environment(
                    environment: environment.environment, enabled: environment.enabled,
                    strategies: environment.strategies.map(strategyText),
                    hasVariants: !environment.variants.isEmpty,
                    variants: environment.variants.map { Variant(name: $0.name, weight: $0.weight) })
            },
            usage: detail.usage.map { Usage(environment: $0.environment, yes: $0.yes, no: $0.no, lastSeen: $0.lastSeen) })
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
