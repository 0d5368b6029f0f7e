import Foundation
import GRDB
import PlugboardModel
import PlugboardTestSupport
import PlugboardVersioning
import Testing

@testable import PlugboardStore

/// `Board.startRollout` and the rollout hosts read: refusals change nothing, `previous` is what hosts ran, the
/// registry snapshot carries the rollout, and its row is proven with the board's head.
@Suite("rollouts", .timeLimit(.hangGuard))
struct RolloutStoreTests {
    static let admin = StoreOperationTests.admin
    static let stranger = StoreOperationTests.stranger
    static let alpha = "com.example.a"

    /// A board with `versions` of ``alpha`` registered and the plug-in enabled in `default`, reading the time from
    /// `clock`.
    static func board(_ versions: [String] = ["1.0.0", "1.1.0"], clock: TimeSource = .system) throws -> Board {
        let board = try Board.inMemory(by: admin, clock: clock)
        for version in versions { _ = try board.register(StoreOperationTests.manifest(alpha, version), by: admin) }
        _ = try board.setEnabled(alpha, true, environment: "default", by: admin)
        return board
    }

    static func plan(
        _ version: String, steps: [Int] = [1, 50, 100], every: Int = 3600, maxRate: Int = 500, minHosts: Int = 1,
        environment: String = "default"
    ) -> RolloutPlan {
        RolloutPlan(
            pluginID: alpha, version: version, environment: environment, steps: steps, everySeconds: every,
            maxFailureBasisPoints: maxRate, minHosts: minHosts)
    }

    /// The rollout of ``alpha`` in `default`.
    static func status(_ board: Board) throws -> RolloutStatus {
        try #require(try board.rolloutStatuses(pluginID: alpha, environment: "default").first)
    }

    /// The rows of `rollouts` and the audit rows that changed something: what a refusal must leave as it was.
    static func changes(_ board: Board) throws -> [String] {
        let rows = try board.read { db in try String.fetchAll(db, sql: "SELECT plugin_id || ' ' || version || ' ' || state FROM rollouts") }
        return rows + (try board.auditRecords(AuditQuery()).filter { $0.outcome == "ok" }.map { "\($0.seq) \($0.action)" })
    }

    /// The first host id (`host-N`) in (or out of) the cohort of `percent`% of ``alpha``.
    static func host(inCohortOf percent: Int, _ inside: Bool) -> String {
        (0..<10_000).lazy.map { "host-\($0)" }.first {
            (RolloutCohort.bucket(hostID: $0, pluginID: alpha) < percent * 100) == inside
        }!
    }

    @Test(
        arguments: [
            ("no steps", plan("1.1.0", steps: [])), ("not ending at 100", plan("1.1.0", steps: [1, 50])),
            ("decreasing", plan("1.1.0", steps: [50, 10, 100])), ("repeated", plan("1.1.0", steps: [10, 10, 100])),
            ("zero", plan("1.1.0", steps: [0, 100])), ("above 100", plan("1.1.0", steps: [50, 101])),
            ("too many", plan("1.1.0", steps: Array(80...100))), ("every 0", plan("1.1.0", every: 0)),
            ("every over a year", plan("1.1.0", every: 31_536_001)), ("rate above 100", plan("1.1.0", maxRate: 10_001)),
            ("rate negative", plan("1.1.0", maxRate: -1)), ("no hosts", plan("1.1.0", minHosts: 0)),
            ("not a version", plan("1.x")), ("no environment", plan("1.1.0", environment: "")),
        ])
    func invalidPlansAreRefusedWithOneSentenceAndNoAuditRow(_ what: String, _ plan: RolloutPlan) throws {
        let board = try Self.board()
        let audit = try board.auditRecords(AuditQuery()).count
        let refused = #expect(throws: BoardError.self, "\(what)") { try board.startRollout(plan, by: Self.admin) }
        #expect(refused?.code == .invalidInput, "\(what): \(String(describing: refused))")
        #expect(refused.map { !$0.message.isEmpty && !$0.message.contains("\n") } == true, "\(what)")
        #expect(try board.auditRecords(AuditQuery()).count == audit, "\(what)")
        #expect(try board.rolloutStatuses(pluginID: Self.alpha).isEmpty, "\(what)")
    }

