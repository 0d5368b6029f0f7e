import ArgumentParser
import PlugboardAdmin
import PlugboardModel
import PlugboardStore

/// `plugboard rollout …`: a release reaches an environment's hosts in steps, under a guard that stops it by itself.
struct RolloutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollout", abstract: "Roll a release out to hosts in steps, guarded by their failure rate.",
        discussion: """
            A rollout lets a cohort of the environment's hosts run the new release while the others stay on the release \
            they ran. Each host decides its cohort from a stable hash of its id. Steps widen the cohort on schedule \
            (plugboard serve advances them; plugboard rollout tick does on a board nobody serves) while the guard holds: \
            when more than --max-failure-rate of at least --min-hosts hosts that loaded the release failed to activate \
            it, crashed or quarantined it, the guard aborts the rollout and every host returns to the previous release. \
            Once a plug-in is released by rollouts in an environment, its later releases there wait for a rollout of \
            their own (roll out the running release with --steps 100 to begin).
            """,
        subcommands: [Start.self, Status.self, Pause.self, Resume.self, Abort.self, Tick.self])

    struct Start: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "start", abstract: "Start a staged rollout of a release in the environment (--env).",
            discussion: """
                Needs the plug-in's owners, maintainers or a board admin. The release must be registered, neither yanked \
                nor killed, and later than what the environment's hosts run.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Argument(help: "The release to roll out.") var version: String
        @Option(name: .long, help: ArgumentHelp("Percentages of hosts per step, increasing, ending with 100.", valueName: "1,10,50,100"))
        var steps: String
        @Option(name: .long, help: ArgumentHelp("How long each step lasts: 30s, 10m, 1h, 1d.", valueName: "duration")) var every: String
        @Option(
            name: .long,
            help: ArgumentHelp(
                "Abort above this percentage of failing hosts (default \(RolloutPlan.defaultMaxFailureBasisPoints / 100)).",
                valueName: "percent"))
        var maxFailureRate: String?
        @Option(
            name: .long, help: ArgumentHelp("Hosts that must have loaded the release before the guard judges (default 1).", valueName: "n"))
        var minHosts: Int?
        @Option(name: .long, help: "Why (kept in the audit log).") var reason: String?

        func request() throws(BoardError) -> RolloutRequests.Start {
            RolloutRequests.Start(
                id: id, version: version, env: try global.environment(), steps: steps, every: every, maxFailureRate: maxFailureRate,
                minHosts: minHosts, reason: reason)
        }

        func validate() throws {
            try checkArguments { () throws(BoardError) in _ = try request().plan() }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(try request()))
        }
    }

    struct Status: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "A plug-in's rollouts: steps, schedule, and the guard's figures (every environment unless --env).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String

        func validate() throws {
            try checkArguments { () throws(BoardError) in try Validate.pluginID(id) }
        }

        func execute(_ output: Output) throws(BoardError) {
            let statuses = try global.perform(RolloutRequests.Status(id: id, env: global.env))
            if output.json {
                output.printJSON(statuses)
                return
            }
            guard !statuses.isEmpty else {
                print("\(id) has no rollout\(global.env.map { " in \($0)" } ?? ""); start one with plugboard rollout start.")
                return
            }
            for (index, status) in statuses.enumerated() {
                if index > 0 { print("") }
                RolloutText.print(status)
            }
        }
    }

    struct Pause: RolloutHold {
        static let configuration = CommandConfiguration(
            commandName: "pause", abstract: "Hold a running rollout at its step (the guard still acts).")
        static let paused = true
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Option(name: .long, help: "Why (kept in the audit log).") var reason: String?
    }

    struct Resume: RolloutHold {
        static let configuration = CommandConfiguration(
            commandName: "resume", abstract: "Resume a paused rollout: its step lasts a full interval from now.")
        static let paused = false
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Option(name: .long, help: "Why (kept in the audit log).") var reason: String?
    }

    struct Abort: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "abort", abstract: "Abort a rollout: every host returns to the previous release, as fast as for a kill switch.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Option(name: .long, help: "Why (kept in the audit log).") var reason: String?

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(RolloutRequests.Abort(id: id, env: try global.environment(), reason: reason)))
        }
    }

    struct Tick: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "tick",
            abstract: "Run every rollout's guard and schedule once (serve does four times a second; run this from cron otherwise).")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let ticks = try global.perform(RolloutRequests.Tick())
            if output.json {
                output.printJSON(ticks)
                return
            }
            if ticks.isEmpty { print("Nothing to do: no rollout failed its guard or was due for its next step.") }
            for tick in ticks { print(multiline(tick.message)) }
        }
    }
}

/// `rollout pause` and `rollout resume`: one request, told which.
protocol RolloutHold: RemoteCommand {
    static var paused: Bool { get }
    var global: GlobalOptions { get }
    var id: String { get }
    var reason: String? { get }
}

extension RolloutHold {
    func execute(_ output: Output) throws(BoardError) {
        output.report(try global.perform(RolloutRequests.Hold(id: id, env: try global.environment(), paused: Self.paused, reason: reason)))
    }
}

/// How `rollout status` shows one rollout.
enum RolloutText {
    static func print(_ status: RolloutStatus) {
        let rollout = status.rollout
        let where_ =
            rollout.state == .running || rollout.state == .paused
            ? ", step \(rollout.step + 1) of \(rollout.steps.count) (\(rollout.percent)% of hosts)" : ""
        Swift.print(
            "\(rollout.pluginID)@\(rollout.version) in \(rollout.environment): \(rollout.state.rawValue)\(where_); previous \(rollout.previous ?? "none")"
        )
        Swift.print(
            "  steps \(rollout.steps.map { "\($0)%" }.joined(separator: ", ")) every \(duration(status.everySeconds)); the guard aborts above \(RolloutFigures.percent(status.maxFailureRate)) failing of at least \(status.minHosts) host\(status.minHosts == 1 ? "" : "s")"
        )
        Swift.print("  started \(status.startedAt) by \(Validate.escaped(status.startedBy))")
        if let next = status.nextStepAt { Swift.print("  next step due at \(next)") }
        if let ended = status.endedAt {
            Swift.print(
                "  \(rollout.state == .aborted ? "aborted" : "ended") \(ended) by \(Validate.escaped(status.endedBy ?? "-"))\(status.endReason.map { ": \(Validate.escaped($0))" } ?? "")"
            )
        }
        var table = Table(
            "STEP", "SHARE", "REACHED", "BY", "RELEASE", "HOSTS", "ACTIVE", "FAILED", "CRASHED", "QUARANTINED", "RATE", "PREVIOUS RATE")
        for (index, step) in status.history.enumerated() {
            let isCurrent = index == status.history.count - 1 && status.endedAt == nil
            let figures = isCurrent ? status.current : step.figures
            let previous = isCurrent ? status.previous : step.previousFigures
            table.add(
                "\(index + 1)\(isCurrent ? " (now)" : "")", "\(step.percent)%", step.reachedAt, step.by, rollout.version,
                figures.map { String($0.hosts) } ?? "-", figures.map { String($0.activated) } ?? "-",
                figures.map { String($0.failed) } ?? "-",
                figures.map { String($0.crashed) } ?? "-", figures.map { String($0.quarantined) } ?? "-",
                figures.map { RolloutFigures.percent($0.failureRate) } ?? "-",
                previous.map { "\(RolloutFigures.percent($0.failureRate)) of \($0.hosts) on \($0.version)" } ?? "-")
        }
        table.print(empty: "No step reached.")
        let running = status.hostsByVersion.sorted { $0.key < $1.key }.map { "\($0.value) on \($0.key)" }
        Swift.print("  hosts running it now: \(running.isEmpty ? "none reported" : running.joined(separator: ", "))")
    }

    static func duration(_ seconds: Int) -> String {
        if seconds % 86400 == 0 { return "\(seconds / 86400)d" }
        if seconds % 3600 == 0 { return "\(seconds / 3600)h" }
        if seconds % 60 == 0 { return "\(seconds / 60)m" }
        return "\(seconds)s"
    }
}
