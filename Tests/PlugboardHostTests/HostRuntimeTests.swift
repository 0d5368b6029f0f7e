import Foundation
import PlugboardFileHost
import PlugboardFlags
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardStore
import PlugboardTestSupport
import PlugboardTesting
import PlugboardVersioning
import Synchronization
import Testing

/// A feature the test host looks plug-ins up by.
protocol Greeting: Sendable {
    func greet(_ name: String) -> String
}

/// A compiled-in test plug-in that records its lifecycle and can be told to fail.
final class TestPlugin: Plugin, Greeting {
    enum Failure: Error, CustomStringConvertible {
        case boom
        var description: String { "boom: configuration missing" }
    }

    let id: String
    let failOnActivate: Bool
    let log: Mutex<[String]>

    init(id: String, failOnActivate: Bool = false) {
        self.id = id
        self.failOnActivate = failOnActivate
        log = Mutex([])
    }

    func activate(context: PluginContext) async throws {
        if failOnActivate { throw Failure.boom }
        log.withLock { $0.append("activate \(context.pluginID)@\(context.version)") }
    }

    func deactivate() async { log.withLock { $0.append("deactivate") } }

    func greet(_ name: String) -> String { "\(id) greets \(name)" }
}

@Suite("host runtime", .timeLimit(.hangGuard), .serialized)
struct HostRuntimeTests {
    func host(_ t: TestBoard, _ kind: HostSourceKind = .boardFile, environment: String = "default", readOnly: Bool = false)
        async throws -> PluginHost
    {
        guard readOnly else { return PluginHost(configuration: try await t.configuration(kind, environment: environment)) }
        return PluginHost(
            configuration: HostConfiguration(
                board: try Board.open(at: t.board.path, readOnly: true),
                identity: HostIdentity(hostID: "test-host", environment: environment, hostVersion: "2.1.0"),
                pollInterval: .milliseconds(20)))
    }

