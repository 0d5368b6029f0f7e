import Foundation
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardStore
import PlugboardTestSupport
import Testing

/// A host loads only releases whose rows are the ones the audit log recorded: an edit made with SQLite behind the
/// CLI's back keeps the release unloaded, with a reason that names the row.
@Suite("host runtime: only proven state", .timeLimit(.hangGuard))
struct HostStateProofTests {
    func host(_ t: TestBoard) -> PluginHost {
        t.host(compiledIn: ["com.example.a", "com.example.b"])
    }

    /// Runs `sql` on the board file with `sqlite3`, in a process of its own.
    func edit(_ t: TestBoard, _ sql: String) async throws {
        try await BoardSQL(t.board.path).execute(sql)
    }

    @Test(arguments: HostSourceKind.allCases) func aKillSwitchRevivedBehindTheLogKeepsThePluginUnloaded(kind: HostSourceKind) async throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0").register("com.example.b", "1.0.0")
        _ = try t.board.kill(.plugin("com.example.a"), reason: "INC-1", by: TestBoard.admin)
        try await edit(t, "UPDATE kill_switches SET revived_at = '2026-01-01T00:00:00.000Z', revived_by = 'mallory'")

        // A kill switch proves nothing about one plug-in alone: the board cannot be proven, so the host keeps its last
        // good state (here, nothing loaded yet) and says which row.
        let host = try await t.host(kind, compiledIn: ["com.example.a", "com.example.b"])
        await host.start()
        #expect(host.activePlugins.isEmpty)
        for id in ["com.example.a", "com.example.b"] {
            let status = host.status.first { $0.pluginID == id }
            #expect(status?.reasonCode == "unproven_state")
            #expect(
                status?.reason?.contains("kill_switches: the kill switch on com.example.a (row 1) was revived or edited outside the log")
                    == true,
                "\(status?.reason ?? "")")
        }
        await host.stop()
    }

    @Test func aVersionEditedBehindTheLogIsNotLoadedAndARunningOneStops() async throws {
        try await onHighPriority { try await editedVersionStops() }
    }

    func editedVersionStops() async throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0").register("com.example.b", "1.0.0")
        let host = host(t)
        await host.start()
        #expect(Set(host.activePlugins.map(\.pluginID)) == ["com.example.a", "com.example.b"])

        // Another artifact digest for the running release: the host stops it at its next poll.
        let other = String(repeating: "ab", count: 32)
        try await edit(
            t,
            """
            INSERT INTO artifacts (sha256, size_bytes, file_name, stored_at, stored_by) VALUES ('\(other)', 1, 'evil.so', '2026-01-01T00:00:00.000Z', 'm');
            UPDATE plugin_versions SET artifact_sha256 = '\(other)' WHERE plugin_id = 'com.example.a';
            """)
        // Detached from lookups first, its state recorded once its deactivate() returned: wait for both.
        try await eventually("the host to stop com.example.a (\(host.status))") {
            host.activePlugins.map(\.pluginID) == ["com.example.b"]
                && host.status.first { $0.pluginID == "com.example.a" }?.reason?.hasPrefix("artifacts: ") == true
        }
        let status = host.status.first { $0.pluginID == "com.example.a" }
        #expect(status?.reason?.hasPrefix("artifacts: row \(other) was added without an audit row") == true, "\(status?.reason ?? "")")
        let problems = try t.board.stateProblems(pluginID: "com.example.a", version: "1.0.0", environment: "default")
        #expect(problems.contains("plugin_versions: row com.example.a@1.0.0 was changed outside the log"), "\(problems)")
        await host.stop()
    }

    @Test func theIndexOfDigestsCannotBeEditedAlongWithTheRow() async throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0").register("com.example.b", "1.0.0")
        _ = try t.board.kill(.plugin("com.example.a"), reason: "INC-1", by: TestBoard.admin)
        // The row and its digest in the index: the index no longer matches the root the last audit row recorded.
        try await edit(t, "DELETE FROM kill_switches; DELETE FROM state_digests WHERE tbl = 'kill_switches'")
        let host = host(t)
        await host.start()
        #expect(host.activePlugins.map(\.pluginID) == [])
        #expect(host.status.allSatisfy { $0.reasonCode == "unproven_state" })
        #expect(host.status.first?.reason?.contains("index of the audit log's digests") == true, "\(host.status)")
        await host.stop()
    }
}
