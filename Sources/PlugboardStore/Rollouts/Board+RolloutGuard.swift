package import Foundation
import GRDB
package import PlugboardModel

extension Board {
    /// The principal of the guard's aborts.
    package static let rolloutGuard = "plugboard/rollout-guard"
    /// The principal of the schedule's steps.
    package static let rolloutSchedule = "plugboard/rollout-schedule"

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
    /// - Parameters:
    ///   - via: How the pass runs (`plugboard serve`, `plugboard rollout tick by alice`), recorded in the audit log.
    ///   - now: The time steps fall due by; the board's ``clock`` when nil.
    package func tickRollouts(via: String, now: Date? = nil) throws(BoardError) -> [RolloutTick] {
        let now = now ?? clock.date()
        let active = try read { db in try RolloutQueries.records(db, activeOnly: true) }
        var ticks: [RolloutTick] = []
        for record in active {
            let reports = try readTelemetry(empty: []) { db in try RolloutQueries.reported(db, record.pluginID, record.environment) }
            let figures = RolloutRules.Figures(record, reports)
            if let tick = try guardAbort(record, figures, via: via) {
                ticks.append(tick)
            } else if let due = record.nextStepAt, due <= now {
                if try protection(environment: record.environment).required > 0 {
                    // A step widens what runs: in a protected environment it waits for an approved change request.
                    let next = record.rollout.step + 1
                    ticks.append(
                        RolloutTick(
                            pluginID: record.pluginID, environment: record.environment, version: record.rollout.version,
                            action: .awaitingApproval,
                            message:
                                "The rollout of \(record.name) is due for step \(next + 1) of \(record.rollout.steps.count) (\(record.rollout.steps[next])%); \(record.environment) is protected, so the step waits for an approved change request (rollout step).",
                            startedBy: record.startedBy))
                } else if let tick = try scheduleStep(record, figures, via: via) {
                    ticks.append(tick)
                }
            }
        }
        return ticks
    }

    /// Whether a rollout is running or paused: only then has ``tickRollouts(via:now:)`` anything to do, so a schedule
    /// that found none need not pass again until the board changes.
    package func rolloutsUnderWay() throws(BoardError) -> Bool {
        try read { db in try !RolloutQueries.records(db, activeOnly: true).isEmpty }
    }

    /// Aborts `record` as the guard when its figures exceed its threshold; nil when the guard holds (or the rollout
    /// changed since it was read).
    private func guardAbort(_ record: RolloutRecord, _ figures: RolloutRules.Figures, via: String) throws(BoardError) -> RolloutTick? {
        let current = figures.current
        guard current.hosts >= record.minHosts, current.failing * 10_000 > record.maxFailureBasisPoints * current.hosts else { return nil }
        let threshold = RolloutFigures.percent(Double(record.maxFailureBasisPoints) / 100)
        var why =
            "the guard aborted at \(record.rollout.percent)% of hosts: \(record.pluginID)@\(record.rollout.version) has \(current.summary), above \(threshold) with at least \(record.minHosts) host\(record.minHosts == 1 ? "" : "s") reporting"
        if let previous = figures.previous { why += "; \(previous.version) has \(previous.summary)" }
        let changed = try scheduledChange(record, as: Self.rolloutGuard, via: via, action: .rolloutAbort, reason: why) { now in
            RolloutRules.ended(record, .aborted, by: Self.rolloutGuard, at: now, reason: why, figures: figures)
        }
        guard changed else { return nil }
        return RolloutTick(
            pluginID: record.pluginID, environment: record.environment, version: record.rollout.version, action: .aborted,
            message: "Aborted the rollout of \(record.name): \(why).")
    }

    /// Moves `record` to its next step as the schedule (completing it at its last step).
    private func scheduleStep(_ record: RolloutRecord, _ figures: RolloutRules.Figures, via: String) throws(BoardError) -> RolloutTick? {
        let next = record.rollout.step + 1
        let last = next == record.rollout.steps.count - 1
        let percent = record.rollout.steps[next]
        let ended = figures.current.summary
        let reason = "step \(next + 1) of \(record.rollout.steps.count) (\(percent)%); the step before ended with \(ended)"
        let changed = try scheduledChange(record, as: Self.rolloutSchedule, via: via, action: .rolloutStep, reason: reason) { now in
            RolloutRules.stepped(record, figures, by: Self.rolloutSchedule, at: now)
        }
        guard changed else { return nil }
        return RolloutTick(
            pluginID: record.pluginID, environment: record.environment, version: record.rollout.version,
            action: last ? .completed : .stepped,
            message: last
                ? "The rollout of \(record.name) completed: every host may run it (the last step ended with \(ended))."
                : "The rollout of \(record.name) moved to step \(next + 1) of \(record.rollout.steps.count): \(percent)% of hosts (the step before ended with \(ended))."
        )
    }

    /// One audited change of `record` by the guard or the schedule (`principal`, via `via`): `after` (given the change's
    /// time) replaces it, unless the rollout changed since the pass read it (false then, and nothing is written).
    private func scheduledChange(
        _ record: RolloutRecord, as principal: String, via: String, action: AuditAction, reason: String, _ after: (String) -> RolloutRecord
    ) throws(BoardError) -> Bool {
        let actor = try Principal(osUser: principal, via: via)
        return try change(actor, refusal: AuditEntry(action: action, targetType: "rollout", targetID: record.pluginID)) {
            change -> Bool in
            guard try RolloutQueries.record(change.db, record.pluginID, record.environment) == record else { return false }
            try RolloutRules.write(change, action, before: record, after: after(change.now), reason: reason)
            return true
        }
    }
}
