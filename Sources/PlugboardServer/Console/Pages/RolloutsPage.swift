import PlugboardModel
import PlugboardOperations

/// `/ui/rollouts`: each rollout of an environment, its step, schedule and the guard's figures per release, with pause,
/// resume and abort.
struct RolloutsPage: ConsoleView {
    static let template = "rollouts"

    let env: String
    let environments: [EnvironmentChoice]
    let rollouts: [Rollout]

    /// One plug-in's rollout.
    struct Rollout: Sendable {
        /// The plug-in's id as an element id's part.
        let anchor: String
        let pluginID: String
        let href: String
        /// The release it replaces.
        let from: String
        let version: String
        let state: String
        let percent: Int
        let stepList: String
        let nextStepAt: String?
        let maxFailureRate: Double
        let minHosts: Int
        let figures: [Figures]
        let history: [Step]
        let controls: Bool
        /// The forms, rendered.
        let forms: [String]
    }

    /// What the hosts of one release report.
    struct Figures: Sendable {
        let version: String
        let hosts: Int
        let activated: Int
        let failed: Int
        let crashed: Int
        let quarantined: Int
        /// The failure rate, as a percentage.
        let rate: String
    }

    /// A step the rollout reached.
    struct Step: Sendable {
        let percent: Int
        let reachedAt: String
        let by: String
        /// The figures it was taken on, as one sentence.
        let summary: String?
    }

    static func read(_ reads: ConsoleReads) throws -> RolloutsPage {
        let page = reads.page
        let (env, all) = try reads.environment()
        return RolloutsPage(
            env: env, environments: EnvironmentChoice.list(all, env),
            rollouts: try reads.rolloutStatuses(environment: env).map { status in
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
                return Rollout(
                    anchor: ConsolePages.escape(rollout.pluginID), pluginID: rollout.pluginID,
                    href: ConsolePages.link("/ui/plugins", rollout.pluginID, env: rollout.environment), from: rollout.previous ?? "–",
                    version: rollout.version, state: rollout.state.rawValue, percent: rollout.percent,
                    stepList: rollout.steps.map { "\($0)%" }.joined(separator: ", "), nextStepAt: status.nextStepAt,
                    maxFailureRate: status.maxFailureRate, minHosts: status.minHosts,
                    figures: ([status.current] + (status.previous.map { [$0] } ?? [])).map { figures in
                        Figures(
                            version: figures.version, hosts: figures.hosts, activated: figures.activated, failed: figures.failed,
                            crashed: figures.crashed, quarantined: figures.quarantined, rate: RolloutFigures.percent(figures.failureRate))
                    },
                    history: status.history.map { step in
                        Step(percent: step.percent, reachedAt: step.reachedAt, by: step.by, summary: step.figures?.summary)
                    },
                    controls: !forms.isEmpty, forms: forms)
            })
    }
}
