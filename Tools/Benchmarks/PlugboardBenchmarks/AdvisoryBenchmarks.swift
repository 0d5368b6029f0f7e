import Benchmark
import Foundation
import PlugboardHost
import PlugboardModel
import PlugboardStore
import PlugboardVersioning

/// 1,000 plug-ins with four releases each (1.0.0, 1.1.0, 1.2.0, 2.0.0), all enabled, and 10,000 OSV advisories over them
/// (seeded: SEMVER ranges with introduced/fixed or introduced "0"/last_affected, lists of versions, aliases, a severity
/// by name, one in 50 withdrawn by its publisher; each affects 1 to 3 plug-ins), in batches of the import's limit.
final class AdvisoryFixture {
    static let pluginCount = 1_000
    static let advisoryCount = 10_000
    static let releases = ["1.0.0", "1.1.0", "1.2.0", "2.0.0"]

    static func id(_ index: Int) -> String { "com.bench.adv\(String(format: "%05d", index))" }

    /// The documents, in batches of ``Board/advisoryImportLimit``, each with the name of its file.
    static let batches: [[(text: String, file: String)]] = {
        var state: UInt64 = 0xAD5
        func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
        let all = (0..<advisoryCount).map { n -> (text: String, file: String) in
            var entries: [String] = []
            var named: Set<Int> = []
            for _ in 0..<(1 + next(3)) {
                let plugin = next(pluginCount)
                guard named.insert(plugin).inserted else { continue }
                let package = "\"package\":{\"ecosystem\":\"Plugboard\",\"name\":\"\(id(plugin))\"}"
                switch next(3) {
                case 0:
                    let low = next(3)
                    let high = low + 1 + next(4 - low)
                    let fixed = high < releases.count ? releases[high] : "2.1.0"
                    entries.append(
                        "{\(package),\"ranges\":[{\"type\":\"SEMVER\",\"events\":[{\"introduced\":\"\(releases[low])\"},{\"fixed\":\"\(fixed)\"}]}]}"
                    )
                case 1:
                    entries.append(
                        "{\(package),\"ranges\":[{\"type\":\"SEMVER\",\"events\":[{\"introduced\":\"0\"},{\"last_affected\":\"\(releases[next(3)])\"}]}]}"
                    )
                default:
                    entries.append("{\(package),\"versions\":[\"\(releases[next(4)])\"]}")
                }
            }
            let severity = ["LOW", "MODERATE", "HIGH", "CRITICAL"][next(4)]
            let withdrawn = n % 50 == 0 ? ",\"withdrawn\":\"2026-11-21T10:00:00Z\"" : ""
            let text = """
                {"schema_version":"1.7.0","id":"PBSA-2026-\(String(format: "%05d", n))","modified":"2026-11-20T10:00:00Z"\(withdrawn),\
                "aliases":["CVE-2026-\(20_000 + n)"],"summary":"Generated advisory \(n)","affected":[\(entries.joined(separator: ","))],\
                "database_specific":{"severity":"\(severity)"}}
                """
            return (text, "PBSA-2026-\(String(format: "%05d", n)).json")
        }
        return stride(from: 0, to: all.count, by: Board.advisoryImportLimit).map {
            Array(all[$0..<min($0 + Board.advisoryImportLimit, all.count)])
        }
    }()

    let scratch: ScratchBoard

    /// A board with the plug-ins registered (one change), enabled in `default` when `enabled`, and the advisories
    /// imported when `advised`.
    init(enabled: Bool, advised: Bool) throws {
        scratch = try ScratchBoard("advisories")
        let manifests = try (0..<Self.pluginCount).flatMap { index in
            try Self.releases.map { version in
                try PluginManifest.parse(
                    Data("{\"id\":\"\(Self.id(index))\",\"name\":\"Bench \(index)\",\"version\":\"\(version)\",\"host\":\">=1.0.0\"}".utf8))
            }
        }
        _ = try scratch.board.register(manifests, by: Fixtures.admin)
        if enabled {
            for index in 0..<Self.pluginCount {
                _ = try scratch.board.setEnabled(Self.id(index), true, environment: "default", by: Fixtures.admin)
            }
        }
        if advised { try importAll() }
    }

