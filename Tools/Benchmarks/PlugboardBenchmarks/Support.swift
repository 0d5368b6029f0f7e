import Foundation
import PlugboardFlags
import PlugboardPluginAPI
import PlugboardStore
import Synchronization

// Fixtures shared by the benchmarks: the differential features file, seeded contexts, scratch boards.

/// SplitMix64, so that every run evaluates the same contexts.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Fixtures {
    /// The repository root (this file is Tools/Benchmarks/PlugboardBenchmarks/Support.swift).
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The features file of the differential tests: 33 flags, 3 segments — flexibleRollout with several
    /// stickiness sources, gradual and random rollouts, user ids, remote addresses, string/list/number/date/semver/
    /// regex/CIDR constraints, segments, flag and strategy variants, dependencies.
    static let featuresURL = repositoryRoot.appendingPathComponent("Tests/PlugboardFlagsTests/Fixtures/differential/features.json")

    static func featuresData() throws -> Data { try Data(contentsOf: featuresURL) }

    /// The host-independent evaluation environment (fixed host name; system clock and randomness, as in production).
    static let evaluationEnvironment = EvaluationEnvironment(hostname: "bench-host")

    static let admin = try! Principal(osUser: "bench-admin")

    /// `count` realistic contexts: every request has a user id and most of the properties the flags read.
    static func contexts(count: Int, seed: UInt64 = 0x5EED) -> [UnleashContext] {
        var rng = SplitMix64(seed: seed)
        func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
        func chance(_ percent: Int) -> Bool { int(0...99) < percent }
        func pick(_ items: [String]) -> String { items[int(0...(items.count - 1))] }
        func ipv4() -> String {
            switch int(0...3) {
            case 0: return "10.\(int(0...255)).\(int(0...255)).\(int(0...255))"
            case 1: return "172.\(int(14...33)).\(int(0...255)).\(int(1...254))"
            case 2: return "203.0.113.\(int(1...254))"
            default: return "\(int(1...223)).\(int(0...255)).\(int(0...255)).\(int(1...254))"
            }
        }
        func date() -> String {
            let month = int(1...12)
            let day = int(1...28)
            return
                "\(int(2023...2027))-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)T\(int(10...23)):\(int(10...59)):00.000Z"
        }
        return (0..<count).map { _ in
            var properties: [String: String] = [
                "tenant": pick(["acme", "globex", "initech", "beta", "Beta-Labs", "über-corp", "t-\(int(0...99))"]),
                "country": pick(["norway", "sweden", "denmark", "finland", "germany", "spain", "Ærø"]),
                "age": String(int(12...90)),
                "version": pick([
                    "1.4.2", "2.0.0", "2.1.0-beta.3", "2.3.1", "0.9.0", "3.0.0-alpha", "0.1.0-rc.2",
                    "\(int(0...3)).\(int(0...5)).\(int(0...9))",
                ]),
                "email": pick(["user\(int(0...9999))@example.com", "admin@example.com", "bob@test.com", "eve@example.org", "root@corp.net"]
                ),
            ]
            if chance(40) { properties["score"] = String(int(-10...150)) }
            if chance(40) { properties["clientIp"] = ipv4() }
            if chance(20) { properties["launchAt"] = date() }
            return UnleashContext(
                userId: chance(95) ? "user-\(int(0...999_999))" : pick(["u1", "alice", "USER-42"]),
                sessionId: chance(80) ? "s-\(int(0...99_999))" : nil,
                environment: pick(["production", "production", "production", "staging"]),
                appName: pick(["web", "ios", "android"]),
                remoteAddress: ipv4(),
                currentTime: chance(50) ? date() : nil,
                properties: properties)
        }
    }
}

/// A board in a fresh temporary folder; a benchmark's teardown removes them all (``removeAll()``).
final class ScratchBoard: Sendable {
    private static let folders = Mutex<[URL]>([])

    let folder: URL
    let board: Board
    var path: String { board.path }

    init(_ label: String) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "plugboard-bench-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        Self.folders.withLock { $0.append(folder) }
        self.folder = folder
        board = try Board.create(at: folder.appendingPathComponent("board.sqlite").path, actor: Fixtures.admin)
    }

    /// Removes the folder of every scratch board made so far.
    static func removeAll() {
        for folder in folders.withLock({ folders in
            defer { folders.removeAll() }
            return folders
        }) {
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Registers a version from manifest JSON members (`"id"`, `"name"` and `"version"` are added).
    func register(_ id: String, _ version: String, _ extra: String = "") throws {
        let json = "{\"id\":\"\(id)\",\"name\":\"\(id)\",\"version\":\"\(version)\"\(extra.isEmpty ? "" : "," + extra)}"
        _ = try board.register(PluginManifest.parse(Data(json.utf8)), artifactPath: nil, actor: Fixtures.admin)
    }
}

/// A compiled-in plug-in that does nothing.
final class NoopPlugin: Plugin {
    func activate(context: PluginContext) async throws {}
    func deactivate() async {}
}

/// A counter that survives from one sample to the next (the benchmark closures are not `@Sendable`).
final class Cursor {
    var position = 0
    @inline(__always) func next(mask: Int) -> Int {
        position &+= 1
        return position & mask
    }
}
