import Foundation
import PlugboardFlags
import PlugboardVersioning

/// What a person asks for when starting a rollout (`plugboard rollout start`).
public struct RolloutPlan: Sendable, Hashable {
    /// The plug-in.
    public var pluginID: String
    /// The release to roll out.
    public var version: String
    /// The environment.
    public var environment: String
    /// The percentages of hosts of each step: 1 to 20 of them, increasing, from 1 to 100, the last one 100.
    public var steps: [Int]
    /// How long each step lasts before the next one, in seconds (1 second to 365 days).
    public var everySeconds: Int
    /// The failure rate above which the guard aborts, in basis points of hosts (500 = 5%).
    public var maxFailureBasisPoints: Int = RolloutPlan.defaultMaxFailureBasisPoints
    /// How many hosts must have loaded the release before the guard judges its failure rate.
    public var minHosts: Int = RolloutPlan.defaultMinHosts
    /// Why, kept in the audit log.
    public var reason: String?

    /// A value with each stored property given.
    public init(
        pluginID: String, version: String, environment: String, steps: [Int], everySeconds: Int,
        maxFailureBasisPoints: Int = RolloutPlan.defaultMaxFailureBasisPoints, minHosts: Int = RolloutPlan.defaultMinHosts,
        reason: String? = nil
    ) {
        self.pluginID = pluginID
        self.version = version
        self.environment = environment
        self.steps = steps
        self.everySeconds = everySeconds
        self.maxFailureBasisPoints = maxFailureBasisPoints
        self.minHosts = minHosts
        self.reason = reason
    }

    /// The default failure rate above which the guard aborts: 5%.
    public static let defaultMaxFailureBasisPoints = 500
    /// The default number of hosts the guard waits for: 1.
    public static let defaultMinHosts = 1
}

/// What the hosts of an environment report about one release of a plug-in: the guard's figures.
///
/// A host counts when its last load report names the release and says it loaded it, failed to activate it, was
/// crashed by it or quarantined it. It is failing when it did any of the last three.
public struct RolloutFigures: Sendable, Hashable, Codable {
    /// The release.
    public let version: String
    /// Hosts that loaded (or tried to load) the release.
    public let hosts: Int
    /// Hosts running it.
    public let activated: Int
    /// Hosts where its activation failed.
    public let failed: Int
    /// Hosts it crashed (a crash within the host's crash window).
    public let crashed: Int
    /// Hosts that quarantined it.
    public let quarantined: Int
    /// Hosts with at least one failed activation, crash or quarantine.
    public let failing: Int
    /// `failing` per `hosts`, in percent (0 when no host counts).
    public let failureRate: Double

    public init(version: String, hosts: Int, activated: Int, failed: Int, crashed: Int, quarantined: Int, failing: Int) {
        self.version = version
        self.hosts = hosts
        self.activated = activated
        self.failed = failed
        self.crashed = crashed
        self.quarantined = quarantined
        self.failing = failing
        self.failureRate = hosts == 0 ? 0 : (Double(failing) * 10_000 / Double(hosts)).rounded() / 100
    }

    /// `3 of 4 hosts (75%): 0 failed activations, 3 crashed, 0 quarantined`.
    public var summary: String {
        "\(failing) of \(hosts) host\(hosts == 1 ? "" : "s") failing (\(RolloutFigures.percent(failureRate))): \(failed) failed activation\(failed == 1 ? "" : "s"), \(crashed) crashed, \(quarantined) quarantined"
    }

    /// A percentage as people read it: `5%`, `2.5%`, `33.33%`.
    public static func percent(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        if hundredths % 100 == 0 { return "\(hundredths / 100)%" }
        if hundredths % 10 == 0 { return "\(hundredths / 100).\(hundredths % 100 / 10)%" }
        return "\(hundredths / 100).\(String(format: "%02d", hundredths % 100))%"
    }
}

