import Foundation
import PlugboardFileHost
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardStore
import PlugboardTestSupport
import PlugboardVersioning
import Synchronization
import Testing

/// A scratch board driven through the store API, for host tests.
final class TestBoard: Sendable {
    let folder: URL
    let board: Board
    /// Servers started for hosts of ``HostSourceKind/servedBoard``; stopped with the board.
    let servers = Mutex<[ServedTestBoard]>([])
    static let admin = try! Principal(osUser: "admin")

    init() throws {
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("plugboard-host-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        board = try Board.create(at: folder.appendingPathComponent("board.sqlite").path, by: Self.admin)
    }

    deinit {
        servers.withLock { $0.forEach { $0.stop() } }
        try? FileManager.default.removeItem(at: folder)
    }

    /// Registers a version; `extra` is additional manifest JSON members.
    @discardableResult
    func register(_ id: String, _ version: String, _ extra: String = "", artifact: String? = nil, enable: Bool = true) throws -> Self {
        let json = "{\"id\":\"\(id)\",\"name\":\"\(id)\",\"version\":\"\(version)\"\(extra.isEmpty ? "" : "," + extra)}"
        _ = try board.register(PluginManifest.parse(Data(json.utf8)), artifactPath: artifact, by: Self.admin)
        if enable { _ = try board.setEnabled(id, true, environment: "default", by: Self.admin) }
        return self
    }

    /// A host in `default` (host API 2.1.0, polling every 20 ms) with a ``TestPlugin`` compiled in for each of `ids`
    /// at version 1.0.0.
    func host(compiledIn ids: [String]) -> PluginHost {
        let host = PluginHost(
            configuration: HostConfiguration(
                board: board, identity: HostIdentity(hostID: "test-host", environment: "default", hostVersion: "2.1.0"),
                pollInterval: .milliseconds(20)))
        for id in ids {
            host.register(id, version: "1.0.0") { _ in TestPlugin(id: id) }
        }
        return host
    }

    func resolve(
        host: String = "2.1.0", gate: @escaping @Sendable (String) -> Bool = { _ in true },
        quarantine: @escaping @Sendable (String, String) -> SkipReason? = { _, _ in nil },
        availability: @escaping @Sendable (String, RegistrySnapshot.Version) -> SkipReason? = { _, _ in nil }
    ) throws -> Resolution {
        try Resolver(hostVersion: SemanticVersion(host), gate: gate, quarantine: quarantine, availability: availability)
            .resolve(board.registrySnapshot(environment: "default"))
    }
}

@Suite("resolver: which plug-ins load", .timeLimit(.hangGuard))
struct ResolverTests {
    @Test func onlyEnabledPluginsLoad() throws {
        let t = try TestBoard()
        try t.register("com.example.on", "1.0.0").register("com.example.off", "1.0.0", enable: false)
        let resolution = try t.resolve()
        #expect(resolution.load.map(\.pluginID) == ["com.example.on"])
        #expect(resolution.decision(for: "com.example.off")?.skip?.code == .disabled)
    }

    @Test func theHighestCompatibleReleaseIsPickedUnlessPinned() throws {
        let t = try TestBoard()
        try t.register("com.example.cal", "1.0.0", "\"host\":\"^2.0.0\"")
            .register("com.example.cal", "1.5.0", "\"host\":\"^2.0.0\"")
            .register("com.example.cal", "2.0.0", "\"host\":\"^3.0.0\"")
            .register("com.example.cal", "1.6.0-beta.1", "\"host\":\"^2.0.0\"")
        #expect(try t.resolve().decision(for: "com.example.cal")?.version == "1.5.0")
        #expect(try t.resolve(host: "3.0.0").decision(for: "com.example.cal")?.version == "2.0.0")
        _ = try t.board.pin("com.example.cal", version: SemanticVersion("1.0.0"), environment: "default", by: TestBoard.admin)
        #expect(try t.resolve().decision(for: "com.example.cal")?.version == "1.0.0")
        let pinnedIncompatible = try t.resolve(host: "3.0.0").decision(for: "com.example.cal")
        #expect(pinnedIncompatible?.skip?.code == .incompatibleHost)
    }