    @Test(arguments: HostSourceKind.allCases) func loadsOnlyEligibleCompiledInPluginsInDependencyOrder(kind: HostSourceKind) async throws {
        let t = try TestBoard()
        try t.register("com.example.base", "1.0.0")
            .register("com.example.app", "1.0.0", "\"dependencies\":{\"com.example.base\":\"^1.0.0\"}")
            .register("com.example.off", "1.0.0", enable: false)
        let host = try await host(t, kind)
        for id in ["com.example.base", "com.example.app", "com.example.off", "com.example.unregistered"] {
            host.register(id, version: "1.0.0") { _ in TestPlugin(id: id) }
        }
        let report = await host.start()
        #expect(host.activePlugins.map(\.pluginID) == ["com.example.base", "com.example.app"])
        #expect(
            host.features((any Greeting).self).map { $0.greet("ann") } == ["com.example.base greets ann", "com.example.app greets ann"])
        let byID = Dictionary(uniqueKeysWithValues: report.map { ($0.pluginID, $0) })
        #expect(byID["com.example.off"]?.reasonCode == "disabled")
        #expect(byID["com.example.unregistered"]?.reason?.contains("not registered on the board") == true)
        // The load report reaches the board for `plugboard plugin status`.
        let stored = try await t.loadStatus { rows in rows.contains { $0.pluginID == "com.example.off" } }
        #expect(stored.first { $0.pluginID == "com.example.app" }?.state == .loaded)
        #expect(stored.first { $0.pluginID == "com.example.off" }?.reasonCode == "disabled")
        await host.stop()
    }

    @Test(arguments: HostSourceKind.allCases) func theHostReadsOnlyWhatItCanActOn(kind: HostSourceKind) async throws {
        let t = try TestBoard()
        // An enabled plug-in needs a disabled one the host does not compile in; a third is disabled and unrelated.
        try t.register("com.example.lib", "1.0.0", enable: false)
            .register("com.example.app", "1.0.0", "\"dependencies\":{\"com.example.lib\":\"*\"}")
            .register("com.example.unrelated", "1.0.0", enable: false)
        let snapshot = try t.board.registrySnapshot(environment: "default", relevantTo: [])
        #expect(Set(snapshot.plugins.keys) == ["com.example.app", "com.example.lib"])
        #expect(try t.board.registrySnapshot(environment: "default").plugins.count == 3)

        let host = try await host(t, kind)
        host.register("com.example.app", version: "1.0.0") { _ in TestPlugin(id: "app") }
        let report = Dictionary(uniqueKeysWithValues: await host.start().map { ($0.pluginID, $0) })
        #expect(report["com.example.app"]?.reasonCode == "dependency_not_loaded", "\(report)")
        #expect(report["com.example.lib"]?.reasonCode == "disabled")
        #expect(report["com.example.unrelated"] == nil, "an unrelated, disabled plug-in is not the host's business")
        await host.stop()
    }

    @Test(arguments: HostSourceKind.allCases) func aPluginThatThrowsIsFailedWhileItsSiblingsLoad(kind: HostSourceKind) async throws {
        let t = try TestBoard()
        try t.register("com.example.good", "1.0.0")
            .register("com.example.bad", "1.0.0")
            .register("com.example.needsbad", "1.0.0", "\"dependencies\":{\"com.example.bad\":\"*\"}")
            .register("com.example.throwsinfactory", "1.0.0")
        let host = try await host(t, kind)
        host.register("com.example.good", version: "1.0.0") { _ in TestPlugin(id: "good") }
        host.register("com.example.bad", version: "1.0.0") { _ in TestPlugin(id: "bad", failOnActivate: true) }
        host.register("com.example.needsbad", version: "1.0.0") { _ in TestPlugin(id: "needsbad") }
        host.register("com.example.throwsinfactory", version: "1.0.0") { _ in throw TestPlugin.Failure.boom }
        let report = Dictionary(uniqueKeysWithValues: await host.start().map { ($0.pluginID, $0) })
        #expect(host.activePlugins.map(\.pluginID) == ["com.example.good"])
        #expect(report["com.example.bad"]?.state == .failed)
        #expect(report["com.example.bad"]?.reason?.contains("boom: configuration missing") == true)
        #expect(report["com.example.throwsinfactory"]?.state == .failed)
        #expect(report["com.example.needsbad"]?.reasonCode == "dependency_not_loaded")
        await host.stop()
    }

    @Test(arguments: HostSourceKind.allCases) func aKillSwitchThrownWhileTheHostRunsDeactivatesThePluginAndItsDependants(
        kind: HostSourceKind
    ) async throws {
        let t = try TestBoard()
        try t.register("com.example.base", "1.0.0")
            .register("com.example.app", "1.0.0", "\"dependencies\":{\"com.example.base\":\"*\"}")
            .register("com.example.other", "1.0.0")
        let host = try await host(t, kind)
        let base = TestPlugin(id: "base")
        let app = TestPlugin(id: "app")
        host.register("com.example.base", version: "1.0.0") { _ in base }
        host.register("com.example.app", version: "1.0.0") { _ in app }
        host.register("com.example.other", version: "1.0.0") { _ in TestPlugin(id: "other") }
        let events = host.events()
        await host.start()
        #expect(host.activePlugins.count == 3)

        // An operator throws the kill switch from another connection (as the CLI would).
        let operatorBoard = try Board.open(at: t.board.path)
        _ = try operatorBoard.kill(.plugin("com.example.base"), reason: "INC-77", by: TestBoard.admin)
        let deactivated = await Self.collect(events, count: 2) { event -> String? in
            if case .deactivated(let id, _, _) = event { return id }
            return nil
        }
        // Dependants go first; both are gone from every lookup.
        #expect(deactivated == ["com.example.app", "com.example.base"])
        #expect(host.activePlugins.map(\.pluginID) == ["com.example.other"])
        #expect(host.plugin("com.example.base") == nil)
        #expect(base.log.withLock { $0.last } == "deactivate")
        #expect(host.status.first { $0.pluginID == "com.example.base" }?.state == .deactivated)

        // Reviving loads them again without a restart.
        let events2 = host.events()
        _ = try operatorBoard.revive(.plugin("com.example.base"), reason: "fixed", by: TestBoard.admin)
        _ = await Self.collect(events2, count: 2) { event -> String? in
            if case .loaded(let id, _) = event { return id }
            return nil
        }
        #expect(Set(host.activePlugins.map(\.pluginID)) == ["com.example.base", "com.example.app", "com.example.other"])
        await host.stop()
    }

}

