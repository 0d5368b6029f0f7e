package import Foundation
import GRDB
package import PlugboardModel

extension Board {
    /// The principal of the guard's aborts.
    public static let rolloutGuard = "plugboard/rollout-guard"
    /// The principal of the schedule's steps.
    public static let rolloutSchedule = "plugboard/rollout-schedule"

    /// One pass of every running or paused rollout's guard and schedule (`plugboard serve` runs it four times a second,
    /// `plugboard rollout tick` once):
    ///
    /// 1. The guard reads what the hosts of the rollout's environment last reported about the new release. When at least
    ///    the rollout's minimum of hosts loaded it and more than its maximum rate of them failed (a failed activation, a
    ///    crash, a quarantine), it aborts the rollout as ``rolloutGuard``, naming the figures: every host returns to the
    ///    previous release, and nothing else changes.
    /// 2. Otherwise a running rollout whose step lasted its interval moves to its next step as ``rolloutSchedule``; the
    ///    last step (100%) completes it. One step a pass: no step is skipped, however late the pass.
    ///
    /// Each action is one audited change, made only if the rollout is still as the pass read it.
    ///
    /// - Parameter via: How the pass runs (`plugboard serve`, `plugboard rollout tick by alice`), recorded in the audit log.
    package func tickRollouts(via: String, now: Date = Date()) throws(BoardError) -> [RolloutTick] {
        let active = try read { db in try RolloutQueries.records(db, activeOnly: true) }
        var ticks: [RolloutTick] = []
        for record in active {
            let reports = try readTelemetry(empty: []) { db in try RolloutQueries.reported(db, record.pluginID, record.environment) }
            let current = RolloutQueries.figures(of: record.rollout.version, in: reports, since: record.startedAt, cohort: record.rollout)
            let previous = record.rollout.previous.map { RolloutQueries.figures(of: $0, in: reports, since: nil) }
            if let tick = try guardAbort(record, current: current, previous: previous, via: via) {
                ticks.append(tick)
            } else if let due = record.nextStepAt, due <= now {
                if let tick = try scheduleStep(record, current: current, previous: previous, via: via) { ticks.append(tick) }
            }
        }
        return ticks
    }

    /// Aborts `record` as the guard when its figures exceed its threshold; nil when the guard holds (or the rollout
    /// changed since it was read).
    private func guardAbort(_ record: RolloutRecord, current: RolloutFigures, previous: RolloutFigures?, via: String) throws(BoardError)
        -> RolloutTick?
    {
        guard current.hosts >= record.minHosts, current.failing * 10_000 > record.maxFailureBasisPoints * current.hosts else { return nil }
        let threshold = RolloutFigures.percent(Double(record.maxFailureBasisPoints) / 100)
        var why =
            "the guard aborted at \(record.rollout.percent)% of hosts: \(record.pluginID)@\(record.rollout.version) has \(current.summary), above \(threshold) with at least \(record.minHosts) host\(record.minHosts == 1 ? "" : "s") reporting"
        if let previous { why += "; \(previous.version) has \(previous.summary)" }
        let actor = try Principal(osUser: Self.rolloutGuard, via: via)
        let changed = try change(actor, refusal: AuditEntry(action: "rollout.abort", targetType: "rollout", targetID: record.pluginID)) {
            change -> Bool in
            guard try RolloutQueries.record(change.db, record.pluginID, record.environment) == record else { return false }
            let after = RolloutRules.ended(
                record, .aborted, by: Self.rolloutGuard, at: change.now, reason: why, figures: (current, previous))
            try RolloutQueries.save(change.db, after)
            try change.record(
                AuditEntry(
                    action: "rollout.abort", targetType: "rollout", targetID: "\(record.pluginID)@\(record.rollout.version)",
                    environment: record.environment, reason: why, before: record.json, after: after.json))
            return true
        }
        guard changed else { return nil }
        return RolloutTick(
            pluginID: record.pluginID, environment: record.environment, version: record.rollout.version, action: .aborted,
            message: "Aborted the rollout of \(record.name): \(why).")
    }

    /// Moves `record` to its next step as the schedule (completing it at its last step).
    private func scheduleStep(_ record: RolloutRecord, current: RolloutFigures, previous: RolloutFigures?, via: String) throws(BoardError)
        -> RolloutTick?
    {
        let actor = try Principal(osUser: Self.rolloutSchedule, via: via)
        let next = record.rollout.step + 1
        let last = next == record.rollout.steps.count - 1
        let percent = record.rollout.steps[next]
        let changed = try change(actor, refusal: AuditEntry(action: "rollout.step", targetType: "rollout", targetID: record.pluginID)) {
            change -> Bool in
            guard try RolloutQueries.record(change.db, record.pluginID, record.environment) == record else { return false }
            var after = record.with(state: last ? .completed : .running, step: next)
            after.history[after.history.count - 1].figures = current
            after.history[after.history.count - 1].previousFigures = previous
            after.history.append(RolloutStepRecord(percent: percent, reachedAt: change.now, by: Self.rolloutSchedule))
            after.stepStartedAt = change.now
            if last {
                after.endedAt = change.now
                after.endedBy = Self.rolloutSchedule
            }
            try RolloutQueries.save(change.db, after)
            try change.record(
                AuditEntry(
                    action: "rollout.step", targetType: "rollout", targetID: "\(record.pluginID)@\(record.rollout.version)",
                    environment: record.environment,
                    reason:
                        "step \(next + 1) of \(record.rollout.steps.count) (\(percent)%); the step before ended with \(current.summary)",
                    before: record.json, after: after.json))
            return true
        }
        guard changed else { return nil }
        return RolloutTick(
            pluginID: record.pluginID, environment: record.environment, version: record.rollout.version,
            action: last ? .completed : .stepped,
            message: last
                ? "The rollout of \(record.name) completed: every host may run it (the last step ended with \(current.summary))."
                : "The rollout of \(record.name) moved to step \(next + 1) of \(record.rollout.steps.count): \(percent)% of hosts (the step before ended with \(current.summary))."
        )
    }
}
