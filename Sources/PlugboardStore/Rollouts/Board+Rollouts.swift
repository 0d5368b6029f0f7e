import Foundation
import GRDB
package import PlugboardModel
import PlugboardVersioning

extension Board {
    /// Starts a staged rollout of `plan.version` in `plan.environment` (see `Rollout` in PlugboardModel): the first step's cohort of
    /// hosts may run it at once, the others stay on the release they ran. One audited change (`rollout.start`).
    ///
    /// Needs the plug-in's owners, its maintainers or a board admin. The release must be registered, neither yanked nor
    /// killed nor a prerelease, and later than what hosts run; a running or paused rollout of the plug-in in the
    /// environment must end first. A rollout that ended (completed or aborted) is replaced.
    package func startRollout(_ plan: RolloutPlan, by actor: Principal) throws(BoardError) -> ChangeResult {
        try RolloutRules.validate(plan)
        guard let asked = SemanticVersion(parsing: plan.version) else {
            throw BoardError(.invalidInput, "'\(Validate.escaped(plan.version))' is not a semantic version (for example 1.2.0)")
        }
        let target = "\(plan.pluginID)@\(plan.version)"
        return try change(
            actor,
            refusal: AuditEntry(action: .rolloutStart, targetType: "rollout", targetID: target, environment: plan.environment),
            requiring: .pluginMaintainers(plan.pluginID, doing: "start a rollout of")
        ) { change in
            let db = change.db
            try RegistryQueries.requireEnvironment(db, plan.environment)
            guard let version = try VersionLookup.registered(db, plan.pluginID, asked) else {
                throw BoardError.notFound("\(plan.pluginID)@\(plan.version) is not registered; see plugboard plugin show \(plan.pluginID)")
            }
            let existing = try RolloutQueries.record(db, plan.pluginID, plan.environment)
            let previous = try RolloutRules.previous(db, plan.pluginID, version: version, existing: existing)
            let now = change.now
            let first = RolloutStepRecord(percent: plan.steps[0], reachedAt: now, by: change.actor.osUser)
            let record = RolloutRecord(
                rollout: Rollout(
                    pluginID: plan.pluginID, environment: plan.environment, version: version, previous: previous, steps: plan.steps,
                    step: 0, state: plan.steps.count == 1 ? .completed : .running),
                everySeconds: plan.everySeconds, maxFailureBasisPoints: plan.maxFailureBasisPoints, minHosts: plan.minHosts,
                stepStartedAt: now, startedAt: now, startedBy: change.actor.osUser, endedAt: plan.steps.count == 1 ? now : nil,
                endedBy: plan.steps.count == 1 ? change.actor.osUser : nil, endReason: nil, history: [first])
            try RolloutRules.write(change, .rolloutStart, before: existing, after: record, reason: plan.reason)
            var notes: [String] = []
            if try !RegistryQueries.enabledIDs(db, environment: plan.environment).contains(plan.pluginID) {
                notes.append("\(plan.pluginID) is not enabled in \(plan.environment): no host there loads it until it is.")
            }
            let stay = previous.map { "the others stay on \($0)" } ?? "the others run no release of it"
            if record.rollout.state == .completed {
                return ChangeResult(
                    changed: true, "Rolled out \(record.name) to every host at once (one step of 100%).", notes: notes)
            }
            return ChangeResult(
                changed: true,
                "Started the rollout of \(record.name): step 1 of \(plan.steps.count), \(plan.steps[0])% of hosts run \(version), \(stay). The next step is due at \(record.nextStepAt.map(Timestamp.format) ?? "?") while the guard holds (it aborts above \(RolloutFigures.percent(Double(plan.maxFailureBasisPoints) / 100)) failing of at least \(plan.minHosts) host\(plan.minHosts == 1 ? "" : "s")).",
                notes: notes)
        }
    }

    /// Holds a running rollout at its step (`rollout.pause`); the guard still acts. Owners, maintainers, admins.
    package func pauseRollout(pluginID: String, environment: String, reason: String?, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try personChange(pluginID, environment, action: .rolloutPause, reason: reason, by: actor) { change, record in
            switch record.rollout.state {
            case .paused: return (nil, "The rollout of \(record.name) is already paused; nothing changed.")
            case .completed, .aborted:
                throw BoardError(.conflict, "the rollout of \(record.name) \(record.endedWords); there is nothing to pause")
            case .running:
                return (
                    record.with(state: .paused),
                    "Paused the rollout of \(record.name) at \(record.rollout.percent)% of hosts; resume it with plugboard rollout resume \(pluginID)."
                )
            }
        }
    }