@Suite("host runtime: gate flags from the board", .timeLimit(.hangGuard), .serialized)
struct HostGateFlagTests {
    @Test(arguments: HostSourceKind.allCases) func aGateRolledOutOnTheBoardDecidesAndFollowsChangesLive(kind: HostSourceKind) async throws {
        let t = try TestBoard()
        try t.register("com.example.gated", "1.0.0", "\"gate\":\"plugin.gated.rollout\"")
        _ = try t.board.createFlag("plugin.gated.rollout", type: .release, by: TestBoard.admin)
        _ = try t.board.rolloutFlag("plugin.gated.rollout", percent: 100, environment: "default", by: TestBoard.admin)
        _ = try t.board.setFlagEnabled("plugin.gated.rollout", true, environment: "default", by: TestBoard.admin)

        let host = PluginHost(configuration: try await t.configuration(kind, hostID: "host-1", flags: true))
        host.register("com.example.gated", version: "1.0.0") { _ in TestPlugin(id: "gated") }
        let events = host.events()
        await host.start()
        #expect(host.activePlugins.map(\.pluginID) == ["com.example.gated"])

        // Switching the flag off on the board deactivates the gated plug-in without a restart.
        _ = try Board.open(at: t.board.path).setFlagEnabled("plugin.gated.rollout", false, environment: "default", by: TestBoard.admin)
        let reasons = await HostRuntimeTests.collect(events, count: 1) { event -> SkipReason? in
            if case .deactivated(_, _, let reason) = event { return reason }
            return nil
        }
        #expect(reasons.first?.code == .gateOff)
        #expect(host.activePlugins.isEmpty)
        await host.stop()
    }

    @Test func aPercentageRolloutPicksAStableShareOfHosts() async throws {
        let t = try TestBoard()
        try t.register("com.example.gated", "1.0.0", "\"gate\":\"plugin.gated.rollout\"")
        _ = try t.board.createFlag("plugin.gated.rollout", by: TestBoard.admin)
        _ = try t.board.rolloutFlag("plugin.gated.rollout", percent: 30, environment: "default", by: TestBoard.admin)
        _ = try t.board.setFlagEnabled("plugin.gated.rollout", true, environment: "default", by: TestBoard.admin)
        let flags = BoardFlagProvider(board: t.board, environment: "default")
        func gateOn(_ hostID: String) -> Bool {
            flags.evaluator(for: HostIdentity(hostID: hostID, environment: "default", hostVersion: "2.1.0")).isEnabled(
                "plugin.gated.rollout")
        }
        let hosts = (0..<400).map { "host-\($0)" }
        let on = hosts.filter(gateOn)
        // Unleash bucketing: about 30% of hosts, and the same hosts every time.
        #expect((80...160).contains(on.count), "\(on.count) of 400 hosts")
        #expect(hosts.filter(gateOn) == on)
    }
}

@Suite("board flag provider", .timeLimit(.hangGuard))
struct BoardFlagProviderTests {
    @Test func itReloadsOnlyWhenTheBoardChangesAndAWatcherFollowsChanges() async throws {
        try await onHighPriority { try await reloadsAndWatches() }
    }

    func reloadsAndWatches() async throws {
        let t = try TestBoard()
        _ = try t.board.createFlag("new-ui", by: TestBoard.admin)
        let provider = BoardFlagProvider(board: t.board, environment: "default")
        let host = HostIdentity(hostID: "h", environment: "default", hostVersion: "1.0.0")
        #expect(provider.evaluator(for: host).bool("new-ui", default: true, context: [:]).reason == .disabled)
        #expect(provider.refreshIfChanged() == false)

        _ = try Board.open(at: t.board.path).setFlagEnabled("new-ui", true, environment: "default", by: TestBoard.admin)
        #expect(provider.refreshIfChanged() == true)
        let on = provider.evaluator(for: host).bool("new-ui", default: false, context: [:])
        #expect(on.value == true && on.reason == .static)

        let watcher = provider.watch(every: .milliseconds(10))
        defer { watcher.cancel() }
        _ = try Board.open(at: t.board.path).setFlagEnabled("new-ui", false, environment: "default", by: TestBoard.admin)
        try await eventually("the watcher to see new-ui turned off", poll: .milliseconds(5)) {
            !provider.evaluator(for: host).isEnabled("new-ui")
        }
        // Evaluation errors come back as the caller's default with a code, never as a throw.
        let missing = provider.evaluator(for: host).string("no-such-flag", default: "fallback", context: [:])
        #expect(missing.value == "fallback" && missing.errorCode == .flagNotFound)
    }
}

