import Foundation
import GRDB
import PlugboardModel
import PlugboardTestSupport
import PlugboardVersioning
import Testing

@testable import PlugboardStore

/// `Board.tickRollouts`: the guard aborts on what hosts report, the schedule steps one step a pass.
@Suite("rollouts: the guard and the schedule", .timeLimit(.hangGuard))
struct RolloutTickStoreTests {
    static let admin = RolloutStoreTests.admin
    static let alpha = RolloutStoreTests.alpha
    static let later = Date().addingTimeInterval(3600 * 24)

    /// A host id named after `name` that is in the first step's cohort (1%) of ``alpha``: the guard counts only hosts
    /// of the cohort for the new release.
    static func inCohort(_ name: String) -> String {
        var index = 0
        while !RolloutCohort.contains(hostID: "\(name)-\(index)", pluginID: alpha, percent: 1) { index += 1 }
        return "\(name)-\(index)"
    }

    /// `hostID`'s load report of ``alpha`` in `default`.
    static func report(
        _ board: Board, _ hostID: String, _ version: String, _ state: LoadReportEntry.State, reasonCode: String? = nil, crashes: Int? = nil
    ) throws {
        try board.writeLoadReport(
            hostID: hostID, environment: "default", hostVersion: "2.0.0",
            entries: [
                LoadReportEntry(
                    pluginID: alpha, version: version, state: state, reasonCode: reasonCode, reason: reasonCode.map { "it was \($0)" },
                    crashes: crashes)
            ])
    }