    @Test func releasesHostsCannotBeMovedToAreRefusedAndChangeNothing() throws {
        let board = try Self.board(["1.0.0", "1.1.0", "1.2.0", "1.3.0", "2.0.0-beta.1"])
        _ = try board.yank(Self.alpha, version: SemanticVersion("1.2.0"), reason: "broken", by: Self.admin)
        _ = try board.kill(.version(Self.alpha, SemanticVersion("1.3.0")), reason: "INC-1", by: Self.admin)
        _ = try board.register(StoreOperationTests.manifest("com.example.other", "1.0.0"), by: Self.admin)
        let before = try Self.changes(board)
        let cases: [(String, RolloutPlan, BoardError.Code, String)] = [
            ("unknown version", Self.plan("9.0.0"), .notFound, "is not registered"),
            ("yanked", Self.plan("1.2.0"), .conflict, "is yanked"), ("killed", Self.plan("1.3.0"), .conflict, "a kill switch covers"),
            ("prerelease", Self.plan("2.0.0-beta.1"), .conflict, "is a prerelease"),
            ("a later release is live", Self.plan("1.0.0"), .conflict, "1.1.0, a later release, is live"),
            ("unknown environment", Self.plan("1.1.0", environment: "nowhere"), .notFound, "nowhere"),
        ]
        for (what, plan, code, says) in cases {
            let refused = #expect(throws: BoardError.self, "\(what)") { try board.startRollout(plan, by: Self.admin) }
            #expect(refused?.code == code, "\(what): \(String(describing: refused))")
            #expect(
                refused?.message.contains(says) == true && refused?.message.contains("\n") == false,
                "\(what): \(String(describing: refused))")
        }
        var unknownPlugin = Self.plan("1.0.0")
        unknownPlugin.pluginID = "com.example.zzz"
        #expect(throws: BoardError.self) { try board.startRollout(unknownPlugin, by: Self.admin) }
        #expect(try Self.changes(board) == before)

        // Someone who is neither an owner nor a maintainer of the plug-in (nor an admin) is refused, and the refusal is
        // recorded.
        let notAllowed = #expect(throws: BoardError.self) { try board.startRollout(Self.plan("1.1.0"), by: Self.stranger) }
        #expect(notAllowed?.code == .notAllowed)
        let refusal = try #require(try board.auditRecords(AuditQuery()).last)
        #expect(refusal.action == "rollout.start" && refusal.outcome == "refused" && refusal.by == "mallory", "\(refusal)")
        #expect(try Self.changes(board) == before)

