import Benchmark
import Foundation
import PlugboardFileHost
import PlugboardFlags
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardStore
import PlugboardVersioning

/// A board with 200 plug-ins as a large deployment might have: two or three versions each, a dependency tree
/// (every plug-in but the first needs its parent, a third of them a second plug-in too), host ranges that rule
/// out some versions, ten gate flags (50 % rollouts), two disabled plug-ins, one kill switch, one yanked version.
final class RegistryFixture {
    static let pluginCount = 200
    static let environment = "default"

    let scratch: ScratchBoard
    let resolver: Resolver

    static func id(_ index: Int) -> String { "com.bench.p\(String(format: "%03d", index))" }

    init() throws {
        scratch = try ScratchBoard("registry")
        var gates: [String] = []
        for index in 0..<Self.pluginCount {
            var dependencies: [String] = []
            if index > 0 { dependencies.append("\"\(Self.id((index - 1) / 2))\":\"^1.0.0\"") }
            if index >= 10, index % 3 == 0, (index / 3 - 1) != (index - 1) / 2 {
                dependencies.append("\"\(Self.id(index / 3 - 1))\":\">=1.0.0 <2.0.0\"")
            }
            var extra = "\"host\":\"^2.0.0\",\"capabilities\":[\"flags\"]"
            if !dependencies.isEmpty { extra += ",\"dependencies\":{\(dependencies.joined(separator: ","))}" }
            if index % 20 == 7 {
                let gate = "plugin.gate.\(index)"
                gates.append(gate)
                extra += ",\"gate\":\"\(gate)\""
            }
            try scratch.register(Self.id(index), "1.0.0", extra)
            try scratch.register(Self.id(index), "1.1.0", extra)
            if index % 10 == 0 { try scratch.register(Self.id(index), "2.0.0", "\"host\":\"^3.0.0\"") }
            if !(index >= 150 && index % 25 == 0) {
                _ = try scratch.board.setEnabled(Self.id(index), true, environment: Self.environment, by: Fixtures.admin)
            }
        }
        _ = try scratch.board.kill(.plugin(Self.id(190)), reason: "INC-1", by: Fixtures.admin)
        _ = try scratch.board.yank(Self.id(180), version: SemanticVersion("1.1.0"), reason: "bad build", by: Fixtures.admin)
        let features = gates.map {
            """
            {"name":"\($0)","enabled":true,"strategies":[{"name":"flexibleRollout","parameters":{"rollout":"50","stickiness":"default","groupId":"\($0)"}}]}
            """
        }
        let set = try FeatureSet.decode(from: Data("{\"version\":1,\"features\":[\(features.joined(separator: ","))]}".utf8))
        _ = try scratch.board.importFlags(set, environment: Self.environment, by: Fixtures.admin)
        let flags = try FlagSnapshot(scratch.board.featureSet(environment: Self.environment), environment: Fixtures.evaluationEnvironment)
        let host = UnleashContext(userId: "bench-host", environment: Self.environment, properties: ["hostId": "bench-host"])
        resolver = Resolver(
            hostVersion: try SemanticVersion("2.1.0"), gate: { flags.isEnabled($0, context: host) },
            availability: { _, _ in nil })
    }
}

/// A board with one plug-in, for writes.
final class WriteFixture {
    let scratch: ScratchBoard
    var enabled = false
    let pluginID = "com.bench.toggle"

    init() throws {
        scratch = try ScratchBoard("write")
        try scratch.register(pluginID, "1.0.0")
    }
}

/// A board whose audit log holds `rows` rows (appended in one transaction, as many changes would have).
func auditBoard(rows: Int) throws -> ScratchBoard {
    let scratch = try ScratchBoard("audit")
    let existing = try scratch.board.verifyAudit().rowsChecked
    let entries = (existing..<rows).map { index in
        let enabled = index % 2 == 0
        return AuditEntry(
            action: enabled ? .pluginEnable : .pluginDisable, targetType: "plugin", targetID: "com.example.plugin\(index % 50)",
            environment: "production", before: .object(["enabled": .bool(!enabled), "pinned": .null]),
            after: .object(["enabled": .bool(enabled), "pinned": .null]))
    }
    try scratch.board.appendAuditEntries(entries, by: Fixtures.admin)
    return scratch
}

