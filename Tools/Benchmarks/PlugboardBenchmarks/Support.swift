import BenchmarkContexts
import Foundation
import PlugboardFlags
import PlugboardModel
import PlugboardPluginAPI
import PlugboardStore
import Synchronization

// Fixtures shared by the benchmarks: the differential features file, seeded contexts, scratch boards.

enum Fixtures {
    /// The features file of the differential tests (see ``BenchmarkContexts``).
    static let featuresURL = BenchmarkContexts.featuresURL

    static func featuresData() throws -> Data { try Data(contentsOf: featuresURL) }

    /// The host-independent evaluation environment (fixed host name; system clock and randomness, as in production).
    static let evaluationEnvironment = EvaluationEnvironment(hostname: "bench-host")

    static let admin = try! Principal(osUser: "bench-admin")

    /// `count` realistic contexts (see ``BenchmarkContexts/contexts(count:seed:)``).
    static func contexts(count: Int, seed: UInt64 = 0x5EED) -> [UnleashContext] {
        BenchmarkContexts.contexts(count: count, seed: seed)
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
        board = try Board.create(at: folder.appendingPathComponent("board.sqlite").path, by: Fixtures.admin)
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
        _ = try board.register(PluginManifest.parse(Data(json.utf8)), artifactPath: nil, by: Fixtures.admin)
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