    /// Every batch, one import each: what `plugboard advisory import FOLDER` does per folder, without the process.
    func importAll() throws {
        for batch in Self.batches { _ = try scratch.board.importAdvisories(batch, by: Fixtures.admin) }
    }

    /// A host of `default` that runs nothing yet, so that refuse-new refuses as it does for a new load.
    static let resolver = Resolver(hostVersion: try! SemanticVersion("2.0.0"), gate: { _ in true }, availability: { _, _ in nil })
}

func advisoryBenchmarks() {
    let slow = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident], warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 5)
    // One iteration: the 10,000 documents imported in 50 imports of 200 on a board of 1,000 plug-ins (the board made
    // outside the measurement).
    Benchmark("advisories.import.10000", configuration: slow) { benchmark in
        for _ in benchmark.scaledIterations {
            benchmark.stopMeasurement()
            let fixture = try! AdvisoryFixture(enabled: false, advised: false)
            _ = AdvisoryFixture.batches.count  // the documents are made once, outside the measurement
            benchmark.startMeasurement()
            try! fixture.importAll()
        }
    } teardown: {
        ScratchBoard.removeAll()
    }

    // A host's check of its plug-ins: resolving a snapshot of the 1,000 enabled plug-ins and the 9,800 standing
    // advisories that name them; one iteration checks all 1,000 (divide by 1,000 for a plug-in).
    let check = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal], warmupIterations: 2, maxDuration: .seconds(10), maxIterations: 200)
    Benchmark("advisories.resolve.1000", configuration: check) { benchmark, snapshot in
        for _ in benchmark.scaledIterations { blackHole(AdvisoryFixture.resolver.resolve(snapshot)) }
    } setup: { () -> RegistrySnapshot in
        let fixture = try AdvisoryFixture(enabled: true, advised: true)
        let snapshot = try fixture.scratch.board.registrySnapshot(environment: "default")
        let resolution = AdvisoryFixture.resolver.resolve(snapshot)
        print("advisories fixture: \(snapshot.advisories?.count ?? 0) advisories in the snapshot, \(resolution.load.count) to load")
        return snapshot
    } teardown: {
        ScratchBoard.removeAll()
    }

    // The check itself, for each of the 1,000 plug-ins at each of its 4 releases: the advisories that affect it, looked up
    // by plug-in id (what hosts do), and by a scan of every advisory in the snapshot (what they did before the index).
    for (name, scan) in [("advisories.affecting.index.1000", false), ("advisories.affecting.scan.1000", true)] {
        Benchmark(name, configuration: check) { benchmark, state in
            let (snapshot, all, ids) = state
            for _ in benchmark.scaledIterations {
                for id in ids {
                    for release in AdvisoryFixture.releases {
                        blackHole(scan ? all.affecting(id, release) : snapshot.advisories(affecting: id, release))
                    }
                }
            }
        } setup: { () -> (RegistrySnapshot, [HostAdvisory], [String]) in
            let snapshot = try AdvisoryFixture(enabled: true, advised: true).scratch.board.registrySnapshot(environment: "default")
            return (snapshot, snapshot.advisories ?? [], snapshot.plugins.keys.sorted())
        } teardown: {
            ScratchBoard.removeAll()
        }
    }

    // The same snapshot without its advisories: what the check adds is the difference.
    Benchmark("advisories.resolve-without.1000", configuration: check) { benchmark, snapshot in
        for _ in benchmark.scaledIterations { blackHole(AdvisoryFixture.resolver.resolve(snapshot)) }
    } setup: { () -> RegistrySnapshot in
        let fixture = try AdvisoryFixture(enabled: true, advised: false)
        return try fixture.scratch.board.registrySnapshot(environment: "default")
    } teardown: {
        ScratchBoard.removeAll()
    }

    // What a host of the board file does at each change: read the snapshot (the advisories with it), then resolve.
    Benchmark("advisories.snapshot+resolve.1000", configuration: check) { benchmark, fixture in
        for _ in benchmark.scaledIterations {
            blackHole(AdvisoryFixture.resolver.resolve(try! fixture.scratch.board.registrySnapshot(environment: "default")))
        }
    } setup: {
        try AdvisoryFixture(enabled: true, advised: true)
    } teardown: {
        ScratchBoard.removeAll()
    }
}
