import Foundation
package import PlugboardModel
package import PlugboardStore

/// Staged rollouts of a release: the requests behind `plugboard rollout …`.
package enum RolloutRequests {
    /// `--steps 1,10,50,100`: the percentages of hosts of each step.
    package static func steps(_ text: String) throws(BoardError) -> [Int] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let steps = parts.compactMap { Int($0) }
        guard text.utf8.count <= 200, steps.count == parts.count, !steps.isEmpty else {
            throw BoardError(
                .invalidInput,
                "--steps '\(Validate.escaped(String(text.prefix(200))))' is not a list of percentages: use for example 1,10,50,100")
        }
        return steps
    }

    /// `--every 30s|10m|1h|1d`: seconds.
    package static func every(_ text: String) throws(BoardError) -> Int {
        guard let seconds = AdminParse.duration(text, units: "smhd"), seconds <= 31_536_000 else {
            throw BoardError(
                .invalidInput,
                "--every '\(Validate.escaped(String(text.prefix(40))))' is not a duration from 1 second to 365 days: use for example 30s, 10m, 1h or 1d"
            )
        }
        return Int(seconds)
    }

    /// `--max-failure-rate 5` or `2.5` (percent of hosts): basis points.
    package static func failureRate(_ text: String) throws(BoardError) -> Int {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 6, parts.count <= 2,
            parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            parts.count == 1 || parts[1].count <= 2, let value = Double(text), (0...100).contains(value)
        else {
            throw BoardError(
                .invalidInput,
                "--max-failure-rate '\(Validate.escaped(String(text.prefix(40))))' is not a percentage from 0 to 100 (for example 5 or 2.5)"
            )
        }
        return Int((value * 100).rounded())
    }

    /// `rollout start ID VERSION --steps --every [--max-failure-rate] [--min-hosts]`.
    package struct Start: AdminRequest {
        package var id: String
        package var version: String
        package var env: String
        package var steps: String
        package var every: String
        package var maxFailureRate: String?
        package var minHosts: Int?
        package var reason: String?
        package init(
            id: String, version: String, env: String, steps: String, every: String, maxFailureRate: String?, minHosts: Int?, reason: String?
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
        package static let route = AdminRoute(
            "rollout.start", .post, "/rollouts", .write,
            summary: "Start a staged rollout of a release in the environment: a cohort of hosts per step, guarded.",
            parameters: [
                AdminParameter("id", .body, required: true, "The plug-in id."),
                AdminParameter("version", .body, required: true, "The release to roll out."), .env(.body),
                AdminParameter("steps", .body, required: true, "Percentages of hosts per step, increasing, ending with 100: 1,10,50,100."),
                AdminParameter("every", .body, required: true, "How long each step lasts: 30s, 10m, 1h, 1d."),
                AdminParameter("max_failure_rate", .body, "The guard aborts above this percentage of failing hosts (default 5)."),
                AdminParameter(
                    "min_hosts", .body, .integer, "The hosts that must have loaded the release before the guard judges (default 1)."),
                AdminParameter("reason", .body, "Why."),
            ], response: "ChangeResult")
        package func plan() throws(BoardError) -> RolloutPlan {
            try Validate.pluginID(id)
            try Validate.environment(env)
            _ = try AdminParse.version(version)
            if let reason { try Validate.reason(reason) }
            var plan = RolloutPlan(
                pluginID: id, version: version, environment: env, steps: try RolloutRequests.steps(steps),
                everySeconds: try RolloutRequests.every(every), reason: reason)
            if let maxFailureRate { plan.maxFailureBasisPoints = try RolloutRequests.failureRate(maxFailureRate) }
            if let minHosts { plan.minHosts = minHosts }
            try plan.validate()
            return plan
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(try board.startRollout(try plan(), by: actor))
        }
    }

    /// `rollout status ID`: every rollout of the plug-in (in `env` only, when given), with what hosts report.
    package struct Status: AdminRequest {
        package var id: String
        package var env: String?
        package init(id: String, env: String?) {
            self.id = id
            self.env = env
        }
        package static let route = AdminRoute(
            "rollout.status", .get, "/rollouts/{id}", .read,
            summary: "A plug-in's rollouts: steps, schedule, and the guard's figures for the new and the previous release.",
            parameters: [.path("id", "The plug-in id."), AdminParameter("env", .query, "Only this environment.")],
            response: "RolloutStatusList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[RolloutStatus]> {
            AdminReply(try board.rolloutStatuses(pluginID: id, environment: env), notes: TelemetryNotes.drops(board, hosts: true))
        }
    }

    /// `rollout pause ID` and `rollout resume ID`.
    package struct Hold: AdminRequest {
        package var id: String
        package var env: String
        /// True to pause, false to resume.
        package var paused: Bool
        package var reason: String?
        package init(id: String, env: String, paused: Bool, reason: String?) {
            self.id = id
            self.env = env
            self.paused = paused
            self.reason = reason
        }
        package static let route = AdminRoute(
            "rollout.pause", .put, "/rollouts/{id}/paused", .write,
            summary: "Pause a running rollout at its step (the guard still acts), or resume a paused one.",
            parameters: [
                .path("id", "The plug-in id."), .env(.body),
                AdminParameter("paused", .body, .boolean, required: true, "True to pause, false to resume."),
                AdminParameter("reason", .body, "Why."),
            ], response: "ChangeResult")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(
                paused
                    ? try board.pauseRollout(pluginID: id, environment: env, reason: reason, by: actor)
                    : try board.resumeRollout(pluginID: id, environment: env, reason: reason, by: actor))
        }
    }

    /// `rollout abort ID`: every host returns to the previous release. Served in the lane of kill switches.
    package struct Abort: AdminRequest {
        package var id: String
        package var env: String
        package var reason: String?
        package init(id: String, env: String, reason: String?) {
            self.id = id
            self.env = env
            self.reason = reason
        }
        package static let route = AdminRoute(
            "rollout.abort", .post, "/rollouts/{id}/abort", .write,
            summary: "Abort a rollout: every host stops the new release at its next reading, as for a kill switch.",
            parameters: [.path("id", "The plug-in id."), .env(.body), AdminParameter("reason", .body, "Why.")],
            response: "ChangeResult", lane: .stop)
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(try board.abortRollout(pluginID: id, environment: env, reason: reason, by: actor))
        }
    }

    /// `rollout tick`: one pass of every rollout's guard and schedule (what `plugboard serve` does four times a second).
    package struct Tick: AdminRequest {
        package init() {}
        package static let route = AdminRoute(
            "rollout.tick", .post, "/rollouts/tick", .write,
            summary: "Run every rollout's guard and schedule once: abort what fails, move what is due to its next step.",
            parameters: [], response: "RolloutTickList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[RolloutTick]> {
            AdminReply(try board.tickRollouts(via: "plugboard rollout tick by \(actor.osUser)\(actor.via.map { " via \($0)" } ?? "")"))
        }
    }
}
