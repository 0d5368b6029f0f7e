import Foundation
import GRDB
import PlugboardModel
import PlugboardVersioning

/// A rollout as the board stores it: what hosts act on (``Rollout``) and its schedule, guard and history.
struct RolloutRecord: Sendable, Hashable {
    var rollout: Rollout
    var everySeconds: Int
    var maxFailureBasisPoints: Int
    var minHosts: Int
    var stepStartedAt: String
    var startedAt: String
    var startedBy: String
    var endedAt: String?
    var endedBy: String?
    var endReason: String?
    var history: [RolloutStepRecord]

    var pluginID: String { rollout.pluginID }
    var environment: String { rollout.environment }
    var isActive: Bool { rollout.state == .running || rollout.state == .paused }
    /// `completed` or `was aborted`, for an ended rollout.
    var endedWords: String { rollout.state == .aborted ? "was aborted" : rollout.state.rawValue }
    /// `com.example.a@1.2.0 in production`.
    var name: String { "\(rollout.pluginID)@\(rollout.version) in \(rollout.environment)" }

    /// When the current step is due to end, while the rollout runs and a step is left.
    var nextStepAt: Date? {
        guard rollout.state == .running, rollout.step + 1 < rollout.steps.count, let started = Timestamp.parse(stepStartedAt) else {
            return nil
        }
        return started.addingTimeInterval(Double(everySeconds))
    }

    /// Keeps `figures` in the history as those the current step ended with.
    mutating func closeStep(with figures: RolloutRules.Figures) {
        guard !history.isEmpty else { return }
        history[history.count - 1].figures = figures.current
        history[history.count - 1].previousFigures = figures.previous
    }

    /// The record with `state` (and the step), the rest as it was.
    func with(state: Rollout.State, step: Int? = nil) -> RolloutRecord {
        var copy = self
        copy.rollout = Rollout(
            pluginID: rollout.pluginID, environment: rollout.environment, version: rollout.version, previous: rollout.previous,
            steps: rollout.steps, step: step ?? rollout.step, state: state)
        return copy
    }

    /// How the audit log shows the rollout.
    var json: AuditJSON {
        .object([
            "version": .string(rollout.version), "previous": .optional(rollout.previous), "steps": .array(rollout.steps.map(AuditJSON.int)),
            "step": .int(rollout.step), "percent": .int(rollout.percent), "state": .string(rollout.state.rawValue),
            "every_seconds": .int(everySeconds), "max_failure_rate": .string(RolloutFigures.percent(Double(maxFailureBasisPoints) / 100)),
            "min_hosts": .int(minHosts),
        ])
    }
}

