import Foundation
import GRDB
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// Telemetry (load reports, SDK usage) lives in a file of its own beside the board, bounded, and never takes the
/// board's write lock.
@Suite("telemetry file", .timeLimit(.hangGuard))
struct TelemetryStoreTests {
    static let admin = try! Principal(osUser: "alice")

    /// A new board file in a temporary folder, with mode 0640.
    static func fileBoard() throws -> (Board, String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("telemetry-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/board.sqlite"
        let board = try Board.create(at: path, by: admin)
        chmod(path, 0o640)
        return (board, folder)
    }

    @Test func reportsGoToTheTelemetryFileWithTheBoardsModeAndNotToTheBoard() throws {
        let (board, folder) = try Self.fileBoard()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let before = try board.version()
        try board.writeLoadReport(
            hostID: "web-1", environment: "default", hostVersion: "2.0.0",
            entries: [LoadReportEntry(pluginID: "com.example.a", version: "1.0.0", state: .loaded)])
        try board.recordClientUsage(
            registrations: [ClientRegistration(appName: "shop", instanceID: "1", environment: "default")],
            usage: [
                FlagUsageCount(
                    bucket: FlagUsageCount.bucket(for: Date()), flag: "f", environment: "default", appName: "shop", yes: 1, no: 0)
            ])
        #expect(try board.version() == before, "telemetry is not a change of the board")
        #expect(try board.loadStatus().map(\.hostID) == ["web-1"])
        #expect(try board.clientInstances().map(\.appName) == ["shop"])
        let inBoard = try board.read { db in
            [
                try Int.fetchOne(db, sql: "SELECT count(*) FROM load_reports") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM flag_usage") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM client_instances") ?? -1,
            ]
        }
        #expect(inBoard == [0, 0, 0])
        var info = stat()
        #expect(stat(board.telemetryPath, &info) == 0 && info.st_mode & 0o777 == 0o640)
    }

    @Test func rowsLeftInAnOlderBoardAreStillShownUntilTheHostReportsAgain() throws {
        let board = try Board.inMemory(by: Self.admin)
        try board.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO hosts (host_id, environment, host_version, os_user, last_report) VALUES ('old-1', 'default', '1.0.0', 'bob', '2026-01-01T00:00:00Z');
                    INSERT INTO load_reports (host_id, plugin_id, version, state, reported_at) VALUES ('old-1', 'com.example.a', '1.0.0', 'loaded', '2026-01-01T00:00:00Z');
                    """)
        }
        #expect(try board.loadStatus().map(\.hostID) == ["old-1"])
        try board.writeLoadReport(
            hostID: "old-1", environment: "default", hostVersion: "2.0.0",
            entries: [LoadReportEntry(pluginID: "com.example.a", version: "1.1.0", state: .loaded)])
        #expect(try board.loadStatus().map(\.version) == ["1.1.0"], "the telemetry file's report replaces the old rows")
    }

    @Test func aReportKeepsAtMostItsLimitOfEntriesAndCountsTheRest() throws {
        let board = try Board.inMemory(by: Self.admin)
        let entries = (0..<(TelemetryLimits.maxEntriesPerReport + 250)).map {
            LoadReportEntry(pluginID: "com.example.p\($0)", version: "1.0.0", state: .loaded)
        }
        try board.writeLoadReport(hostID: "big", environment: "default", hostVersion: "1", entries: entries)
        #expect(try board.loadStatus().count == TelemetryLimits.maxEntriesPerReport)
        let drop = try #require(try board.telemetryDrops().first { $0.kind == TelemetryDrop.Kind.reportEntriesOverCap })
        #expect(drop.count == 250)
    }

    @Test func theLongestSilentHostsGoFirstPastTheHostLimit() throws {
        let board = try Board.inMemory(by: Self.admin)
        let reports = (0...TelemetryLimits.maxHosts).map {
            LoadReport(
                hostID: String(format: "host-%05d", $0), environment: "default", hostVersion: "1",
                entries: [LoadReportEntry(pluginID: "com.example.a", version: "1.0.0", state: .loaded)], source: nil, reporter: "t")
        }
        try board.writeLoadReports(Array(reports.prefix(10)))
        try board.writeLoadReports(Array(reports.dropFirst(10)))
        let hosts = Set(try board.loadStatus().map(\.hostID))
        #expect(hosts.count == TelemetryLimits.maxHosts)
        #expect(try board.telemetryDrops().contains { $0.kind == TelemetryDrop.Kind.storedRowsOverCap && $0.count >= 1 })
    }
}
