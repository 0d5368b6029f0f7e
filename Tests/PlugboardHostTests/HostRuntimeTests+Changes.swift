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

/// Board changes while the host runs, read-only boards, and secure storage bound to its plug-in.
extension HostRuntimeTests {
    @Test(arguments: HostSourceKind.allCases) func enablingWhileTheHostRunsLoadsThePlugin(kind: HostSourceKind) async throws {
        let t = try TestBoard()
        try t.register("com.example.late", "1.0.0", enable: false)
        let host = try await host(t, kind)
        host.register("com.example.late", version: "1.0.0") { _ in TestPlugin(id: "late") }
        let events = host.events()
        await host.start()
        #expect(host.activePlugins.isEmpty)
        _ = try Board.open(at: t.board.path).setEnabled("com.example.late", true, environment: "default", by: TestBoard.admin)
        _ = await Self.collect(events, count: 1) { event -> String? in
            if case .loaded(let id, _) = event { return id }
            return nil
        }
        #expect(host.activePlugins.map(\.pluginID) == ["com.example.late"])
        _ = try Board.open(at: t.board.path).setEnabled("com.example.late", false, environment: "default", by: TestBoard.admin)
        _ = await Self.collect(events, count: 1) { event -> String? in
            if case .deactivated(let id, _, _) = event { return id }
            return nil
        }
        #expect(host.activePlugins.isEmpty)
        await host.stop()
    }

    @Test func aCompiledInVersionOtherThanTheBoardsIsReportedNotLoaded() async throws {
        let t = try TestBoard()
        try t.register("com.example.cal", "1.0.0").register("com.example.cal", "1.1.0")
        let host = try await host(t)
        host.register("com.example.cal", version: "1.0.0") { _ in TestPlugin(id: "cal") }
        let report = await host.start()
        #expect(host.activePlugins.isEmpty)
        #expect(report.first?.reasonCode == "no_implementation")
        _ = try Board.open(at: t.board.path).pin(
            "com.example.cal", version: SemanticVersion("1.0.0"), environment: "default", by: TestBoard.admin)
        await host.pollOnce()
        #expect(host.activePlugins.map(\.version) == ["1.0.0"])
        await host.stop()
    }

    @Test func aReadOnlyHostWorksAndSaysOnceThatItCannotReport() async throws {
        let t = try TestBoard()
        try t.register("com.example.ro", "1.0.0")
        let host = try await host(t, readOnly: true)
        host.register("com.example.ro", version: "1.0.0") { _ in TestPlugin(id: "ro") }
        let events = host.events()
        await host.start()
        #expect(host.activePlugins.map(\.pluginID) == ["com.example.ro"])
        let warnings = await Self.collect(events, count: 1) { event -> String? in
            if case .warning(let message) = event { return message }
            return nil
        }
        #expect(warnings.first?.contains("cannot write load reports") == true)
        #expect(try t.board.loadStatus().isEmpty)
        await host.stop()
    }

    @Test func theSecureStorageOfAPluginIsBoundToItAndNeedsTheCapability() async throws {
        let t = try TestBoard()
        try t.register("com.example.backend", "1.0.0", "\"capabilities\":[\"secure-storage\"]").register("com.example.nocap", "1.0.0")
        let stores = Mutex<[String: InMemorySecureStorage]>([:])
        let host = PluginHost(
            configuration: HostConfiguration(
                board: t.board, identity: HostIdentity(hostID: "h", environment: "default", hostVersion: "2.1.0"),
                secureStorage: { id in
                    stores.withLock { stores in
                        if let existing = stores[id] { return existing }
                        let fresh = InMemorySecureStorage()
                        stores[id] = fresh
                        return fresh
                    }
                }))
        let contexts = Mutex<[String: PluginContext]>([:])
        for id in ["com.example.backend", "com.example.nocap"] {
            host.register(id, version: "1.0.0") { context in
                contexts.withLock { $0[id] = context }
                return TestPlugin(id: id)
            }
        }
        await host.start()
        let backend = try #require(contexts.withLock { $0["com.example.backend"] })
        try await backend.secureStorage.set(Data("s3cret".utf8), forKey: "token")
        #expect(stores.withLock { Array($0.keys) } == ["com.example.backend"])
        let nocap = try #require(contexts.withLock { $0["com.example.nocap"] })
        await #expect(throws: SecureStorageError.self) { try await nocap.secureStorage.keys() }
        await host.stop()
    }

    /// Collects mapped events until there are `count` of them, or 60 s pass (a guard against hanging, generous because the
    /// whole suite can starve the cooperative threads on a 2-core machine).
    static func collect<T: Sendable>(
        _ events: AsyncStream<HostEvent>, count: Int,
        _ map: @escaping @Sendable (HostEvent) -> T?
    ) async -> [T] {
        await within(.eventDeadline) {
            var collected: [T] = []
            for await event in events {
                if let value = map(event) { collected.append(value) }
                if collected.count >= count { return collected }
            }
            return collected
        } ?? []
    }
}