    @Test func noCompatibleVersionIsReported() throws {
        let t = try TestBoard()
        try t.register("com.example.old", "1.0.0", "\"host\":\"^1.0.0\"")
        let decision = try t.resolve().decision(for: "com.example.old")
        #expect(decision?.skip?.code == .incompatibleHost)
        #expect(decision?.skip?.message.contains("host API 2.1.0") == true)
    }

    @Test func killSwitchesCoverPluginVersionAndAll() throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0").register("com.example.a", "1.1.0").register("com.example.b", "1.0.0")
        _ = try t.board.kill(.version("com.example.a", SemanticVersion("1.1.0")), reason: "bad build", by: TestBoard.admin)
        #expect(try t.resolve().decision(for: "com.example.a")?.version == "1.0.0")
        _ = try t.board.kill(.plugin("com.example.a"), reason: "INC-9", by: TestBoard.admin)
        let killed = try t.resolve().decision(for: "com.example.a")
        #expect(killed?.skip?.code == .killed && killed?.skip?.message.contains("INC-9") == true)
        #expect(try t.resolve().decision(for: "com.example.b")?.skip == nil)
        _ = try t.board.kill(.all, reason: "freeze", by: TestBoard.admin)
        #expect(try t.resolve().load.isEmpty)
        #expect(try t.resolve().decision(for: "com.example.b")?.skip?.code == .killed)
    }