    /// Resumes a paused rollout (`rollout.resume`): its current step lasts a full interval from now.
    package func resumeRollout(pluginID: String, environment: String, reason: String?, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try personChange(pluginID, environment, action: .rolloutResume, reason: reason, by: actor) { change, record in
            switch record.rollout.state {
            case .running: return (nil, "The rollout of \(record.name) is running; nothing changed.")
            case .completed, .aborted:
                throw BoardError(
                    .conflict,
                    "the rollout of \(record.name) \(record.endedWords); start a new one with plugboard rollout start")
            case .paused:
                var resumed = record.with(state: .running)
                resumed.stepStartedAt = change.now
                return (
                    resumed,
                    "Resumed the rollout of \(record.name) at \(record.rollout.percent)% of hosts; the next step is due at \(resumed.nextStepAt.map(Timestamp.format) ?? "its end")."
                )
            }
        }
    }

    /// Aborts a running or paused rollout (`rollout.abort`): every host returns to the previous release at its next
    /// reading of the board, as for a kill switch. Never waits for anything; owners, maintainers and admins.
    package func abortRollout(pluginID: String, environment: String, reason: String?, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try personChange(pluginID, environment, action: .rolloutAbort, reason: reason, by: actor) { change, record in
            switch record.rollout.state {
            case .aborted: return (nil, "The rollout of \(record.name) is already aborted; nothing changed.")
            case .completed:
                throw BoardError(
                    .conflict,
                    "the rollout of \(record.name) completed, so there is nothing to abort; stop the release with plugboard plugin kill \(pluginID) --version \(record.rollout.version)"
                )
            case .running, .paused:
                return (
                    RolloutRules.ended(record, .aborted, by: change.actor.osUser, at: change.now, reason: reason),
                    RolloutRules.abortMessage(record)
                )
            }
        }
    }

    /// The rollouts of `pluginID`, or of every plug-in when it is nil (in `environment` only, when given), with what
    /// hosts report now.
    package func rolloutStatuses(pluginID: String?, environment: String? = nil) throws(BoardError) -> [RolloutStatus] {
        if let pluginID { try Validate.pluginID(pluginID) }
        if let environment { try Validate.environment(environment) }
        let records = try read { db in
            if let pluginID { try RegistryQueries.requirePlugin(db, pluginID) }
            return try RolloutQueries.records(db, pluginID: pluginID, environment: environment)
        }
        return try records.map { record throws(BoardError) in
            let reports = try readTelemetry(empty: []) { db in try RolloutQueries.reported(db, record.pluginID, record.environment) }
            return RolloutRules.status(record, reports)
        }
    }

    /// Moves a running rollout to its next step now (its last step completes it), as a person (the plug-in's owners,
    /// maintainers or an admin) rather than its schedule; refused while the guard would abort it.
    package func stepRollout(pluginID: String, environment: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        let reports = try readTelemetry(empty: []) { db in try RolloutQueries.reported(db, pluginID, environment) }
        return try personChange(pluginID, environment, action: .rolloutStep, reason: nil, by: actor) { change, record in
            guard record.rollout.state == .running, record.rollout.step + 1 < record.rollout.steps.count else {
                throw BoardError.conflict(
                    "the rollout of \(record.name) is \(record.rollout.state.rawValue) and has no next step to move to")
            }
            let figures = RolloutRules.Figures(record, reports)
            let current = figures.current
            if current.hosts >= record.minHosts, current.failing * 10_000 > record.maxFailureBasisPoints * current.hosts {
                throw BoardError.conflict("the rollout of \(record.name) fails its guard (\(current.summary)); the guard aborts it instead")
            }
            let after = RolloutRules.stepped(record, figures, by: change.actor.osUser, at: change.now)
            let next = after.rollout.step
            return (
                after,
                after.rollout.state == .completed
                    ? "The rollout of \(record.name) completed: every host may run it."
                    : "The rollout of \(record.name) moved to step \(next + 1) of \(record.rollout.steps.count): \(record.rollout.steps[next])% of hosts."
            )
        }
    }

