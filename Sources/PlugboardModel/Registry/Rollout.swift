import Crypto
import Foundation
public import PlugboardVersioning

/// A staged rollout of one release of a plug-in in one environment, as hosts act on it.
///
/// While a rollout runs (or is paused), a host in its cohort may run ``version``; every host may run a release up to
/// ``previous`` (the one the others stay on, and where a host of the cohort falls back when ``version`` is killed or
/// does not suit it). No other release: one registered between ``previous`` and ``version`` was never rolled out, and
/// one after ``version`` waits for a rollout of its own (``allows(_:forHost:)``). Steps widen the cohort (see
/// ``percent``); an aborted rollout puts every host back on ``previous``; a completed one lets every host run
/// ``version``. Once a plug-in is released by rollouts in an environment, its rollout bounds what any host there runs.
/// A pinned version is an explicit choice and is not bounded.
///
/// A host decides its cohort itself, from its own id (``RolloutCohort``), so it stays in its cohort across restarts
/// and reports, and the cohort of a step contains the cohorts of the steps before it.
public struct Rollout: Sendable, Hashable, Codable {
    /// Where a rollout is.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// Steps advance on schedule while the guard holds.
        case running
        /// Held at its step by a person; the guard still acts.
        case paused
        /// Its last step (100%) was reached: every host may run ``Rollout/version``.
        case completed
        /// Stopped by a person or the guard: every host runs ``Rollout/previous``.
        case aborted
    }

    /// The plug-in.
    public let pluginID: String
    /// The environment.
    public let environment: String
    /// The release rolled out, as registered.
    public let version: String
    /// The release hosts ran before (the highest release that was neither yanked nor killed below ``version``), or
    /// nil when there was none: hosts outside the cohort then run no release of the plug-in.
    public let previous: String?
    /// The percentages of hosts of each step, increasing, the last one 100.
    public let steps: [Int]
    /// The index of the current step in ``steps``.
    public let step: Int
    /// Where the rollout is.
    public let state: State

    /// The percentage of hosts that may run ``version`` now: the current step's, 100 once completed, 0 once aborted.
    public var percent: Int {
        switch state {
        case .completed: return 100
        case .aborted: return 0
        case .running, .paused: return steps.indices.contains(step) ? steps[step] : 0
        }
    }

    /// A value with each stored property given.
    package init(pluginID: String, environment: String, version: String, previous: String?, steps: [Int], step: Int, state: State) {
        self.pluginID = pluginID
        self.environment = environment
        self.version = version
        self.previous = previous
        self.steps = steps
        self.step = step
        self.state = state
    }

    /// Whether the host `hostID` is in the cohort that may run ``version`` now.
    public func includes(hostID: String) -> Bool {
        RolloutCohort.contains(hostID: hostID, pluginID: pluginID, percent: percent)
    }

    /// Whether the host `hostID` may run `release` under this rollout: ``version`` itself (by precedence) when the host
    /// is in the cohort, or any release up to ``previous``.
    public func allows(_ release: SemanticVersion, forHost hostID: String) -> Bool {
        if let target = SemanticVersion(parsing: version), !(release < target), !(target < release), includes(hostID: hostID) {
            return true
        }
        guard let previous = previous.flatMap(SemanticVersion.init(parsing:)) else { return false }
        return !(previous < release)
    }
}

/// Which hosts are in a rollout's cohort: a stable hash of the plug-in id and the host id puts each host in one of
/// 10,000 buckets, and a step of P% holds the buckets below P × 100. The same host is in the same bucket on every
/// machine and at every start, so it keeps its cohort, and every later step holds the hosts of the earlier ones.
public enum RolloutCohort {
    /// The host's bucket for the plug-in, 0 to 9,999: the first four bytes of SHA-256(plug-in id, newline, host id),
    /// big-endian, modulo 10,000.
    public static func bucket(hostID: String, pluginID: String) -> Int {
        let digest = SHA256.hash(data: Data("\(pluginID)\n\(hostID)".utf8))
        let value = digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Int(value % 10_000)
    }

    /// Whether the host is in the cohort of a step of `percent`%.
    public static func contains(hostID: String, pluginID: String, percent: Int) -> Bool {
        percent >= 100 || (percent > 0 && bucket(hostID: hostID, pluginID: pluginID) < percent * 100)
    }
}