/// One step a rollout reached, as its history keeps it.
public struct RolloutStepRecord: Sendable, Hashable, Codable {
    /// The step's percentage of hosts.
    public let percent: Int
    /// When it was reached.
    public let reachedAt: String
    /// Who moved the rollout to it (a person, or `plugboard/rollout-schedule`).
    public let by: String
    /// The guard's figures of the new release when the step ended (nil while it is the current step).
    public var figures: RolloutFigures?
    /// The same figures of the previous release.
    public var previousFigures: RolloutFigures?

    /// A value with each stored property given.
    public init(percent: Int, reachedAt: String, by: String, figures: RolloutFigures? = nil, previousFigures: RolloutFigures? = nil) {
        self.percent = percent
        self.reachedAt = reachedAt
        self.by = by
        self.figures = figures
        self.previousFigures = previousFigures
    }
}

/// A rollout with its schedule, its history and what hosts report now (`plugboard rollout status`).
public struct RolloutStatus: Sendable, Hashable, Codable {
    /// The rollout as hosts act on it.
    public let rollout: Rollout
    /// Seconds each step lasts.
    public let everySeconds: Int
    /// The guard's threshold, in percent of hosts.
    public let maxFailureRate: Double
    /// The hosts the guard waits for.
    public let minHosts: Int
    /// When the current step began (or the rollout was resumed).
    public let stepStartedAt: String
    /// When the next step is due, while the rollout runs and a step is left.
    public let nextStepAt: String?
    public let startedAt: String
    public let startedBy: String
    public let endedAt: String?
    public let endedBy: String?
    /// Why it ended (for an abort by the guard, its figures).
    public let endReason: String?
    /// Every step reached, in order.
    public let history: [RolloutStepRecord]
    /// What hosts report now about the new release.
    public let current: RolloutFigures
    /// And about the previous one (nil when there is none).
    public let previous: RolloutFigures?
    /// Hosts of the environment that report the plug-in, by the version they report (none: `-`).
    public let hostsByVersion: [String: Int]

    /// A value with each stored property given.
    package init(
        rollout: Rollout, everySeconds: Int, maxFailureRate: Double, minHosts: Int, stepStartedAt: String, nextStepAt: String?,
        startedAt: String, startedBy: String, endedAt: String?, endedBy: String?, endReason: String?, history: [RolloutStepRecord],
        current: RolloutFigures, previous: RolloutFigures?, hostsByVersion: [String: Int]
    ) {
        self.rollout = rollout
        self.everySeconds = everySeconds
        self.maxFailureRate = maxFailureRate
        self.minHosts = minHosts
        self.stepStartedAt = stepStartedAt
        self.nextStepAt = nextStepAt
        self.startedAt = startedAt
        self.startedBy = startedBy
        self.endedAt = endedAt
        self.endedBy = endedBy
        self.endReason = endReason
        self.history = history
        self.current = current
        self.previous = previous
        self.hostsByVersion = hostsByVersion
    }
}

/// What one pass of the rollouts' schedule and guard did (`Board.tickRollouts(via:now:)`).
public struct RolloutTick: Sendable, Hashable, Codable {
    /// What happened to the rollout.
    public enum Action: String, Sendable, Hashable, Codable, CaseIterable {
        /// The guard aborted it.
        case aborted
        /// It moved to its next step.
        case stepped
        /// It reached its last step.
        case completed
        /// It is due for its next step, which waits for an approved change request (a protected environment).
        case awaitingApproval = "awaiting_approval"
    }

    public let pluginID: String
    public let environment: String
    public let version: String
    public let action: Action
    /// One sentence: what happened, with the figures.
    public let message: String
    /// Who started the rollout, for a step that waits for approval: the author of its change request.
    public let startedBy: String?

    /// A value with each stored property given.
    package init(pluginID: String, environment: String, version: String, action: Action, message: String, startedBy: String? = nil) {
        self.pluginID = pluginID
        self.environment = environment
        self.version = version
        self.action = action
        self.message = message
        self.startedBy = startedBy
    }
}