/// Listens on a topic from activation until it is deactivated.
final class Listener: Plugin {
    let received = Mutex<[PluginEvent]>([])
    let ended = Mutex(false)

    func activate(context: PluginContext) async throws {
        let stream = context.events.subscribe("calendar.synced")
        Task { [self] in
            for await event in stream { received.withLock { $0.append(event) } }
            ended.withLock { $0 = true }
        }
    }

    func deactivate() async {}
}

/// Publishes when asked.
final class Publisher: Plugin {
    let context = Mutex<PluginContext?>(nil)
    func activate(context: PluginContext) async throws { self.context.withLock { $0 = context } }
    func deactivate() async {}
    func publish() { context.withLock { $0 }?.events.publish("calendar.synced", payload: Data("{\"items\":3}".utf8)) }
}

@Suite("host runtime: events between plug-ins", .timeLimit(.hangGuard), .serialized)
struct HostEventBusTests {
    @Test func eventsReachSubscribersWithTheSenderBoundAndStopAtDeactivation() async throws {
        try await onHighPriority { try await eventsFlowAndStop() }
    }

    func eventsFlowAndStop() async throws {
        let t = try TestBoard()
        try t.register("com.example.listener", "1.0.0", "\"capabilities\":[\"events\"]")
            .register("com.example.publisher", "1.0.0", "\"capabilities\":[\"events\"]")
        let host = PluginHost(
            configuration: HostConfiguration(
                board: t.board, identity: HostIdentity(hostID: "h", environment: "default", hostVersion: "2.1.0"),
                pollInterval: .milliseconds(20)))
        let listener = Listener()
        let publisher = Publisher()
        host.register("com.example.listener", version: "1.0.0") { _ in listener }
        host.register("com.example.publisher", version: "1.0.0") { _ in publisher }
        await host.start()
        publisher.publish()
        let event = try await eventually("the published event to reach the listener", poll: .milliseconds(5)) {
            listener.received.withLock { $0.first }
        }
        #expect(event.sender == "com.example.publisher")
        #expect(String(decoding: event.payload, as: UTF8.self) == "{\"items\":3}")

        // Killing the listener ends its subscriptions.
        _ = try Board.open(at: t.board.path).kill(.plugin("com.example.listener"), reason: "test", by: TestBoard.admin)
        try await eventually("the killed listener's subscription to end", poll: .milliseconds(5)) {
            listener.ended.withLock { $0 }
        }
        await host.stop()
    }
}

@Suite("flag results for plug-ins", .timeLimit(.hangGuard))
struct FlagResultModelTests {
    /// The plug-in API and the evaluator each name OpenFeature's results (neither links the other); the host converts
    /// case by case, so both must name the same reasons and error codes, with the same raw values.
    @Test func thePluginAPIAndTheEvaluatorShareReasonsAndErrorCodes() {
        #expect(Set(ResolutionReason.allCases.map(\.rawValue)) == Set(FlagReason.allCases.map(\.rawValue)))
        #expect(Set(ResolutionErrorCode.allCases.map(\.rawValue)) == Set(FlagErrorCode.allCases.map(\.rawValue)))
        #expect(ResolutionReason.allCases.map { "\($0)" } == FlagReason.allCases.map { "\($0)" })
        #expect(ResolutionErrorCode.allCases.map { "\($0)" } == FlagErrorCode.allCases.map { "\($0)" })
    }
}

/// Runs `body` (and the tasks it starts, which inherit its priority: a host's polling, a watcher, a plug-in's
/// listener) at high priority. The test runner queues every test at the start; a task that wakes from a sleep queues
/// behind the tests not yet started at its priority, so under a full run on two cores a test that waits for
/// background work would wait for most of the suite.
func onHighPriority(_ body: @escaping @Sendable () async throws -> Void) async throws {
    try await Task(priority: .high) { try await body() }.value
}