    /// A person's change of an existing rollout: `decide` returns the record to write (nil: nothing changes) and the
    /// sentence to answer.
    private func personChange(
        _ pluginID: String, _ environment: String, action: AuditAction, reason: String?, by actor: Principal,
        _ decide: (AuditedChange, RolloutRecord) throws -> (RolloutRecord?, String)
    ) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        try Validate.environment(environment)
        if let reason { try Validate.reason(reason) }
        return try change(
            actor, refusal: AuditEntry(action: action, targetType: "rollout", targetID: pluginID, environment: environment),
            requiring: .pluginMaintainers(pluginID, doing: "\(action) a rollout of")
        ) { change in
            guard let record = try RolloutQueries.record(change.db, pluginID, environment) else {
                throw BoardError.notFound("\(pluginID) has no rollout in \(environment); see plugboard rollout status \(pluginID)")
            }
            let (after, message) = try decide(change, record)
            guard let after else { return ChangeResult(changed: false, message) }
            try RolloutRules.write(change, action, before: record, after: after, reason: reason)
            return ChangeResult(changed: true, message)
        }
    }
}

/// The rules of rollouts, shared by people's changes and the schedule and guard.
enum RolloutRules {
    /// `record` moved to its next step by `principal` at `now` (completed at its last step), its step closed with
    /// `figures`.
    static func stepped(_ record: RolloutRecord, _ figures: Figures, by principal: String, at now: String) -> RolloutRecord {
        let next = record.rollout.step + 1
        let last = next == record.rollout.steps.count - 1
        var after = record.with(state: last ? .completed : .running, step: next)
        after.closeStep(with: figures)
        after.history.append(RolloutStepRecord(percent: record.rollout.steps[next], reachedAt: now, by: principal))
        after.stepStartedAt = now
        if last {
            after.endedAt = now
            after.endedBy = principal
        }
        return after
    }

    static func validate(_ plan: RolloutPlan) throws(BoardError) {
        try Validate.pluginID(plan.pluginID)
        try Validate.environment(plan.environment)
        if let reason = plan.reason { try Validate.reason(reason) }
        let steps = plan.steps
        guard (1...20).contains(steps.count), steps.allSatisfy({ (1...100).contains($0) }),
            zip(steps, steps.dropFirst()).allSatisfy({ $0 < $1 }),
            steps.last == 100
        else {
            throw BoardError(
                .invalidInput,
                "--steps must be 1 to 20 increasing percentages from 1 to 100 that end with 100 (for example 1,10,50,100)")
        }
        guard (1...31_536_000).contains(plan.everySeconds) else {
            throw BoardError(.invalidInput, "--every must be from 1 second to 365 days (for example 30s, 10m, 1h or 1d)")
        }
        guard (0...10_000).contains(plan.maxFailureBasisPoints) else {
            throw BoardError(.invalidInput, "--max-failure-rate must be a percentage from 0 to 100 (for example 5 or 2.5)")
        }
        guard (1...1_000_000).contains(plan.minHosts) else {
            throw BoardError(.invalidInput, "--min-hosts must be from 1 to 1000000")
        }
    }

