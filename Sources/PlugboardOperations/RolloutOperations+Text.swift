import PlugboardModel
import PlugboardStore

/// The text `plugboard rollout status` prints without `--json`: one block a rollout; table cells and what principals
/// and reasons hold are escaped.
enum RolloutText {
    /// A rollout's state, plan and start, then one row a step reached, then the hosts that run it now.
    static func status(_ status: RolloutStatus) -> String {
        let rollout = status.rollout
        let where_ =
            rollout.state == .running || rollout.state == .paused
            ? ", step \(rollout.step + 1) of \(rollout.steps.count) (\(rollout.percent)% of hosts)" : ""
        var lines = [
            "\(rollout.pluginID)@\(rollout.version) in \(rollout.environment): \(rollout.state.rawValue)\(where_); previous \(rollout.previous ?? "none")",
            "  steps \(rollout.steps.map { "\($0)%" }.joined(separator: ", ")) every \(StepInterval.text(status.everySeconds)); the guard aborts above \(RolloutFigures.percent(status.maxFailureRate)) failing of at least \(status.minHosts) host\(status.minHosts == 1 ? "" : "s")",
            "  started \(status.startedAt) by \(Validate.escaped(status.startedBy))",
        ]
        if let next = status.nextStepAt { lines.append("  next step due at \(next)") }
        if let ended = status.endedAt {
            lines.append(
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
        lines.append(table.text(empty: "No step reached."))
        let running = status.hostsByVersion.sorted { $0.key < $1.key }.map { "\($0.value) on \($0.key)" }
        lines.append("  hosts running it now: \(running.isEmpty ? "none reported" : running.joined(separator: ", "))")
        return lines.joined(separator: "\n")
    }
}
