import PlugboardModel
import PlugboardOperations

/// `/ui/rollouts`: each rollout of an environment, its step, schedule and the guard's figures per release, with pause,
/// resume and abort.
struct RolloutsPage: ConsoleView {
    static let template = "rollouts"

    let switcher: EnvironmentSwitcher
    let rollouts: [Rollout]

    /// One plug-in's rollout: its status, and what the template cannot read of it.
    struct Rollout: Sendable {
        let status: RolloutStatus
        /// The plug-in's id as an element id's part.
        let anchor: String
        /// The plug-in's page in the environment.
        let href: String
        /// The percentage of hosts of its step.
        let percent: Int
        let stepList: String
        /// The figures of the release rolled out and of the one it replaces, each with its failure rate.
        let figures: [Figures]
        /// The steps it reached, each with the figures it was taken on as one sentence.
        let history: [Step]
        let controls: ControlsView?
    }

    /// What the hosts of one release report.
    struct Figures: Sendable {
        let figures: RolloutFigures
        /// The failure rate, as a percentage.
        let rate: String
    }

    /// A step the rollout reached.
    struct Step: Sendable {
        let step: RolloutStepRecord
        /// The figures it was taken on, as one sentence.
        let summary: String?
    }

    static func read(_ reads: ConsoleReads) throws -> RolloutsPage {
        let page = reads.page
        let switcher = try reads.switcher(action: "/ui/rollouts")
        return RolloutsPage(
            switcher: switcher,
            rollouts: try reads.rolloutStatuses(environment: switcher.env).map { status in
                let rollout = status.rollout
                let fixed = ["id": rollout.pluginID, "env": rollout.environment]
                let running = rollout.state == .running || rollout.state == .paused
                let forms: [String?] =
                    running
                    ? [
                        rollout.state == .running
                            ? ConsoleForms.form(RolloutOperations.Pause.self, page, fixed: fixed, button: "Pause")
                            : ConsoleForms.form(RolloutOperations.Resume.self, page, fixed: fixed, button: "Resume"),
                        ConsoleForms.form(RolloutOperations.Abort.self, page, fixed: fixed, button: "Abort", danger: true),
                    ] : []
                return Rollout(
                    status: status,
                    anchor: ConsolePages.escape(rollout.pluginID),
                    href: ConsolePages.link("/ui/plugins", rollout.pluginID, env: rollout.environment),
                    percent: rollout.percent, stepList: rollout.steps.map { "\($0)%" }.joined(separator: ", "),
                    figures: ([status.current] + (status.previous.map { [$0] } ?? [])).map { figures in
                        Figures(figures: figures, rate: RolloutFigures.percent(figures.failureRate))
                    },
                    history: status.history.map { Step(step: $0, summary: $0.figures?.summary) }, controls: .of(forms))
            })
    }
}
