public import ArgumentParser
public import PlugboardModel
package import PlugboardStore
public import PlugboardVersioning

/// Staged rollouts of a release: `plugboard rollout …`.
public enum RolloutOperations {
    /// The operations of the group, in the order `plugboard rollout --help` lists them.
    package static let all: [any ParsedOperation.Type] = [
        Start.self, Status.self, Pause.self, Resume.self, Step.self, Abort.self, Tick.self,
    ]

    /// `rollout start ID VERSION --steps --every [--max-failure-rate] [--min-hosts]`.
    public struct Start: ParsedOperation, PluginTargeted, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .rolloutStart, .write, abstract: "Start a staged rollout of a release in the environment (--env).",
            discussion: """
                Needs the plug-in's owners, maintainers or a board admin. The release must be registered, neither yanked \
                nor killed, and later than what the environment's hosts run.
                """, widens: .inEnvironment)
        @OptionGroup public var target: PluginTarget
        @Argument(help: "The release to roll out.") public var version: SemanticVersion
        @Option(help: ArgumentHelp("Percentages of hosts per step, increasing, ending with 100.", valueName: "1,10,50,100"))
        public var steps: RolloutSteps
        @Option(help: ArgumentHelp("How long each step lasts: 30s, 10m, 1h, 1d.", valueName: "duration")) public var every: StepInterval
        @Option(
            help: ArgumentHelp(
                "Abort above this percentage of failing hosts (default \(RolloutPlan.defaultMaxFailureBasisPoints / 100)).",
                valueName: "percent"))
        public var maxFailureRate: FailureRate?
        @Option(help: ArgumentHelp("Hosts that must have loaded the release before the guard judges (default 1).", valueName: "n"))
        public var minHosts: Int?
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why (kept in the audit log).") public var reason: Reason?
        public var env: String?
        public init() {}
        public init(
            id: PluginID, version: SemanticVersion, env: String, steps: RolloutSteps, every: StepInterval, maxFailureRate: FailureRate?,
            minHosts: Int?, reason: Reason?
        ) {
            self.id = id
            self.version = version
            self.env = env
            self.steps = steps
            self.every = every
            self.maxFailureRate = maxFailureRate
            self.minHosts = minHosts
            self.reason = reason
        }

        /// The plan in `environment`.
        package func plan(in environment: String) -> RolloutPlan {
            var plan = RolloutPlan(
                pluginID: id.text, version: version.description, environment: environment, steps: steps.percents,
                everySeconds: every.seconds, reason: reason?.text)
            if let maxFailureRate { plan.maxFailureBasisPoints = maxFailureRate.basisPoints }
            if let minHosts { plan.minHosts = minHosts }
            return plan
        }

        /// The plan's rules (steps that increase to 100, the bounds of each figure), checked as arguments are; the
        /// environment is checked where it is known.
        public func validate() throws {
            do { try plan(in: "default").validate() } catch { throw ValidationError(error.message) }
        }

        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let plan = plan(in: try environment())
            try plan.validate()
            return OperationReply(try board.startRollout(plan, by: actor))
        }
    }

    /// `rollout status ID`: every rollout of the plug-in (in `env` only, when given), with what hosts report.
    public struct Status: ParsedOperation, PluginTargeted {
        public static let declaration = OperationDeclaration(
            .rolloutStatus, .read,
            abstract: "A plug-in's rollouts: steps, schedule, and the guard's figures (every environment unless --env).",
            environmentOptional: true)
        @OptionGroup public var target: PluginTarget
        /// Only this environment's rollout; every environment's when nil.
        public var env: String?
        public init() {}
        public init(id: PluginID, env: String?) {
            self.id = id
            self.env = env
        }
        /// What it answers.
        public typealias Response = [RolloutStatus]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            if let env { try Validate.environment(env) }
            return OperationReply(
                try board.rolloutStatuses(pluginID: id.text, environment: env), notes: TelemetryNotes.drops(board, hosts: true))
        }
        package func text(for statuses: [RolloutStatus]) -> String? {
            guard !statuses.isEmpty else {
                return "\(id) has no rollout\(env.map { " in \($0)" } ?? ""); start one with plugboard rollout start."
            }
            return statuses.map(RolloutText.status).joined(separator: "\n\n")
        }
    }

    /// `rollout pause ID`.
    public struct Pause: ParsedOperation, RolloutAction, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .rolloutPause, .write, abstract: "Hold a running rollout at its step (the guard still acts).")
        @OptionGroup public var target: PluginTarget
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why (kept in the audit log).") public var reason: Reason?
        public var env: String?
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.pauseRollout(pluginID: id.text, environment: try environment(), reason: reason?.text, by: actor))
        }
    }

    /// `rollout resume ID`.
    public struct Resume: ParsedOperation, RolloutAction, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .rolloutResume, .write, abstract: "Resume a paused rollout: its step lasts a full interval from now.", widens: .inEnvironment)
        @OptionGroup public var target: PluginTarget
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why (kept in the audit log).") public var reason: Reason?
        public var env: String?
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.resumeRollout(pluginID: id.text, environment: try environment(), reason: reason?.text, by: actor))
        }
    }

    /// `rollout step ID`: the next step now.
    public struct Step: ParsedOperation, PluginInEnvironmentOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .rolloutStep, .write,
            abstract: "Move a running rollout to its next step now, if its guard holds.",
            discussion: """
                In an environment that requires approvals, the schedule does not move a rollout by itself: when a step is \
                due, it opens this as a change request in the name of whoever started the rollout.
                """, widens: .inEnvironment)
        @OptionGroup public var target: PluginTarget
        public var env: String?
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.stepRollout(pluginID: id.text, environment: try environment(), by: actor))
        }

        /// Opens a change request for each step `ticks` found waiting for approval, unless one is already open.
        package static func requestWaitingSteps(_ ticks: [RolloutTick], on board: Board) -> [String] {
            var said: [String] = []
            for tick in ticks where tick.action == .awaitingApproval {
                do throws(BoardError) {
                    let step = Step(id: try PluginID(validating: tick.pluginID), env: tick.environment)
                    let digest = ChangeDigest.of(operation: name, body: String(decoding: try step.wireBody(), as: UTF8.self))
                    guard try board.pendingChangeRequest(digest: digest) == nil else { continue }
                    // In the name of whoever started it, with the token they started it with: the same person.
                    let author = tick.startedBy ?? Board.rolloutSchedule
                    let token = try board.rolloutStartToken(pluginID: tick.pluginID, environment: tick.environment, author: author)
                    if case .requested(let reply) = try step.submit(
                        on: board, as: try Principal(osUser: author, accessToken: token))
                    {
                        said.append(reply.value.message)
                    }
                } catch {
                    said.append(
                        "the due step of the rollout of \(tick.pluginID) in \(tick.environment) could not be requested: \(error.message)")
                }
            }
            return said
        }
    }

    /// `rollout abort ID`: every host returns to the previous release; a stop.
    public struct Abort: ParsedOperation, RolloutAction, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .rolloutAbort, .stop, abstract: "Abort a rollout: every host returns to the previous release, as fast as for a kill switch.")
        @OptionGroup public var target: PluginTarget
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why (kept in the audit log).") public var reason: Reason?
        public var env: String?
        public init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.abortRollout(pluginID: id.text, environment: try environment(), reason: reason?.text, by: actor))
        }
    }

    /// `rollout tick`: one pass of every rollout's guard and schedule (what `plugboard serve` does four times a second).
    public struct Tick: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .rolloutTick, .write,
            abstract: "Run every rollout's guard and schedule once (serve does four times a second; run this from cron otherwise).")
        public init() {}
        /// What it answers.
        public typealias Response = [RolloutTick]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let ticks = try board.tickRollouts(via: "plugboard rollout tick by \(actor.osUser)\(actor.via.map { " via \($0)" } ?? "")")
            return OperationReply(ticks, notes: Step.requestWaitingSteps(ticks, on: board))
        }
        package static func text(_ ticks: [RolloutTick]) -> String? {
            ticks.isEmpty
                ? "Nothing to do: no rollout failed its guard or was due for its next step." : ticks.map(\.message).joined(separator: "\n")
        }
    }
}

/// A change of a plug-in's running rollout in an environment, with an optional reason: pause, resume, abort.
public protocol RolloutAction: PluginTargeted {
    /// The environment of the rollout.
    var env: String? { get set }
    /// Why, kept in the audit log.
    var reason: Reason? { get set }
    /// swift-argument-parser's: the fields are left for the parser to fill.
    init()
}

extension RolloutAction {
    /// The change of `id`'s rollout in `env`, for `reason`.
    public init(id: PluginID, env: String, reason: Reason?) {
        self.init()
        self.id = id
        self.env = env
        self.reason = reason
    }
}