/// The SQL of rollouts (board) and of the load reports the guard reads (telemetry).
enum RolloutQueries {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    /// The rollout of `pluginID` in `environment`, if any.
    static func record(_ db: Database, _ pluginID: String, _ environment: String) throws -> RolloutRecord? {
        guard try db.tableExists("rollouts") else { return nil }
        return try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM rollouts WHERE plugin_id = ? AND environment = ?"), arguments: [pluginID, environment]
        ).map(record)
    }

    /// Rollouts, filtered by plug-in and environment when given, and to running and paused ones when `activeOnly`;
    /// ordered by plug-in and environment. None on a board from before them.
    static func records(_ db: Database, pluginID: String? = nil, environment: String? = nil, activeOnly: Bool = false) throws
        -> [RolloutRecord]
    {
        guard try db.tableExists("rollouts") else { return [] }
        var filter = SQLFilter()
        filter.add("plugin_id = ?", pluginID)
        filter.add("environment = ?", environment)
        if activeOnly { filter.add("state IN ('running', 'paused')") }
        return try Row.fetchAll(
            db, sql: "SELECT * FROM rollouts \(filter.clause) ORDER BY plugin_id, environment", arguments: filter.arguments
        ).map(record)
    }

    /// The rollouts hosts of `environment` act on, by plug-in id.
    static func snapshotRollouts(_ db: Database, environment: String) throws -> [String: Rollout] {
        Dictionary(uniqueKeysWithValues: try records(db, environment: environment).map { ($0.pluginID, $0.rollout) })
    }

    /// Writes `record` in place of the plug-in's rollout in its environment.
    static func save(_ db: Database, _ record: RolloutRecord) throws {
        let rollout = record.rollout
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO rollouts (plugin_id, environment, version, previous, steps, step, state, every_seconds,
                    max_failure_bp, min_hosts, step_started_at, started_at, started_by, ended_at, ended_by, end_reason, history)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            rollout.pluginID, rollout.environment, rollout.version, rollout.previous, try json(rollout.steps), rollout.step,
            rollout.state.rawValue, record.everySeconds, record.maxFailureBasisPoints, record.minHosts, record.stepStartedAt,
            record.startedAt, record.startedBy, record.endedAt, record.endedBy, record.endReason, try json(record.history),
        ])
    }

    private static func json(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Reads a row, or refuses one that is not what the store writes (an edit behind the log, which the state proof
    /// names too) with `.integrity`, never a crash.
    private static func record(_ row: Row) throws -> RolloutRecord {
        func text(_ column: String) -> String? { String.fromDatabaseValue(row[column] as DatabaseValue) }
        func number(_ column: String) -> Int? {
            let value: DatabaseValue = row[column]
            guard case .int64(let number) = value.storage, let int = Int(exactly: number) else { return nil }
            return int
        }
        let name = "\(text("plugin_id") ?? "?") in \(text("environment") ?? "?")"
        guard let pluginID = text("plugin_id"), let environment = text("environment"), let version = text("version"),
            let stepsText = text("steps"), let steps = try? decoder.decode([Int].self, from: Data(stepsText.utf8)),
            let step = number("step"), steps.indices.contains(step), let stateText = text("state"),
            let state = Rollout.State(rawValue: stateText), let every = number("every_seconds"), let bp = number("max_failure_bp"),
            let minHosts = number("min_hosts"), let stepStartedAt = text("step_started_at"), let startedAt = text("started_at"),
            let startedBy = text("started_by"), let historyText = text("history"),
            let history = try? decoder.decode([RolloutStepRecord].self, from: Data(historyText.utf8)), !history.isEmpty
        else {
            throw BoardError(
                .integrity, "the board's rollout of \(Validate.escaped(name)) is not one Plugboard wrote; run plugboard audit verify")
        }
        return RolloutRecord(
            rollout: Rollout(
                pluginID: pluginID, environment: environment, version: version, previous: text("previous"), steps: steps, step: step,
                state: state),
            everySeconds: every, maxFailureBasisPoints: bp, minHosts: minHosts, stepStartedAt: stepStartedAt, startedAt: startedAt,
            startedBy: startedBy, endedAt: text("ended_at"), endedBy: text("ended_by"), endReason: text("end_reason"), history: history)
    }

    // MARK: What hosts report (telemetry)

    /// One host's last report of a plug-in.
    struct Reported: Sendable, Hashable {
        let hostID: String
        let version: String?
        let state: LoadReportEntry.State
        let reasonCode: String?
        let crashes: Int
        let lastReport: String
    }

    /// The last reports of `pluginID` by the hosts of `environment` (telemetry file).
    static func reported(_ db: Database, _ pluginID: String, _ environment: String) throws -> [Reported] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT r.*, h.last_report FROM load_reports r JOIN hosts h ON h.host_id = r.host_id
                    WHERE r.plugin_id = ? AND h.environment = ?
                    """), arguments: [pluginID, environment]
        ).map { row in
            Reported(
                hostID: row["host_id"], version: row["version"], state: LoadReportEntry.State(rawValue: row["state"]) ?? .skipped,
                reasonCode: row["reason_code"], crashes: row["crashes"] ?? 0, lastReport: row["last_report"])
        }
    }

    /// The guard's figures of `version` from `reports`, counting only hosts that reported at or after `since` (nil:
    /// every host) and, with `cohort`, only hosts in its current cohort (a host id outside it cannot run the new
    /// release, so a report that says it does is not counted, whoever sent it).
    static func figures(of version: String, in reports: [Reported], since: String?, cohort: Rollout? = nil) -> RolloutFigures {
        var hosts = 0
        var activated = 0
        var failed = 0
        var crashed = 0
        var quarantined = 0
        var failing = 0
        for report in reports where report.version == version {
            if let since, report.lastReport < since { continue }
            if let cohort, !cohort.includes(hostID: report.hostID) { continue }
            let crashes = report.crashes > 0
            let failedActivation = report.state == .failed && report.reasonCode != "crashed"
            let isQuarantined = report.reasonCode == SkipCodes.quarantined
            let ran = report.state == .loaded || report.state == .deactivated
            guard ran || crashes || failedActivation || isQuarantined else { continue }
            hosts += 1
            if report.state == .loaded { activated += 1 }
            if failedActivation { failed += 1 }
            if crashes { crashed += 1 }
            if isQuarantined { quarantined += 1 }
            if crashes || failedActivation || isQuarantined { failing += 1 }
        }
        return RolloutFigures(
            version: version, hosts: hosts, activated: activated, failed: failed, crashed: crashed, quarantined: quarantined,
            failing: failing)
    }

    /// Reason codes the guard reads in load reports.
    enum SkipCodes {
        static let quarantined = "quarantined"
    }
}
