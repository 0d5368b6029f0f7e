import Foundation
import GRDB
import PlugboardFlags
import PlugboardModel
import PlugboardTestSupport
import PlugboardVersioning
import Testing

@testable import PlugboardStore

/// The store's operations on a board in memory: each change is one transaction with its audit rows, checked for
/// permission inside it, and visible to the readers a host uses.
@Suite("store operations", .timeLimit(.hangGuard))
struct StoreOperationTests {
    static let admin = try! Principal(osUser: "alice")
    static let stranger = try! Principal(osUser: "mallory")

    static func manifest(_ id: String, _ version: String, extra: String = "") throws -> PluginManifest {
        try PluginManifest.parse(Data(#"{"id":"\#(id)","name":"\#(id)","version":"\#(version)"\#(extra)}"#.utf8))
    }

    static func actions(_ board: Board) throws -> [String] {
        try board.auditRecords(AuditQuery()).map { "\($0.action):\($0.outcome)" }
    }

    /// A read runs in a transaction that is rolled back (`Board.readTransaction`, not GRDB's `read` with
    /// `PRAGMA query_only`): whatever its body wrote does not stay, a body that throws leaves the connection usable, and
    /// a read sees one state.
    @Test func aReadKeepsNothingItWroteAndAFailedReadLeavesTheBoardUsable() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.register(Self.manifest("com.example.a", "1.0.0"), by: Self.admin)
        let before = try Self.actions(board)
        let written = try board.read { db in
            try db.execute(sql: "CREATE TABLE scratch (x); DELETE FROM plugin_versions")
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM plugin_versions")
        }
        #expect(written == 0)
        #expect(try board.read { db in try db.tableExists("scratch") } == false)
        #expect(try board.registrySnapshot(environment: "production").plugins["com.example.a"]?.versions.count == 1)
        #expect(try Self.actions(board) == before)

        struct Stop: Error {}
        #expect(throws: BoardError.self) { try board.read { _ in throw Stop() } }
        #expect(throws: BoardError.self) { try board.read { db in try db.execute(sql: "SELECT * FROM no_such_table") } }
        _ = try board.register(Self.manifest("com.example.after", "1.0.0"), by: Self.admin)
        #expect(try board.registrySnapshot(environment: "production").plugins["com.example.after"] != nil)
        #expect(try Self.actions(board).count == before.count + 1)
    }

    @Test func registerEnablePinYankKillAndReviveReachTheSnapshot() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.register(Self.manifest("com.example.a", "1.0.0"), by: Self.admin)
        _ = try board.register(Self.manifest("com.example.a", "1.1.0"), by: Self.admin)
        #expect(try board.setEnabled("com.example.a", true, environment: "production", by: Self.admin).changed)
        #expect(try board.pin("com.example.a", version: SemanticVersion("1.0.0"), environment: "production", by: Self.admin).changed)
        _ = try board.yank("com.example.a", version: SemanticVersion("1.1.0"), reason: "broken", by: Self.admin)

        var snapshot = try board.registrySnapshot(environment: "production")
        let plugin = try #require(snapshot.plugins["com.example.a"])
        #expect(plugin.enabled && plugin.pinnedVersion == "1.0.0" && !plugin.killed)
        #expect(plugin.versions.map(\.version).sorted() == ["1.0.0", "1.1.0"])
        #expect(plugin.versions.first { $0.version == "1.1.0" }?.yanked == true)
        #expect(try board.registrySnapshot(environment: "default").plugins["com.example.a"]?.enabled == false)

        _ = try board.kill(.plugin("com.example.a"), reason: "INC-1", by: Self.admin)
        snapshot = try board.registrySnapshot(environment: "production")
        #expect(snapshot.plugins["com.example.a"]?.killed == true && snapshot.plugins["com.example.a"]?.killReason == "INC-1")
        _ = try board.kill(.version("com.example.a", SemanticVersion("1.0.0")), reason: "INC-2", by: Self.admin)
        _ = try board.revive(.plugin("com.example.a"), reason: "fixed", by: Self.admin)
        snapshot = try board.registrySnapshot(environment: "production")
        #expect(snapshot.plugins["com.example.a"]?.killed == false)
        #expect(snapshot.plugins["com.example.a"]?.versions.first { $0.version == "1.0.0" }?.killed == true)
        #expect(try board.killSwitches().count == 1)
        #expect(try board.killSwitches(includeRevived: true).count == 2)

        _ = try board.kill(.all, reason: "stop everything", by: Self.admin)
        #expect(try board.registrySnapshot(environment: "production").allKilled)

        let verification = try board.verifyAudit()
        #expect(verification.ok, "\(verification.problems)")
        #expect(
            try Self.actions(board).filter { $0.hasPrefix("plugin.") } == [
                "plugin.register:ok", "plugin.register:ok", "plugin.enable:ok", "plugin.pin:ok", "plugin.yank:ok", "plugin.kill:ok",
                "plugin.kill:ok", "plugin.revive:ok", "plugin.kill:ok",
            ])
    }

    @Test func aChangeThatChangesNothingWritesNoAuditRow() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.register(Self.manifest("com.example.a", "1.0.0"), by: Self.admin)
        _ = try board.setEnabled("com.example.a", true, environment: "default", by: Self.admin)
        let before = try board.auditRecords(AuditQuery()).count
        #expect(try board.setEnabled("com.example.a", true, environment: "default", by: Self.admin).changed == false)
        #expect(try board.auditRecords(AuditQuery()).count == before)
    }

    @Test func aRefusedChangeLeavesTheTablesAsTheyWereAndRecordsTheRefusal() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.register(Self.manifest("com.example.a", "1.0.0"), by: Self.admin)
        let registryBefore = try board.registrySnapshot(environment: "default").plugins
        #expect(throws: BoardError.self) { try board.kill(.plugin("com.example.a"), reason: "mine", by: Self.stranger) }
        #expect(throws: BoardError.self) { try board.addAdmin("mallory", by: Self.stranger) }
        #expect(try board.registrySnapshot(environment: "default").plugins == registryBefore)
        #expect(try board.killSwitches().isEmpty)
        #expect(try board.admins().map(\.principal) == ["alice"])
        let refusals = try board.auditRecords(AuditQuery()).filter { $0.outcome == "refused" }
        #expect(refusals.map(\.by) == ["mallory", "mallory"])
        #expect(refusals.allSatisfy { $0.reason?.contains("mallory may not") == true })
        // A duplicate version is refused and changes nothing (not a permission problem: no refusal row).
        let count = try board.auditRecords(AuditQuery()).count
        #expect(throws: BoardError.self) { try board.register(Self.manifest("com.example.a", "1.0.0"), by: Self.admin) }
        #expect(try board.auditRecords(AuditQuery()).count == count)
        #expect(try board.verifyAudit().ok)
    }

    @Test func ownersMayActOnTheirPluginOnly() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.register(Self.manifest("com.example.a", "1.0.0"), by: Self.admin)
        _ = try board.register(Self.manifest("com.example.b", "1.0.0"), by: Self.admin)
        _ = try board.addOwner("com.example.a", principal: "mallory", role: .maintainer, by: Self.admin)
        #expect(try board.owners(of: "com.example.a").map(\.principal).contains("mallory"))
        _ = try board.kill(.plugin("com.example.a"), reason: "maintainer may", by: Self.stranger)
        #expect(throws: BoardError.self) { try board.kill(.plugin("com.example.b"), reason: "not mine", by: Self.stranger) }
        // A maintainer is not an owner: it may not add owners.
        #expect(throws: BoardError.self) {
            try board.addOwner("com.example.a", principal: "eve", role: .owner, by: Self.stranger)
        }
        let unknown = #expect(throws: BoardError.self) { try board.kill(.plugin("com.example.zzz"), reason: "x", by: Self.admin) }
        #expect(unknown?.code == .notFound)
    }

    @Test func everyWriteWithoutAnAuditRowIsRolledBack() throws {
        let board = try Board.inMemory(by: Self.admin)
        let entry = AuditEntry(action: .adminAdd, targetType: "admin", targetID: "mallory")
        let error = #expect(throws: BoardError.self) {
            try board.change(Self.admin, refusal: entry) { change in
                try change.db.execute(
                    sql: "INSERT INTO admins (principal, added_at, added_by) VALUES ('mallory', ?, 'alice')", arguments: [change.now])
            }
        }
        #expect(error?.code == .integrity)
        #expect(try board.admins().map(\.principal) == ["alice"])
        // With its audit row, the same write commits.
        try board.change(Self.admin, refusal: entry) { change in
            try change.db.execute(
                sql: "INSERT INTO admins (principal, added_at, added_by) VALUES ('mallory', ?, 'alice')", arguments: [change.now])
            try change.record(entry)
        }
        #expect(try board.admins().map(\.principal).sorted() == ["alice", "mallory"])
        #expect(try board.verifyAudit().ok)
    }

    @Test func pluginSummariesAgreeWithThePluginStateView() throws {
        let board = try Board.inMemory(by: Self.admin)
        for (id, versions) in [
            ("com.example.a", ["1.0.0", "1.1.0", "2.0.0-beta.1"]), ("com.example.b", ["0.9.0", "1.0.0"]), ("com.example.c", ["3.0.0"]),
        ] {
            for version in versions { _ = try board.register(Self.manifest(id, version), by: Self.admin) }
        }
        _ = try board.register(Self.manifest("com.example.d", "1.0.0"), by: Self.admin)
        _ = try board.setEnabled("com.example.a", true, environment: "production", by: Self.admin)
        _ = try board.pin("com.example.b", version: SemanticVersion("0.9.0"), environment: "production", by: Self.admin)
        _ = try board.yank("com.example.a", version: SemanticVersion("1.1.0"), reason: "broken", by: Self.admin)
        _ = try board.kill(.version("com.example.b", SemanticVersion("1.0.0")), reason: "INC-1", by: Self.admin)
        _ = try board.kill(.plugin("com.example.c"), reason: "INC-2", by: Self.admin)

        func view(_ environment: String) throws -> [PluginSummary] {
            try board.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT p.id, p.name, s.enabled, s.killed, s.pinned_version, s.latest_version, s.active_version,
                               (SELECT count(*) FROM plugin_versions v WHERE v.plugin_id = p.id) AS n
                        FROM plugins p JOIN plugin_state s ON s.plugin_id = p.id AND s.environment = ? ORDER BY p.id
                        """, arguments: [environment]
                ).map {
                    PluginSummary(
                        id: $0[0], name: $0[1], environment: environment, enabled: $0[2], killed: $0[3], pinnedVersion: $0[4],
                        latestVersion: $0[5], activeVersion: $0[6], versionCount: $0[7])
                }
            }
        }
        for environment in ["production", "default"] {
            #expect(try board.pluginSummaries(environment: environment) == view(environment), "\(environment)")
        }
        _ = try board.kill(.all, reason: "INC-3", by: Self.admin)
        #expect(try board.pluginSummaries(environment: "production") == view("production"))
        #expect(try board.pluginSummaries(environment: "production").allSatisfy(\.killed))
    }

    @Test func loadReportsAreReadableAndDoNotChangeTheBoardVersion() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.register(Self.manifest("com.example.a", "1.0.0"), by: Self.admin)
        let version = try board.version()
        try board.writeLoadReport(
            hostID: "web-1", environment: "default", hostVersion: "2.0.0",
            entries: [LoadReportEntry(pluginID: "com.example.a", version: "1.0.0", state: .loaded)])
        try board.writeLoadReport(
            hostID: "web-1", environment: "default", hostVersion: "2.0.0",
            entries: [LoadReportEntry(pluginID: "com.example.a", version: nil, state: .skipped, reasonCode: "killed", reason: "killed")])
        #expect(try board.version() == version)
        let status = try board.loadStatus(pluginID: "com.example.a")
        #expect(status.count == 1)
        #expect(status.first?.state == .skipped && status.first?.hostID == "web-1")
        // Reports are not policy: no audit row.
        #expect(try Self.actions(board).allSatisfy { !$0.hasPrefix("report") })
    }

    @Test func loadReportsAreWrittenAsADelta() throws {
        let clock = TestClock()
        let board = try Board.inMemory(by: Self.admin, clock: TimeSource(date: clock.date, instant: clock.instant))
        func write(_ entries: [LoadReportEntry]) throws {
            try board.writeLoadReport(hostID: "web-1", environment: "default", hostVersion: "2.0.0", entries: entries)
        }
        let a = LoadReportEntry(pluginID: "com.example.a", version: "1.0.0", state: .loaded)
        let b = LoadReportEntry(pluginID: "com.example.b", version: nil, state: .skipped, reasonCode: "disabled", reason: "disabled")
        let c = LoadReportEntry(pluginID: "com.example.c", version: "1.0.0", state: .loaded)
        try write([a, b, c])
        func reportedAt() throws -> [String: String] {
            Dictionary(uniqueKeysWithValues: try board.loadStatus().map { ($0.pluginID, $0.reportedAt) })
        }
        let first = try reportedAt()
        clock.advance(by: .milliseconds(10))
        let killed = LoadReportEntry(
            pluginID: "com.example.a", version: "1.0.0", state: .deactivated, reasonCode: "killed", reason: "INC-1")
        try write([killed, b])
        let second = try reportedAt()
        #expect(second["com.example.b"] == first["com.example.b"], "an unchanged row is not rewritten")
        #expect(second["com.example.a"] != first["com.example.a"])
        #expect(second["com.example.c"] == nil, "a plug-in no longer reported is removed")
        #expect(try board.loadStatus().first { $0.pluginID == "com.example.a" }?.reasonCode == "killed")
    }

    @Test func flagChangesAreAuditedAndReachTheFeatureSet() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.createFlag("new-ui", by: Self.admin)
        _ = try board.rolloutFlag("new-ui", percent: 25, environment: "production", by: Self.admin)
        _ = try board.setFlagEnabled("new-ui", true, environment: "production", by: Self.admin)
        let set = try board.featureSet(environment: "production")
        #expect(set.features.map(\.name) == ["new-ui"])
        #expect(set.features.first?.enabled == true)
        #expect(try board.featureSet(environment: "default").features.first?.enabled == false)
        let flagActions = try Self.actions(board).filter { $0.hasPrefix("flag.") }
        #expect(flagActions.count == 3 && flagActions.allSatisfy { $0.hasSuffix(":ok") })
        #expect(throws: BoardError.self) { try board.createFlag("new-ui", by: Self.admin) }
        #expect(throws: BoardError.self) { try board.setFlagEnabled("new-ui", false, environment: "production", by: Self.stranger) }
        #expect(try board.featureSet(environment: "production").features.first?.enabled == true)
    }
}
