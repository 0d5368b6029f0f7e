import Foundation
import PlugboardFlags
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardStore
import PlugboardTestSupport
import Testing

/// A flag can require the version of a plug-in the host runs (`plugin.ID.version` with the semver operators): it is
/// on while the host runs a release that satisfies it, and goes off with the release, without a change to the flag.
@Suite("host runtime: flags that follow the plug-ins a host runs", .timeLimit(.hangGuard), .serialized)
struct RunningVersionFlagTests {
    static let features = """
        {"version": 2, "features": [{"name": "checkout.needs-a", "enabled": true, "strategies": [{"name": "default",
          "constraints": [{"contextName": "plugin.com.example.a.version", "operator": "SEMVER_GTE", "value": "1.0.0"}]}]}]}
        """

    @Test(arguments: HostSourceKind.allCases) func aFlagOnAPluginVersionFollowsTheReleaseAsItComesAndGoes(kind: HostSourceKind) async throws
    {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0")
        try t.register("com.example.b", "1.0.0")
        _ = try t.board.importFlags(try FeatureSet.decode(from: Data(Self.features.utf8)), environment: "default", by: TestBoard.admin)

        let host = PluginHost(configuration: try await t.configuration(kind, hostID: "host-1", flags: true))
        for id in ["com.example.a", "com.example.b"] { host.register(id, version: "1.0.0") { _ in TestPlugin(id: id) } }
        let events = host.events()
        #expect(!host.flags.isEnabled("checkout.needs-a"), "nothing runs yet")
        await host.start()
        #expect(Set(host.activePlugins.map(\.pluginID)) == ["com.example.a", "com.example.b"])
        #expect(host.flags.isEnabled("checkout.needs-a"))
        // A per-call context still wins over what the host fills in.
        #expect(!host.flags.isEnabled("checkout.needs-a", context: ["plugin.com.example.a.version": "0.9.0"]))

        // The release is killed: the host stops running it, and the flag is off for this host with no change to it.
        _ = try Board.open(at: t.board.path).kill(.plugin("com.example.a"), reason: "INC-1", by: TestBoard.admin)
        _ = await HostRuntimeTests.collect(events, count: 1) { event -> String? in
            if case .deactivated(let id, _, _) = event, id == "com.example.a" { return id }
            return nil
        }
        #expect(!host.flags.isEnabled("checkout.needs-a"))
        #expect(host.activePlugins.map(\.pluginID) == ["com.example.b"])
        await host.stop()
    }
}
