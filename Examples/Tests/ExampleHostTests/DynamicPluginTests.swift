import Crypto
import ExampleFeatures
import Foundation
import NotesPlugin
import PlugboardFileHost
import PlugboardHost
import PlugboardModel
import PlugboardOperations
import PlugboardPluginAPI
import PlugboardTesting
import PlugboardVersioning
import Synchronization
import Testing

/// Flags from a ``FakeFlags``, for hosts under test.
struct FakeFlagProvider: HostFlagProvider {
    let flags: FakeFlags
    func refresh() {}
    func evaluator(for host: HostIdentity) -> any FlagEvaluating { flags }
}

/// A board in a scratch folder with the example manifests registered through the operations, as the CLI would.
final class ExampleBoard: Sendable {
    let folder: URL
    let board: BoardFile
    static let admin = try! Principal(osUser: "admin")
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The plug-in library built by this package (`swift build` builds it next to the test bundle).
    static let greeterLibrary: String = {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent("libGreeterPlugin.so").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return "libGreeterPlugin.so (not built: run swift build --package-path Examples --scratch-path .build first)"
    }()

    init(greeterArtifact: Bool = true) throws {
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("plugboard-examples-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        board = try BoardFile.create(at: folder.appendingPathComponent("board.sqlite").path, by: Self.admin)
        for (name, artifact) in [("greeter", greeterArtifact ? Self.greeterLibrary : nil), ("notes", nil)] {
            let text = try String(contentsOf: Self.examples.appendingPathComponent("manifests/\(name).json"), encoding: .utf8)
            try register(text, artifact: artifact)
            let id = try PluginManifest.parse(Data(text.utf8)).id
            _ = try board.perform(PluginOperations.Enable(id: PluginID(validating: id), env: "default"), as: Self.admin)
        }
    }

    /// Registers a release from its manifest's text, as `plugboard plugin register` does.
    func register(_ manifest: String, artifact: String?) throws {
        let register = PluginOperations.Register(manifest: .init(file: "manifest.json", text: manifest), artifact: artifact)
        _ = try board.perform(register, as: Self.admin)
    }

    /// The greeter's manifest, at another version.
    static func greeterManifest(version: String = "1.0.0") throws -> String {
        try String(contentsOf: examples.appendingPathComponent("manifests/greeter.json"), encoding: .utf8)
            .replacingOccurrences(of: "\"version\": \"1.0.0\"", with: "\"version\": \"\(version)\"")
    }

    /// Throws a kill switch, as `plugboard plugin kill` does.
    func kill(_ target: KillTarget, reason: String) throws {
        _ = try board.perform(PluginOperations.Kill(target, reason: Reason(validating: reason)), as: Self.admin)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func host(
        id: String = "host-a", gate: Bool = true, style: String = "Hello",
        storage: @escaping @Sendable (String) -> any SecureStorage = { _ in InMemorySecureStorage() }
    ) throws -> PluginHost {
        let services = ServiceRegistry()
        services.register((any GreetingStyle).self, FixedGreetingStyle(style))
        let host = PluginHost(
            configuration: HostConfiguration(
                source: try BoardFileSource(path: board.path),
                identity: HostIdentity(hostID: id, environment: "default", hostVersion: "2.3.0"),
                pollInterval: .milliseconds(20), secureStorage: storage,
                flags: FakeFlagProvider(flags: FakeFlags(["plugin.greeter.rollout": gate])), services: services,
                dynamicLibraryCache: folder.path))
        host.register(NotesPlugin.id, version: NotesPlugin.version) { NotesPlugin(context: $0) }
        return host
    }
}

@Suite("dynamic plug-ins", .timeLimit(.minutes(10)), .serialized)
struct DynamicPluginTests {
    @Test func theGreeterLibraryIsBuilt() {
        #expect(FileManager.default.fileExists(atPath: ExampleBoard.greeterLibrary), "\(ExampleBoard.greeterLibrary)")
    }

    @Test func aDynamicPluginLoadsAfterItsDigestIsChecked() async throws {
        let example = try ExampleBoard()
        let host = try example.host()
        let report = Dictionary(uniqueKeysWithValues: await host.start().map { ($0.pluginID, $0) })
        #expect(report["com.example.greeter"]?.state == .loaded, "\(report["com.example.greeter"]?.reason ?? "")")
        #expect(report["com.example.notes"]?.state == .loaded)
        let greeter = try #require(host.activePlugins.first { $0.pluginID == "com.example.greeter" })
        guard case .dynamicLibrary(let sha) = greeter.origin else {
            Issue.record("the greeter should come from its library")
            return
        }
        #expect(sha.count == 64)
        // Casts across the library boundary work: one shared copy of the interface types.
        let greetings = host.features((any Greeting).self)
        #expect(greetings.count == 1)
        #expect(try await greetings.first?.greet("Ann") == "Hello, Ann! (greeting #1 from com.example.greeter@1.0.0)")
        let notes = try #require(host.features((any NoteTaking).self).first)
        try await notes.save(title: "todo", body: "ship it")
        #expect(try await notes.note(titled: "todo") == "ship it")
        await host.stop()
    }

    @Test func anArtifactChangedAfterRegistrationIsRefusedNotLoaded() async throws {
        let example = try ExampleBoard()
        let greeter = try example.board.perform(
            PluginOperations.Show(id: PluginID(validating: "com.example.greeter")), as: ExampleBoard.admin)
        let sha = try #require(greeter.value.versions.first?.artifactSHA256)
        let stored = try #require(example.board.artifactPath(sha256: sha))
        let handle = try #require(FileHandle(forWritingAtPath: stored))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("tampered".utf8))
        try handle.close()
        let host = try example.host()
        let report = Dictionary(uniqueKeysWithValues: await host.start().map { ($0.pluginID, $0) })
        #expect(report["com.example.greeter"]?.reasonCode == "digest_mismatch", "\(report)")
        #expect(report["com.example.greeter"]?.reason?.contains("changed after registration") == true)
        #expect(host.features((any Greeting).self).isEmpty)
        #expect(report["com.example.notes"]?.state == .loaded)
        await host.stop()
    }

    @Test func aSignedLibraryLoadsUnderRequireAndOneSwappedOnDiskAfterSigningIsRefused() async throws {
        let example = try ExampleBoard()
        let board = example.board
        let key = Curve25519.Signing.PrivateKey()
        let manifest = try PluginManifest.parse(Data(contentsOf: ExampleBoard.examples.appendingPathComponent("manifests/greeter.json")))
        let sha = try #require(FileDigest.sha256(ofFile: ExampleBoard.greeterLibrary))
        let signature = try ReleaseSignature.sign(ReleaseStatement(manifest: manifest, artifactSHA256: sha), with: key)
        let id = try PluginID(validating: "com.example.greeter")
        let text = String(decoding: signature.fileData(), as: UTF8.self)
        let publicKey = key.publicKey.rawRepresentation.base64EncodedString()
        _ = try board.perform(
            TrustOperations.AddSignature(id: id, version: manifest.version, signature: text, file: "greeter.sig"), as: ExampleBoard.admin)
        _ = try board.perform(TrustOperations.AddSigner(id: id, publicKey: publicKey, name: nil), as: ExampleBoard.admin)
        _ = try board.perform(TrustOperations.SetPolicy(signatures: .require, env: "default"), as: ExampleBoard.admin)

        let host = try example.host()
        var report = Dictionary(uniqueKeysWithValues: await host.start().map { ($0.pluginID, $0) })
        #expect(report["com.example.greeter"]?.state == .loaded, "\(report)")
        #expect(report["com.example.notes"]?.reasonCode == "unsigned", "\(report)")
        await host.stop()

        // The library in the artifact store is swapped after signing: the next host refuses it before dlopen.
        let stored = try #require(board.artifactPath(sha256: sha))
        try Data("not the library that was signed".utf8).write(to: URL(fileURLWithPath: stored))
        let next = try example.host(id: "host-b")
        report = Dictionary(uniqueKeysWithValues: await next.start().map { ($0.pluginID, $0) })
        #expect(report["com.example.greeter"]?.reasonCode == "modified_after_signing", "\(report)")
        #expect(report["com.example.greeter"]?.reason?.contains("on disk was modified after signing") == true)
        #expect(next.features((any Greeting).self).isEmpty)
        await next.stop()
    }

    @Test func theGateFlagKeepsAPluginOffForThisHost() async throws {
        let example = try ExampleBoard()
        let host = try example.host(gate: false)
        let report = Dictionary(uniqueKeysWithValues: await host.start().map { ($0.pluginID, $0) })
        #expect(report["com.example.greeter"]?.reasonCode == "gate_off")
        await host.stop()
    }

    @Test func theSamePluginBinaryRunsInTwoHostsWithDifferentSPIs() async throws {
        let example = try ExampleBoard()
        let storeA = InMemorySecureStorage()
        let storeB = InMemorySecureStorage()
        let hostA = try example.host(id: "host-a", style: "Hello", storage: { _ in storeA })
        let hostB = try example.host(id: "host-b", style: "Bonjour", storage: { _ in storeB })
        await hostA.start()
        await hostB.start()
        let a = try #require(hostA.features((any Greeting).self).first)
        let b = try #require(hostB.features((any Greeting).self).first)
        #expect(try await a.greet("Ann") == "Hello, Ann! (greeting #1 from com.example.greeter@1.0.0)")
        #expect(try await a.greet("Ann").hasSuffix("#2 from com.example.greeter@1.0.0)"))
        // Host B's storage and style are its own.
        #expect(try await b.greet("Ann") == "Bonjour, Ann! (greeting #1 from com.example.greeter@1.0.0)")
        #expect(storeA.storedValues.keys.contains("greetings") && storeB.storedValues.keys.contains("greetings"))
        // Both hosts reported to the board.
        let status = try example.board.perform(
            PluginOperations.Status(id: PluginID(validating: "com.example.greeter")), as: ExampleBoard.admin)
        #expect(Set(status.value.map(\.hostID)) == ["host-a", "host-b"])
        await hostA.stop()
        await hostB.stop()
    }

    @Test func aKillSwitchDetachesTheDynamicPluginWhileTheHostRuns() async throws {
        let example = try ExampleBoard()
        let host = try example.host()
        await host.start()
        #expect(host.features((any Greeting).self).count == 1)
        try example.kill(.plugin("com.example.greeter"), reason: "INC-5")
        // The host detaches the plug-in from lookups first and records its state after the plug-in's deactivate()
        // returns: wait for both (a guard against hanging, not a measurement).
        let deadline = ContinuousClock.now + .seconds(600)
        func greeterState() -> LoadReportEntry.State? { host.status.first { $0.pluginID == "com.example.greeter" }?.state }
        while !host.features((any Greeting).self).isEmpty || greeterState() != .deactivated, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(host.features((any Greeting).self).isEmpty)
        #expect(greeterState() == .deactivated)
        await host.stop()
    }
}

@Suite("dynamic plug-ins: new versions", .timeLimit(.minutes(10)), .serialized)
struct DynamicPluginVersionTests {
    @Test func aNewVersionOfALoadedLibraryKeepsTheOldOneRunningAndAsksForARestart() async throws {
        let example = try ExampleBoard()
        let host = try example.host()
        let events = host.events()
        await host.start()
        #expect(host.activePlugins.first { $0.pluginID == "com.example.greeter" }?.version == "1.0.0")

        // Version 1.1.0 is registered (same library bytes, new version) while the host runs.
        try example.register(ExampleBoard.greeterManifest(version: "1.1.0"), artifact: ExampleBoard.greeterLibrary)
        let warning: String? = await withTaskGroup(of: String?.self) { group in
            group.addTask {
                for await event in events { if case .warning(let message) = event { return message } }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return nil
            }  // never hang the suite
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(warning?.contains("restart the host to load 1.1.0") == true, "\(warning ?? "no warning")")
        // The running version keeps serving until the restart.
        #expect(host.activePlugins.first { $0.pluginID == "com.example.greeter" }?.version == "1.0.0")
        #expect(host.features((any Greeting).self).count == 1)
        await host.stop()
    }

    @Test func aKillSwitchOverTheRunningVersionStopsItWhileTheNextWaitsForARestart() async throws {
        let example = try ExampleBoard()
        let host = try example.host()
        await host.start()
        #expect(host.activePlugins.first { $0.pluginID == "com.example.greeter" }?.version == "1.0.0")
        try example.register(ExampleBoard.greeterManifest(version: "1.1.0"), artifact: ExampleBoard.greeterLibrary)
        // 1.1.0 waits for a restart (the 1.0.0 library is loaded); a kill switch over 1.0.0 must stop it now all the same.
        let semantic = try SemanticVersion("1.0.0")
        try example.kill(.version("com.example.greeter", semantic), reason: "INC-6")
        let deadline = ContinuousClock.now + .seconds(600)
        func greeter() -> LoadReportEntry? { host.status.first { $0.pluginID == "com.example.greeter" } }
        while !host.features((any Greeting).self).isEmpty || greeter()?.state == .loaded, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(host.features((any Greeting).self).isEmpty)
        #expect(host.activePlugins.allSatisfy { $0.pluginID != "com.example.greeter" })
        // Stopped; what it reports now is why 1.1.0 does not run yet.
        #expect(greeter()?.reasonCode == "restart_required", "\(String(describing: greeter()))")
        await host.stop()
    }
}