    /// The release hosts run before a rollout of `version`: what the plug-in's ended rollout left them on, else the
    /// highest live release below `version`. Refuses a release hosts cannot be moved to.
    static func previous(_ db: Database, _ pluginID: String, version: String, existing: RolloutRecord?) throws -> String? {
        let releases = try RegistryQueries.snapshotVersions(db, ids: [pluginID])[pluginID] ?? []
        guard let release = releases.first(where: { $0.version == version }), let parsed = SemanticVersion(parsing: version) else {
            throw BoardError.notFound("\(pluginID)@\(version) is not registered")
        }
        if release.yanked { throw BoardError(.conflict, "\(pluginID)@\(version) is yanked; unyank it before rolling it out") }
        if release.killed {
            throw BoardError(.conflict, "a kill switch covers \(pluginID)@\(version); revive it before rolling it out")
        }
        if parsed.isPrerelease {
            throw BoardError(.conflict, "\(pluginID)@\(version) is a prerelease, which hosts load only when pinned; roll out a release")
        }
        func key(_ text: String) -> String { SemanticVersion(parsing: text)?.precedenceKey ?? "" }
        let live = releases.filter { !$0.yanked && !$0.killed && !(SemanticVersion(parsing: $0.version)?.isPrerelease ?? true) }
        let previous: String?
        switch existing?.rollout.state {
        case .running?, .paused?:
            let record = existing!
            throw BoardError(
                .conflict,
                "the rollout of \(record.rollout.pluginID)@\(record.rollout.version) in \(record.environment) is \(record.rollout.state.rawValue) at \(record.rollout.percent)% of hosts; abort it first (plugboard rollout abort \(pluginID))"
            )
        case .completed?: previous = existing?.rollout.version
        case .aborted?: previous = existing?.rollout.previous
        case nil:
            if let later = live.first(where: { key($0.version) > parsed.precedenceKey }) {
                throw BoardError(
                    .conflict,
                    "\(pluginID)@\(later.version), a later release, is live: hosts already run it; roll out a release above it")
            }
            previous = live.first { key($0.version) < parsed.precedenceKey }?.version
        }
        if let previous, key(previous) >= parsed.precedenceKey {
            throw BoardError(
                .conflict, "hosts of \(pluginID) already run up to \(previous); roll out a later release than \(previous)")
        }
        return previous
    }

    /// Writes `after` in place of the plug-in's rollout and records the change (`rollout.ACTION`) with the rollout
    /// before it (`before`, nil for none) and after it.
    static func write(_ change: AuditedChange, _ action: AuditAction, before: RolloutRecord?, after: RolloutRecord, reason: String?) throws
    {
        try RolloutQueries.save(change.db, after)
        try change.record(
            AuditEntry(
                action: action, targetType: "rollout", targetID: "\(after.pluginID)@\(after.rollout.version)",
                environment: after.environment, reason: reason, before: before?.json ?? .null, after: after.json))
    }

    /// `record` ended in `state`, with the figures of its last step kept in its history.
    static func ended(
        _ record: RolloutRecord, _ state: Rollout.State, by: String, at now: String, reason: String?, figures: Figures? = nil
    ) -> RolloutRecord {
        var ended = record.with(state: state)
        ended.endedAt = now
        ended.endedBy = by
        ended.endReason = reason
        if let figures { ended.closeStep(with: figures) }
        return ended
    }

    /// What the guard reads of a rollout: the figures of its new release (hosts of the cohort, since it started) and of
    /// the previous one.
    struct Figures {
        let current: RolloutFigures
        let previous: RolloutFigures?

        init(_ record: RolloutRecord, _ reports: [RolloutQueries.Reported]) {
            current = RolloutQueries.figures(of: record.rollout.version, in: reports, since: record.startedAt, cohort: record.rollout)
            previous = record.rollout.previous.map { RolloutQueries.figures(of: $0, in: reports, since: nil) }
        }
    }

    static func abortMessage(_ record: RolloutRecord) -> String {
        "Aborted the rollout of \(record.name): every host returns to \(record.rollout.previous.map { "\(record.pluginID)@\($0)" } ?? "no release of \(record.pluginID)") at its next reading of the board."
    }

    /// The status of `record` with what `reports` say now.
    static func status(_ record: RolloutRecord, _ reports: [RolloutQueries.Reported]) -> RolloutStatus {
        let rollout = record.rollout
        var byVersion: [String: Int] = [:]
        for report in reports where report.state == .loaded { byVersion[report.version ?? "-", default: 0] += 1 }
        let figures = Figures(record, reports)
        return RolloutStatus(
            rollout: rollout, everySeconds: record.everySeconds, maxFailureRate: Double(record.maxFailureBasisPoints) / 100,
            minHosts: record.minHosts, stepStartedAt: record.stepStartedAt, nextStepAt: record.nextStepAt.map(Timestamp.format),
            startedAt: record.startedAt, startedBy: record.startedBy, endedAt: record.endedAt, endedBy: record.endedBy,
            endReason: record.endReason, history: record.history,
            current: figures.current, previous: figures.previous, hostsByVersion: byVersion)
    }
}

extension RolloutPlan {
    /// Refuses a plan whose steps, interval, threshold or minimum of hosts are out of bounds, changing nothing.
    package func validate() throws(BoardError) {
        try RolloutRules.validate(self)
    }
}