    @Test func aQuarantinedReleaseIsSkippedWithItsDependantsAndAKillSwitchIsSaidFirst() throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0").register("com.example.a", "1.1.0")
            .register("com.example.app", "1.0.0", "\"dependencies\":{\"com.example.a\":\"*\"}")
            .register("com.example.b", "1.0.0")
        let quarantine: @Sendable (String, String) -> SkipReason? = { id, version in
            id == "com.example.a" && version == "1.1.0" ? SkipReason(.quarantined, "crashed this host") : nil
        }
        let resolution = try t.resolve(quarantine: quarantine)
        // The release selected is skipped: no fallback to another version on the host's own.
        #expect(resolution.decision(for: "com.example.a")?.skip?.code == .quarantined)
        #expect(resolution.decision(for: "com.example.a")?.version == "1.1.0")
        #expect(resolution.decision(for: "com.example.app")?.skip?.code == .dependencyNotLoaded)
        #expect(resolution.load.map(\.pluginID) == ["com.example.b"])
        // Once the board kills the quarantined release, the host selects the one before it, which is not quarantined.
        _ = try t.board.kill(.version("com.example.a", SemanticVersion("1.1.0")), reason: "crashes hosts", by: TestBoard.admin)
        #expect(try t.resolve(quarantine: quarantine).decision(for: "com.example.a")?.version == "1.0.0")
        #expect(try t.resolve(quarantine: quarantine).decision(for: "com.example.a")?.skip == nil)
        _ = try t.board.kill(.plugin("com.example.a"), reason: "INC-9", by: TestBoard.admin)
        #expect(try t.resolve(quarantine: quarantine).decision(for: "com.example.a")?.skip?.code == .killed)
    }

    @Test func yankedVersionsAreNotPicked() throws {
        let t = try TestBoard()
        try t.register("com.example.y", "1.0.0").register("com.example.y", "1.1.0")
        _ = try t.board.yank("com.example.y", version: SemanticVersion("1.1.0"), reason: "broken", by: TestBoard.admin)
        #expect(try t.resolve().decision(for: "com.example.y")?.version == "1.0.0")
        _ = try t.board.yank("com.example.y", version: SemanticVersion("1.0.0"), reason: "broken too", by: TestBoard.admin)
        #expect(try t.resolve().decision(for: "com.example.y")?.skip?.code == .yanked)
    }

    @Test func theGateFlagDecides() throws {
        let t = try TestBoard()
        try t.register("com.example.gated", "1.0.0", "\"gate\":\"plugin.gated.rollout\"")
        #expect(try t.resolve(gate: { _ in true }).decision(for: "com.example.gated")?.skip == nil)
        let off = try t.resolve(gate: { $0 != "plugin.gated.rollout" }).decision(for: "com.example.gated")
        #expect(off?.skip?.code == .gateOff)
    }

    @Test func dependenciesLoadFirstAndMustBeInRange() throws {
        let t = try TestBoard()
        try t.register("com.example.app", "1.0.0", "\"dependencies\":{\"com.example.auth\":\"^1.2\",\"com.example.log\":\"*\"}")
            .register("com.example.auth", "1.3.0", "\"dependencies\":{\"com.example.log\":\">=1.0.0\"}")
            .register("com.example.log", "1.0.0")
        #expect(try t.resolve().load.map(\.pluginID) == ["com.example.log", "com.example.auth", "com.example.app"])

        let u = try TestBoard()
        try u.register("com.example.app", "1.0.0", "\"dependencies\":{\"com.example.auth\":\"^2.0\"}").register("com.example.auth", "1.3.0")
        let outOfRange = try u.resolve().decision(for: "com.example.app")
        #expect(outOfRange?.skip?.code == .incompatibleDependency)
        #expect(try u.resolve().decision(for: "com.example.auth")?.skip == nil)
    }

    @Test func missingAndUnloadedDependenciesSkipTheirDependants() throws {
        let t = try TestBoard()
        try t.register("com.example.app", "1.0.0", "\"dependencies\":{\"com.example.ghost\":\"^1.0.0\"}")
            .register("com.example.top", "1.0.0", "\"dependencies\":{\"com.example.mid\":\"^1.0.0\"}")
            .register("com.example.mid", "1.0.0", "\"dependencies\":{\"com.example.base\":\"^1.0.0\"}")
            .register("com.example.base", "1.0.0", enable: false)
        let resolution = try t.resolve()
        #expect(resolution.decision(for: "com.example.app")?.skip?.code == .missingDependency)
        #expect(resolution.decision(for: "com.example.mid")?.skip?.code == .dependencyNotLoaded)
        #expect(resolution.decision(for: "com.example.top")?.skip?.code == .dependencyNotLoaded)
        #expect(resolution.load.isEmpty)
    }

    @Test func cyclesAreSkippedAndNamedWithoutBlamingBystanders() throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0", "\"dependencies\":{\"com.example.b\":\"*\"}")
            .register("com.example.b", "1.0.0", "\"dependencies\":{\"com.example.c\":\"*\"}")
            .register("com.example.c", "1.0.0", "\"dependencies\":{\"com.example.a\":\"*\"}")
            .register("com.example.user", "1.0.0", "\"dependencies\":{\"com.example.a\":\"*\"}")
            .register("com.example.free", "1.0.0")
        let resolution = try t.resolve()
        for id in ["com.example.a", "com.example.b", "com.example.c"] {
            #expect(resolution.decision(for: id)?.skip?.code == .dependencyCycle)
        }
        #expect(resolution.decision(for: "com.example.user")?.skip?.code == .dependencyNotLoaded)
        #expect(resolution.load.map(\.pluginID) == ["com.example.free"])
    }

    @Test func availabilityIsTheLastRule() throws {
        let t = try TestBoard()
        try t.register("com.example.dyn", "1.0.0").register("com.example.dep", "1.0.0", "\"dependencies\":{\"com.example.dyn\":\"*\"}")
        let resolution = try t.resolve(availability: { id, _ in
            id == "com.example.dyn" ? SkipReason(.digestMismatch, "the artifact changed after registration") : nil
        })
        #expect(resolution.decision(for: "com.example.dyn")?.skip?.code == .digestMismatch)
        #expect(resolution.decision(for: "com.example.dep")?.skip?.code == .dependencyNotLoaded)
    }
}