    /// Every row of the board but the rollouts, the audit log and its proof: what an abort by the guard must not change.
    static func otherRows(_ board: Board) throws -> [String: [String]] {
        try board.read { db in
            let tables = try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('rollouts', 'audit_log')
                    AND name NOT LIKE 'state\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                    """)
            var rows: [String: [String]] = [:]
            for table in tables {
                rows[table] = try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"").map(\.description).sorted()
            }
            return rows
        }
    }

    @Test func theGuardWaitsForItsHostsThenAbortsAsItselfNamingTheFiguresAndChangesNothingElse() throws {
        let board = try RolloutStoreTests.board()
        _ = try board.register(StoreOperationTests.manifest("com.example.other", "1.0.0"), by: Self.admin)
        _ = try board.kill(.plugin("com.example.other"), reason: "unrelated", by: Self.admin)
        _ = try board.startRollout(RolloutStoreTests.plan("1.1.0", minHosts: 2), by: Self.admin)
        try Self.report(board, Self.inCohort("web-1"), "1.1.0", .failed, reasonCode: "activation_failed")
        try Self.report(board, "web-9", "1.0.0", .loaded)
        #expect(try board.tickRollouts(via: "test").isEmpty, "one host of the two the guard waits for")
        #expect(try RolloutStoreTests.status(board).rollout.state == .running)

        try Self.report(board, Self.inCohort("web-2"), "1.1.0", .loaded)
        let rows = try Self.otherRows(board)
        let snapshot = try board.registrySnapshot(environment: "default")
        let ticks = try board.tickRollouts(via: "test")
        #expect(ticks.map(\.action) == [.aborted] && ticks.first?.version == "1.1.0", "\(ticks)")
        #expect(ticks.first?.message.contains("1 of 2 hosts failing (50%)") == true, "\(ticks)")
        let status = try RolloutStoreTests.status(board)
        #expect(status.rollout.state == .aborted && status.endedBy == Board.rolloutGuard)
        #expect(status.history.last?.figures?.failing == 1 && status.history.last?.previousFigures?.hosts == 1)
        let record = try #require(try board.auditRecords(AuditQuery()).last)
        #expect(record.action == "rollout.abort" && record.outcome == "ok" && record.by == Board.rolloutGuard, "\(record)")
        let reason = try #require(record.reason)
        #expect(reason.contains("1 of 2 hosts failing (50%): 1 failed activation, 0 crashed, 0 quarantined"), "\(reason)")
        #expect(
            reason.contains("above 5% with at least 2 hosts reporting") && reason.contains("1.0.0 has 0 of 1 host failing"), "\(reason)")

        #expect(try Self.otherRows(board) == rows, "only the rollout and the log changed")
        let after = try board.registrySnapshot(environment: "default")
        for id in [Self.alpha, "com.example.other"] {
            let (was, now) = (try #require(snapshot.plugins[id]), try #require(after.plugins[id]))
            #expect(
                was.enabled == now.enabled && was.killed == now.killed && was.pinnedVersion == now.pinnedVersion
                    && was.versions == now.versions)
        }
        #expect(try board.tickRollouts(via: "test", now: Self.later).isEmpty, "an aborted rollout is left alone")
        #expect(try board.verifyAudit().ok)
    }

    @Test func crashesAndQuarantinesCountAsFailingAndTheThresholdItselfHolds() throws {
        let board = try RolloutStoreTests.board()
        _ = try board.startRollout(RolloutStoreTests.plan("1.1.0", maxRate: 5000, minHosts: 2), by: Self.admin)
        try Self.report(board, Self.inCohort("web-1"), "1.1.0", .loaded, crashes: 2)
        try Self.report(board, Self.inCohort("web-2"), "1.1.0", .loaded)
        #expect(try board.tickRollouts(via: "test").isEmpty, "50% is not above 50%")
        var figures = try RolloutStoreTests.status(board).current
        #expect(figures.hosts == 2 && figures.activated == 2 && figures.crashed == 1 && figures.failing == 1 && figures.failureRate == 50)

        try Self.report(board, Self.inCohort("web-3"), "1.1.0", .skipped, reasonCode: "quarantined")
        figures = try RolloutStoreTests.status(board).current
        #expect(figures.hosts == 3 && figures.quarantined == 1 && figures.failing == 2)
        let ticks = try board.tickRollouts(via: "test")
        #expect(ticks.map(\.action) == [.aborted], "\(ticks)")
        #expect(
            ticks.first?.message.contains("2 of 3 hosts failing (66.67%): 0 failed activations, 1 crashed, 1 quarantined") == true,
            "\(ticks)")
    }

    @Test func reportsFromBeforeTheRolloutStartedDoNotCount() throws {
        let clock = TestClock()
        let board = try RolloutStoreTests.board(clock: TimeSource(date: clock.date, instant: clock.instant))
        try Self.report(board, Self.inCohort("web-1"), "1.1.0", .failed, reasonCode: "activation_failed")
        try Self.report(board, Self.inCohort("web-2"), "1.1.0", .loaded, crashes: 1)
        clock.advance(by: .milliseconds(20))
        _ = try board.startRollout(RolloutStoreTests.plan("1.1.0"), by: Self.admin)
        #expect(try board.tickRollouts(via: "test").isEmpty)
        #expect(try RolloutStoreTests.status(board).current.hosts == 0)

        // The same report, made again after the start, counts.
        clock.advance(by: .milliseconds(20))
        try Self.report(board, Self.inCohort("web-2"), "1.1.0", .loaded, crashes: 1)
        #expect(try RolloutStoreTests.status(board).current.hosts == 1)
        #expect(try board.tickRollouts(via: "test").map(\.action) == [.aborted])
    }

    @Test func theScheduleMovesOneStepAPassAndCompletesAtTheLast() throws {
        let board = try RolloutStoreTests.board()
        _ = try board.startRollout(RolloutStoreTests.plan("1.1.0", steps: [1, 10, 50, 100], every: 60), by: Self.admin)
        #expect(try board.tickRollouts(via: "test").isEmpty, "the first step is not over")
        #expect(try board.tickRollouts(via: "test", now: Date().addingTimeInterval(59)).isEmpty)

        var ticks = try board.tickRollouts(via: "test", now: Self.later)
        #expect(
            ticks.map(\.action) == [.stepped] && ticks.first?.message.contains("moved to step 2 of 4: 10% of hosts") == true, "\(ticks)")
        var status = try RolloutStoreTests.status(board)
        #expect(status.rollout.step == 1 && status.rollout.percent == 10 && status.rollout.state == .running)
        #expect(status.history.map(\.percent) == [1, 10] && status.history.last?.by == Board.rolloutSchedule)
        #expect(status.history.first?.figures?.hosts == 0, "the figures of the step that ended are kept")

        // A day late, still one step a pass.
        ticks = try board.tickRollouts(via: "test", now: Self.later)
        #expect(ticks.map(\.action) == [.stepped])
        #expect(try RolloutStoreTests.status(board).rollout.percent == 50)
        ticks = try board.tickRollouts(via: "test", now: Self.later)
        #expect(
            ticks.map(\.action) == [.completed] && ticks.first?.message.contains("completed: every host may run it") == true, "\(ticks)")
        status = try RolloutStoreTests.status(board)
        #expect(status.rollout.state == .completed && status.rollout.percent == 100 && status.endedBy == Board.rolloutSchedule)
        #expect(status.nextStepAt == nil && status.history.map(\.percent) == [1, 10, 50, 100])
        #expect(try board.tickRollouts(via: "test", now: Self.later).isEmpty)

        let steps = try board.auditRecords(AuditQuery()).filter { $0.by == Board.rolloutSchedule }
        #expect(steps.map(\.action) == ["rollout.step", "rollout.step", "rollout.step"])
        #expect(steps.allSatisfy { $0.outcome == "ok" && $0.via == "test" && $0.targetID == "com.example.a@1.1.0" }, "\(steps)")
        #expect(try board.verifyAudit().ok)
    }

    @Test func aPausedRolloutDoesNotStepButItsGuardStillAborts() throws {
        let board = try RolloutStoreTests.board()
        _ = try board.startRollout(RolloutStoreTests.plan("1.1.0", every: 60), by: Self.admin)
        #expect(try board.pauseRollout(pluginID: Self.alpha, environment: "default", reason: "look", by: Self.admin).changed)
        let again = try board.pauseRollout(pluginID: Self.alpha, environment: "default", reason: nil, by: Self.admin)
        #expect(!again.changed && again.message.contains("already paused"))
        #expect(try RolloutStoreTests.status(board).nextStepAt == nil)
        #expect(try board.tickRollouts(via: "test", now: Self.later).isEmpty)
        #expect(try RolloutStoreTests.status(board).rollout.step == 0)

        try Self.report(board, Self.inCohort("web-1"), "1.1.0", .failed, reasonCode: "activation_failed")
        #expect(try board.tickRollouts(via: "test").map(\.action) == [.aborted])
        #expect(try RolloutStoreTests.status(board).rollout.state == .aborted)
        for refused in [
            #expect(throws: BoardError.self) {
                try board.pauseRollout(pluginID: Self.alpha, environment: "default", reason: nil, by: Self.admin)
            },
            #expect(throws: BoardError.self) {
                try board.resumeRollout(pluginID: Self.alpha, environment: "default", reason: nil, by: Self.admin)
            },
        ] {
            #expect(refused?.code == .conflict, "\(String(describing: refused))")
        }
        let aborted = try board.abortRollout(pluginID: Self.alpha, environment: "default", reason: nil, by: Self.admin)
        #expect(!aborted.changed && aborted.message.contains("already aborted"))
    }

    @Test func resumingGivesTheStepAFullIntervalFromNow() throws {
        let clock = TestClock()
        let board = try RolloutStoreTests.board(clock: TimeSource(date: clock.date, instant: clock.instant))
        _ = try board.startRollout(RolloutStoreTests.plan("1.1.0", every: 1), by: Self.admin)
        let started = try RolloutStoreTests.status(board).stepStartedAt
        clock.advance(by: .milliseconds(1_200))
        _ = try board.pauseRollout(pluginID: Self.alpha, environment: "default", reason: nil, by: Self.admin)
        let resumed = try board.resumeRollout(pluginID: Self.alpha, environment: "default", reason: nil, by: Self.admin)
        #expect(resumed.changed && resumed.message.contains("the next step is due at"), "\(resumed.message)")
        let status = try RolloutStoreTests.status(board)
        #expect(status.stepStartedAt > started && status.rollout.state == .running)
        let due = try #require(status.nextStepAt.flatMap(Timestamp.parse))
        let first = try #require(Timestamp.parse(started))
        #expect(abs(due.timeIntervalSince(first) - 2.2) < 0.002, "the step that was due before the pause begins again")
        #expect(try board.tickRollouts(via: "test", now: due.addingTimeInterval(-0.5)).isEmpty)
        #expect(try board.tickRollouts(via: "test", now: due.addingTimeInterval(0.01)).map(\.action) == [.stepped])
        let running = try board.resumeRollout(pluginID: Self.alpha, environment: "default", reason: nil, by: Self.admin)
        #expect(!running.changed && running.message.contains("is running; nothing changed"))
    }
}