func boardBenchmarks() {
    // Change detection: what a host pays at every poll when nothing changed.
    Benchmark(
        "board.version",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 10, scalingFactor: .kilo,
            maxDuration: .seconds(3), maxIterations: 500)
    ) { benchmark, board in
        for _ in benchmark.scaledIterations {
            blackHole(try! board.version())
        }
    } setup: {
        try Board.open(at: ScratchBoard("poll").path)
    } teardown: {
        ScratchBoard.removeAll()
    }

    Benchmark(
        "host.pollOnce.unchanged",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 10, scalingFactor: .kilo,
            maxDuration: .seconds(3), maxIterations: 500)
    ) { benchmark, host in
        for _ in benchmark.scaledIterations {
            await host.pollOnce()
        }
    } setup: { () -> PluginHost in
        let scratch = try ScratchBoard("pollhost")
        try scratch.register("com.bench.one", "1.0.0")
        _ = try scratch.board.setEnabled("com.bench.one", true, environment: "default", by: Fixtures.admin)
        let host = PluginHost(
            configuration: HostConfiguration(
                board: scratch.board, identity: HostIdentity(hostID: "bench-host", environment: "default", hostVersion: "2.1.0"),
                pollInterval: .seconds(3600), logger: quietLogger()))
        host.register("com.bench.one", version: "1.0.0") { _ in NoopPlugin() }
        await host.start()
        return host
    } teardown: {
        ScratchBoard.removeAll()
    }

    // Eligibility: read the registry snapshot and resolve it, as a host does at start and after every change.
    let registry = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 3, maxDuration: .seconds(3), maxIterations: 300)

    Benchmark("registry.snapshot+resolve.200", configuration: registry) { benchmark, fixture in
        for _ in benchmark.scaledIterations {
            let snapshot = try! fixture.scratch.board.registrySnapshot(environment: RegistryFixture.environment)
            blackHole(fixture.resolver.resolve(snapshot))
        }
    } setup: { () -> RegistryFixture in
        let fixture = try RegistryFixture()
        let resolution = try fixture.resolver.resolve(fixture.scratch.board.registrySnapshot(environment: RegistryFixture.environment))
        print("registry fixture: \(resolution.load.count) to load, \(resolution.skipped.count) skipped")
        return fixture
    } teardown: {
        ScratchBoard.removeAll()
    }

    Benchmark("registry.snapshot.200", configuration: registry) { benchmark, fixture in
        for _ in benchmark.scaledIterations {
            blackHole(try! fixture.scratch.board.registrySnapshot(environment: RegistryFixture.environment))
        }
    } setup: {
        try RegistryFixture()
    } teardown: {
        ScratchBoard.removeAll()
    }

    Benchmark("registry.resolve.200", configuration: registry) { benchmark, state in
        let (fixture, snapshot) = state
        for _ in benchmark.scaledIterations {
            blackHole(fixture.resolver.resolve(snapshot))
        }
    } setup: { () -> (RegistryFixture, RegistrySnapshot) in
        let fixture = try RegistryFixture()
        return (fixture, try fixture.scratch.board.registrySnapshot(environment: RegistryFixture.environment))
    } teardown: {
        ScratchBoard.removeAll()
    }

    // The state proof's check before loading: the rows of every loadable release against the log's digests (the
    // index's own check is once per board change, not per call, as in a host).
    Benchmark("registry.stateProblems.200", configuration: registry) { benchmark, state in
        let (fixture, candidates) = state
        for _ in benchmark.scaledIterations {
            for (id, version) in candidates {
                blackHole(
                    try! fixture.scratch.board.stateProblems(pluginID: id, version: version, environment: RegistryFixture.environment))
            }
        }
    } setup: { () -> (RegistryFixture, [(String, String)]) in
        let fixture = try RegistryFixture()
        let resolution = fixture.resolver.resolve(try fixture.scratch.board.registrySnapshot(environment: RegistryFixture.environment))
        return (fixture, resolution.load.map { ($0.pluginID, $0.version ?? "") })
    } teardown: {
        ScratchBoard.removeAll()
    }

    // Writes: one audited change (BEGIN IMMEDIATE, checks, upsert, hash-chained audit append, commit + fsync).
    Benchmark(
        "board.setEnabled",
        configuration: .init(
            metrics: [.wallClock, .throughput], warmupIterations: 3, maxDuration: .seconds(5), maxIterations: 300)
    ) { benchmark, fixture in
        for _ in benchmark.scaledIterations {
            fixture.enabled.toggle()
            blackHole(
                try! fixture.scratch.board.setEnabled(fixture.pluginID, fixture.enabled, environment: "default", by: Fixtures.admin))
        }
    } setup: {
        try WriteFixture()
    } teardown: {
        ScratchBoard.removeAll()
    }

    // `plugboard audit verify`: recompute the whole chain.
    for rows in [1_000, 10_000] {
        Benchmark(
            "audit.verify.\(rows)",
            configuration: .init(
                metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 1, maxDuration: .seconds(4),
                maxIterations: rows > 1_000 ? 30 : 100)
        ) { benchmark, scratch in
            for _ in benchmark.scaledIterations {
                let verification = try! scratch.board.verifyAudit()
                precondition(verification.ok && verification.rowsChecked == rows)
                blackHole(verification)
            }
        } setup: {
            try auditBoard(rows: rows)
        } teardown: {
            ScratchBoard.removeAll()
        }
    }

    // `audit verify` with the state proof on a board of policy: 2,000 plug-ins (a plug-in, a version, an owner and
    // an enablement row each) and 10,000 audit rows; throughput counts audit rows plus rows of policy.
    Benchmark(
        "audit.verify.state.2000x10000",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 1, maxDuration: .seconds(6), maxIterations: 20)
    ) { (benchmark: Benchmark, scratch: ScratchBoard) in
        for _ in benchmark.scaledIterations {
            let verification = try! scratch.board.verifyAudit()
            precondition(verification.ok && verification.stateRowsChecked > 8_000, "\(verification.problems.prefix(3))")
            blackHole(verification)
        }
    } setup: { () -> ScratchBoard in
        let scratch = try ScratchBoard("state")
        for index in 0..<2_000 { try scratch.register("com.bench.s\(index)", "1.0.0") }
        var rows = try scratch.board.verifyAudit().rowsChecked
        var index = 0
        while rows < 10_000 {
            _ = try scratch.board.setEnabled(
                "com.bench.s\(index % 2_000)", index / 2_000 % 2 == 0, environment: "default", by: Fixtures.admin)
            rows += 1
            index += 1
        }
        let verification = try scratch.board.verifyAudit()
        print("state fixture: \(verification.rowsChecked) audit rows, \(verification.stateRowsChecked) rows of policy")
        return scratch
    } teardown: {
        ScratchBoard.removeAll()
    }
}