        // A maintainer may; a second rollout waits for the first to end.
        _ = try board.addOwner(Self.alpha, principal: "mallory", role: .maintainer, by: Self.admin)
        #expect(try board.startRollout(Self.plan("1.1.0"), by: Self.stranger).changed)
        let running = try Self.changes(board)
        let conflict = #expect(throws: BoardError.self) { try board.startRollout(Self.plan("1.1.0", steps: [100]), by: Self.admin) }
        #expect(
            conflict?.code == .conflict && conflict?.message.contains("is running at 1% of hosts") == true,
            "\(String(describing: conflict))")
        #expect(try Self.changes(board) == running)
        #expect(try board.verifyAudit().ok)
    }

    @Test func previousIsWhatHostsRanBefore() throws {
        let board = try Self.board(["1.0.0", "1.1.0"])
        // The first rollout: the highest live release below.
        #expect(try board.startRollout(Self.plan("1.1.0", steps: [100]), by: Self.admin).changed)
        var status = try Self.status(board)
        #expect(status.rollout.previous == "1.0.0" && status.rollout.state == .completed && status.rollout.percent == 100)

        // After a completed rollout: its release, and nothing at or below it may be rolled out.
        let behind = #expect(throws: BoardError.self) { try board.startRollout(Self.plan("1.0.0"), by: Self.admin) }
        #expect(behind?.code == .conflict && behind?.message.contains("already run up to 1.1.0") == true, "\(String(describing: behind))")
        _ = try board.register(StoreOperationTests.manifest(Self.alpha, "1.2.0"), by: Self.admin)
        #expect(try board.startRollout(Self.plan("1.2.0"), by: Self.admin).changed)
        status = try Self.status(board)
        #expect(status.rollout.previous == "1.1.0" && status.rollout.state == .running && status.rollout.version == "1.2.0")

        // After an aborted rollout: the release it kept hosts on.
        let aborted = try board.abortRollout(pluginID: Self.alpha, environment: "default", reason: "bad", by: Self.admin)
        #expect(aborted.changed && aborted.message.contains("every host returns to com.example.a@1.1.0"), "\(aborted.message)")
        _ = try board.register(StoreOperationTests.manifest(Self.alpha, "1.3.0"), by: Self.admin)
        #expect(try board.startRollout(Self.plan("1.3.0"), by: Self.admin).changed)
        #expect(try Self.status(board).rollout.previous == "1.1.0")

        // A plug-in with no release below: none.
        _ = try board.register(StoreOperationTests.manifest("com.example.b", "1.0.0"), by: Self.admin)
        var first = Self.plan("1.0.0")
        first.pluginID = "com.example.b"
        let started = try board.startRollout(first, by: Self.admin)
        #expect(started.message.contains("the others run no release of it"), "\(started.message)")
        #expect(started.notes.contains { $0.contains("is not enabled in default") }, "\(started.notes)")
        #expect(try board.rolloutStatuses(pluginID: "com.example.b").first?.rollout.previous == nil)
        #expect(try board.verifyAudit().ok)
    }

    @Test func previousIsTheHighestLiveReleaseBelowBySemanticPrecedence() throws {
        let board = try Self.board(["1.9.0", "1.10.0", "1.2.0", "1.10.1-rc.1", "1.10.2", "1.11.0"])
        _ = try board.yank(Self.alpha, version: SemanticVersion("1.10.2"), reason: "broken", by: Self.admin)
        #expect(try board.startRollout(Self.plan("1.11.0"), by: Self.admin).changed)
        #expect(try Self.status(board).rollout.previous == "1.10.0")
    }

    /// The highest of the releases 1.0.0 and 1.1.0 that `rollout` allows `host` (nil: neither).
    static func highest(_ rollout: Rollout, _ host: String) -> String? {
        ["1.1.0", "1.0.0"].first { SemanticVersion(parsing: $0).map { rollout.allows($0, forHost: host) } ?? false }
    }

    @Test func theSnapshotCarriesTheRolloutAndItsCapPerHost() throws {
        let board = try Self.board(["1.0.0", "1.1.0"])
        _ = try board.startRollout(Self.plan("1.1.0", steps: [10, 100]), by: Self.admin)
        let inside = Self.host(inCohortOf: 10, true)
        let outside = Self.host(inCohortOf: 10, false)
        var rollout = try #require(try board.registrySnapshot(environment: "default").plugins[Self.alpha]?.rollout)
        #expect(rollout.version == "1.1.0" && rollout.previous == "1.0.0" && rollout.percent == 10 && rollout.state == .running)
        #expect(rollout.includes(hostID: inside) && !rollout.includes(hostID: outside))
        #expect(Self.highest(rollout, inside) == "1.1.0" && Self.highest(rollout, outside) == "1.0.0")
        #expect(try board.registrySnapshot(environment: "production").plugins[Self.alpha]?.rollout == nil, "another environment")

        _ = try board.pauseRollout(pluginID: Self.alpha, environment: "default", reason: nil, by: Self.admin)
        rollout = try #require(try board.registrySnapshot(environment: "default").plugins[Self.alpha]?.rollout)
        #expect(rollout.state == .paused && Self.highest(rollout, inside) == "1.1.0" && Self.highest(rollout, outside) == "1.0.0")

        _ = try board.abortRollout(pluginID: Self.alpha, environment: "default", reason: nil, by: Self.admin)
        rollout = try #require(try board.registrySnapshot(environment: "default").plugins[Self.alpha]?.rollout)
        #expect(rollout.state == .aborted && rollout.percent == 0)
        #expect(Self.highest(rollout, inside) == "1.0.0" && Self.highest(rollout, outside) == "1.0.0")

        _ = try board.startRollout(Self.plan("1.1.0", steps: [100]), by: Self.admin)
        rollout = try #require(try board.registrySnapshot(environment: "default").plugins[Self.alpha]?.rollout)
        #expect(rollout.state == .completed && Self.highest(rollout, inside) == "1.1.0" && Self.highest(rollout, outside) == "1.1.0")
        let (view, _) = try board.hostView(environment: "default", relevantTo: [])
        #expect(view.registry.plugins[Self.alpha]?.rollout == rollout)
    }

    @Test func aHostsCohortIsStableAndGrowsWithTheSteps() {
        let hosts = (0..<500).map { "web-\($0)" }
        for host in hosts {
            let bucket = RolloutCohort.bucket(hostID: host, pluginID: Self.alpha)
            #expect((0..<10_000).contains(bucket) && bucket == RolloutCohort.bucket(hostID: host, pluginID: Self.alpha))
        }
        var previous = Set<String>()
        for percent in [0, 1, 10, 50, 99, 100] {
            let cohort = Set(hosts.filter { RolloutCohort.contains(hostID: $0, pluginID: Self.alpha, percent: percent) })
            #expect(previous.isSubset(of: cohort), "\(percent)%")
            previous = cohort
        }
        #expect(previous.count == hosts.count)
        let half = hosts.filter { RolloutCohort.contains(hostID: $0, pluginID: Self.alpha, percent: 50) }.count
        #expect((150...350).contains(half), "about half: \(half)")
    }

    @Test(
        arguments: [
            ("UPDATE rollouts SET step = 1", "rollouts: row com.example.a in default was changed outside the log"),
            ("UPDATE rollouts SET state = 'completed'", "rollouts: row com.example.a in default was changed outside the log"),
            ("DELETE FROM rollouts", "rollouts: row com.example.a in default was removed outside the log"),
        ])
    func anEditOfARolloutBehindTheLogKeepsHostsFromReadingTheRegistry(_ sql: String, _ named: String) throws {
        let board = try Self.board()
        _ = try board.startRollout(Self.plan("1.1.0"), by: Self.admin)
        #expect(try board.verifyAudit().ok)
        // On the board's own connection, which the board's cache of proofs does not watch (another process's edit
        // changes `PRAGMA data_version`): nothing is proven before it.
        try board.writer.writeWithoutTransaction { db in try db.execute(sql: sql) }
        let problems = try board.verifyAudit().problems
        let problem = try #require(problems.first { $0.hasPrefix(named) }, "\(sql): \(problems)")
        #expect(problem.contains("com.example.a in default"), "\(problem)")
        let refused = #expect(throws: BoardError.self) { try board.provenRegistrySnapshot(environment: "default", anchor: nil) }
        #expect(refused?.code == .integrity && refused?.message == problem, "\(String(describing: refused))")
    }

    @Test(arguments: [
        "PRAGMA ignore_check_constraints = ON; UPDATE rollouts SET step = 'abc'",
        "UPDATE rollouts SET history = '[]'", "UPDATE rollouts SET steps = 'not json'", "UPDATE rollouts SET step = 7",
    ])
    func aRolloutRowPlugboardDidNotWriteIsRefusedNeverACrash(_ sql: String) throws {
        let board = try Self.board()
        _ = try board.startRollout(Self.plan("1.1.0"), by: Self.admin)
        try board.writer.writeWithoutTransaction { db in try db.execute(sql: sql) }
        let snapshot = #expect(throws: BoardError.self) { try board.provenRegistrySnapshot(environment: "default", anchor: nil) }
        let tick = #expect(throws: BoardError.self) { try board.tickRollouts(via: "test", now: Date().addingTimeInterval(86_400)) }
        let status = #expect(throws: BoardError.self) { try board.rolloutStatuses(pluginID: Self.alpha) }
        for refused in [snapshot, tick, status] {
            #expect(refused?.code == .integrity, "\(sql): \(String(describing: refused))")
        }
        #expect(try !board.verifyAudit().ok, "\(sql)")
    }

    /// A telemetry file written before load reports carried crashes (schema 1) gains the column when the board opens
    /// it, and keeps its rows.
    @Test func aTelemetryFileOfSchemaOneIsUpgradedAndKeepsItsRows() throws {
        // The board is closed before its telemetry file is replaced.
        let (folder, path) = try { () throws -> (String, String) in
            let (board, folder) = try TelemetryStoreTests.fileBoard()
            return (folder, board.path)
        }()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + ".telemetry" + suffix) }
        do {
            let old = try DatabaseQueue(path: path + ".telemetry")
            try old.write { db in
                try db.execute(
                    sql: """
                        PRAGMA application_id = \(TelemetryFile.applicationID);
                        CREATE TABLE hosts (
                            host_id TEXT PRIMARY KEY NOT NULL, environment TEXT NOT NULL, host_version TEXT NOT NULL,
                            os_user TEXT NOT NULL, last_report TEXT NOT NULL, source TEXT
                        ) WITHOUT ROWID;
                        CREATE INDEX hosts_last_report ON hosts (last_report);
                        CREATE TABLE load_reports (
                            host_id TEXT NOT NULL REFERENCES hosts(host_id) ON DELETE CASCADE, plugin_id TEXT NOT NULL,
                            version TEXT, state TEXT NOT NULL, reason_code TEXT, reason TEXT, warning TEXT,
                            reported_at TEXT NOT NULL, PRIMARY KEY (host_id, plugin_id)
                        ) WITHOUT ROWID;
                        CREATE TABLE client_instances (
                            app_name TEXT NOT NULL, instance_id TEXT NOT NULL, environment TEXT NOT NULL, sdk_version TEXT,
                            strategies TEXT, token_name TEXT, first_seen TEXT NOT NULL, last_seen TEXT NOT NULL,
                            PRIMARY KEY (app_name, instance_id, environment)
                        ) WITHOUT ROWID;
                        CREATE TABLE flag_usage (
                            bucket TEXT NOT NULL, flag_name TEXT NOT NULL, environment TEXT NOT NULL, app_name TEXT NOT NULL,
                            yes INTEGER NOT NULL DEFAULT 0, no INTEGER NOT NULL DEFAULT 0, variants_json TEXT NOT NULL DEFAULT '{}',
                            PRIMARY KEY (bucket, flag_name, environment, app_name)
                        ) WITHOUT ROWID;
                        CREATE TABLE dropped (kind TEXT PRIMARY KEY NOT NULL, count INTEGER NOT NULL, last_at TEXT NOT NULL) WITHOUT ROWID;
                        INSERT INTO hosts VALUES ('web-1', 'default', '1.0.0', 'bob', '2026-01-01T00:00:00.000Z', NULL);
                        INSERT INTO load_reports VALUES ('web-1', 'com.example.a', '1.0.0', 'loaded', NULL, NULL, NULL, '2026-01-01T00:00:00.000Z');
                        PRAGMA user_version = 1;
                        """)
            }
        }
        let reopened = try Board.open(at: path)
        #expect(try reopened.loadStatus().map { "\($0.hostID) \($0.version ?? "-")" } == ["web-1 1.0.0"])
        try reopened.writeLoadReport(
            hostID: "web-2", environment: "default", hostVersion: "2.0.0",
            entries: [LoadReportEntry(pluginID: Self.alpha, version: "1.0.0", state: .loaded, crashes: 3)])
        let file = try DatabaseQueue(path: path + ".telemetry")
        let (version, crashes) = try file.read { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA user_version"),
                try Int.fetchAll(db, sql: "SELECT crashes FROM load_reports ORDER BY host_id")
            )
        }
        #expect(version == TelemetryFile.schemaVersion && crashes == [0, 3])
    }
}
