import Foundation
import PlugboardHost
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

/// Advisories on a host, from the board file and from a served board: `warn` loads and reports, `refuse-new` keeps what
/// runs and refuses a new load, `stop` stops the affected release as a kill switch of the version does.
@Suite("host runtime: advisories", .timeLimit(.hangGuard))
struct HostAdvisoryTests {
    static let calendar = "com.example.calendar"

    /// A board with the calendar at 1.3.0 (inside PBSA-2026-0001's range, 1.2.0 to before 1.4.2), enabled in default.
    static func board() throws -> TestBoard {
        try TestBoard().register(calendar, "1.3.0")
    }

    /// A host of `kind` with the calendar 1.3.0 compiled in.
    static func host(_ t: TestBoard, _ kind: HostSourceKind, id: String = "test-host") async throws -> PluginHost {
        let host = PluginHost(configuration: try await t.configuration(kind, hostID: id))
        host.register(calendar, version: "1.3.0") { _ in TestPlugin(id: "calendar") }
        return host
    }

    /// PBSA-2026-0001 (severity high: refuse-new unless `action` is chosen in default), imported by the admin.
    static func advise(_ t: TestBoard, action: AdvisoryAction? = nil) throws {
        let board = try Board.open(at: t.board.path)
        _ = try board.importAdvisories([(try AdvisoryFixtures.text("PBSA-2026-0001.json"), "PBSA-2026-0001.json")], by: TestBoard.admin)
        if let action { _ = try board.setAdvisoryAction("PBSA-2026-0001", action, environment: "default", by: TestBoard.admin) }
    }

    static func status(_ host: PluginHost) -> LoadReportEntry? { host.status.first { $0.pluginID == calendar } }

    @Test(arguments: HostSourceKind.allCases) func warnLoadsTheReleaseAndReportsTheAdvisory(kind: HostSourceKind) async throws {
        let t = try Self.board()
        try Self.advise(t, action: .warn)
        let host = try await Self.host(t, kind)
        await host.start()
        #expect(host.activePlugins.map(\.pluginID) == [Self.calendar])
        let warning = Self.status(host)?.warning
        #expect(
            warning?.contains("advisory PBSA-2026-0001 (The calendar plug-in writes its OAuth token to the log)") == true, "\(host.status)")
        #expect(warning?.contains("warn in default") == true)
        // The board's load reports carry it too (plugboard plugin status).
        let stored = try await t.loadStatus(pluginID: Self.calendar) { $0.first?.warning != nil }.first
        #expect(stored?.state == .loaded && stored?.warning?.contains("PBSA-2026-0001") == true)
        await host.stop()
    }

    @Test(arguments: HostSourceKind.allCases) func refuseNewKeepsARunningReleaseAndRefusesANewLoad(kind: HostSourceKind) async throws {
        let t = try Self.board()
        let running = try await Self.host(t, kind, id: "running-host")
        await running.start()
        #expect(running.activePlugins.map(\.pluginID) == [Self.calendar])

        try Self.advise(t)  // high: refuse-new
        try await eventually("the running host reports the advisory") {
            await running.reconcile()
            return Self.status(running)?.warning?.contains("refuse-new in default") == true
        }
        #expect(running.activePlugins.map(\.pluginID) == [Self.calendar], "a host that runs it keeps it")

        let fresh = try await Self.host(t, kind, id: "fresh-host")
        await fresh.start()
        #expect(fresh.activePlugins.isEmpty)
        #expect(Self.status(fresh)?.reasonCode == "advisory", "\(fresh.status)")
        #expect(Self.status(fresh)?.reason?.contains("refuses com.example.calendar@1.3.0 for a new load in default") == true)
        await running.stop()
        await fresh.stop()
    }

    @Test(arguments: HostSourceKind.allCases) func stopDeactivatesTheAffectedReleaseAsAKillSwitchDoes(kind: HostSourceKind) async throws {
        let t = try Self.board()
        let host = try await Self.host(t, kind)
        let events = host.events()
        await host.start()
        #expect(host.activePlugins.map(\.pluginID) == [Self.calendar])

        try Self.advise(t, action: .stop)
        for await event in events {
            if case .deactivated(let id, _, let reason) = event, id == Self.calendar {
                #expect(reason.code == .killed)
                #expect(
                    reason.message
                        == "advisory PBSA-2026-0001 (The calendar plug-in writes its OAuth token to the log) stops com.example.calendar@1.3.0 in default"
                )
                break
            }
        }
        #expect(host.activePlugins.isEmpty)
        #expect(host.plugin(Self.calendar) == nil)

        // Withdrawing the advisory loads it again, without a restart.
        _ = try Board.open(at: t.board.path).withdrawAdvisory("PBSA-2026-0001", reason: "a false alarm", by: TestBoard.admin)
        try await eventually("the calendar loads again") {
            await host.reconcile()
            return host.activePlugins.map(\.pluginID) == [Self.calendar]
        }
        await host.stop()
    }
}
