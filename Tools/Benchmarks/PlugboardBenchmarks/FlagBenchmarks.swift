import Benchmark
import BenchmarkContexts
import Foundation
import PlugboardFileHost
import PlugboardFlags
import PlugboardHost
import PlugboardPluginAPI
import PlugboardStore

/// What one evaluation sample iterates over: 4096 (flag, context) pairs prepared outside the measured loop,
/// every flag of the features file in turn against seeded random contexts.
final class EvaluationFixture {
    static let pairCount = 4096
    static let mask = pairCount - 1

    let snapshot: FlagSnapshot
    let provider: FlagSnapshotProvider
    let names: [String]
    let contexts: [UnleashContext]
    /// The same contexts as an app holds them (see `HeldContext`): the timed loops read these.
    let held: [HeldContext]
    let cursor = Cursor()

    /// Runs `body` `count` times over the next pairs in turn, with each context borrowed from its `HeldContext` by a
    /// `for … in` loop, as an app passes the context it holds. (Read as `held[i].context` in the loop body, the
    /// compiler copies the context, its strings and its dictionary, before each call: about 100 ns that an app does
    /// not pay, and that `Tools/Benchmarks/compare-peer` does not time either.)
    @inline(__always)
    func forEach(_ count: Int, _ body: (Int, borrowing UnleashContext) -> Void) {
        var remaining = count
        while remaining > 0 {
            let start = cursor.next(mask: Self.mask)
            let end = min(Self.pairCount, start + remaining)
            var i = start
            for held in held[start..<end] {
                body(i, held.context)
                i += 1
            }
            cursor.position &+= end - start - 1
            remaining -= end - start
        }
    }

    init() throws {
        snapshot = try FlagSnapshot(json: Fixtures.featuresData(), mode: .strict, environment: Fixtures.evaluationEnvironment)
        provider = FlagSnapshotProvider(snapshot)
        let flagNames = snapshot.flagNames
        names = (0..<Self.pairCount).map { flagNames[$0 % flagNames.count] }
        contexts = Fixtures.contexts(count: Self.pairCount)
        held = contexts.map(HeldContext.init)
    }
}

/// The flag set of the features file, imported into a scratch board's `production` environment.
final class BoardFlagsFixture {
    let scratch: ScratchBoard
    let environment = "production"

    init() throws {
        scratch = try ScratchBoard("flags")
        let set = try FeatureSet.decode(from: Fixtures.featuresData())
        _ = try scratch.board.importFlags(set, environment: environment, by: Fixtures.admin)
    }
}

/// The per-call context a plug-in passes through the plug-in API (`[String: String]`, merged into the host's).
func pluginContext(_ context: UnleashContext) -> [String: String] {
    var result = context.properties
    result["userId"] = context.userId
    result["sessionId"] = context.sessionId
    result["remoteAddress"] = context.remoteAddress
    result["appName"] = context.appName
    result["environment"] = context.environment
    result["currentTime"] = context.currentTime
    return result
}

/// What a plug-in's `PluginContext.flags` is: `BoardFlagProvider`'s evaluator for a host, on the features file
/// imported into a scratch board.
func pluginFlags() throws -> any FlagEvaluating {
    let board = try BoardFlagsFixture()
    let provider = BoardFlagProvider(board: board.scratch.board, environment: board.environment, hostname: "bench-host")
    return provider.evaluator(
        for: HostIdentity(
            hostID: "bench-host", environment: board.environment, hostVersion: "2.1.0", properties: ["region": "eu-north"]))
}

func flagBenchmarks() {
    // Hot path: one evaluation per scaled iteration, 1000 per sample; `--scale` shows the cost of one.
    let hotPath = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 10, scalingFactor: .kilo,
        maxDuration: .seconds(3), maxIterations: 2000)

    Benchmark("flags.isEnabled", configuration: hotPath) { benchmark, fixture in
        let snapshot = fixture.snapshot
        fixture.forEach(benchmark.scaledIterations.count) { i, context in
            blackHole(snapshot.isEnabled(fixture.names[i], context: context))
        }
    } setup: {
        try EvaluationFixture()
    }

    Benchmark("flags.variant", configuration: hotPath) { benchmark, fixture in
        let snapshot = fixture.snapshot
        fixture.forEach(benchmark.scaledIterations.count) { i, context in
            blackHole(snapshot.variant(fixture.names[i], context: context))
        }
    } setup: {
        try EvaluationFixture()
    }

    Benchmark("flags.provider.bool", configuration: hotPath) { benchmark, fixture in
        let provider = fixture.provider
        fixture.forEach(benchmark.scaledIterations.count) { i, context in
            blackHole(provider.bool(fixture.names[i], default: false, context: context))
        }
    } setup: {
        try EvaluationFixture()
    }

    // One benchmark per family of definitions (the families of Tools/Benchmarks/compare-peer): time and mallocs of each kind.
    // `flags.family.rollout.user` is the plain flexibleRollout by userId alone.
    let userRollout = FlagFamily(name: "rollout.user", flags: ["rollout.user"])
    for family in BenchmarkContexts.families + [userRollout] {
        Benchmark("flags.family.\(family.name)", configuration: hotPath) { benchmark, fixture in
            let snapshot = fixture.snapshot
            let flags = family.flags
            fixture.forEach(benchmark.scaledIterations.count) { i, context in
                let flag = flags[i % flags.count]
                if family.variants {
                    blackHole(snapshot.variant(flag, context: context))
                } else {
                    blackHole(snapshot.isEnabled(flag, context: context))
                }
            }
        } setup: {
            try EvaluationFixture()
        }
    }

    // One benchmark per flag of the features file, to find the expensive definitions. Off by default (33 more
    // benchmarks); PLUGBOARD_BENCH_BY_FLAG=1 turns them on, e.g. with --filter 'flags.isEnabled.by-flag.*'.
    let byFlag = ProcessInfo.processInfo.environment["PLUGBOARD_BENCH_BY_FLAG"] == "1"
    let flagNames = byFlag ? ((try? EvaluationFixture())?.snapshot.flagNames ?? []) : []
    for name in flagNames {
        Benchmark(
            "flags.isEnabled.by-flag.\(name)",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal], warmupIterations: 5, scalingFactor: .kilo,
                maxDuration: .milliseconds(500), maxIterations: 300)
        ) { benchmark, fixture in
            let snapshot = fixture.snapshot
            fixture.forEach(benchmark.scaledIterations.count) { _, context in
                blackHole(snapshot.isEnabled(name, context: context))
            }
        } setup: {
            try EvaluationFixture()
        }
    }

    // What a plug-in calls: PluginContext.flags (BoardFlagProvider's evaluator), a [String: String] context
    // merged into the host's identity on every call.
    Benchmark("flags.plugin-api.bool", configuration: hotPath) { benchmark, state in
        let (fixture, evaluator, contexts) = state
        for _ in benchmark.scaledIterations {
            let i = fixture.cursor.next(mask: EvaluationFixture.mask)
            blackHole(evaluator.bool(fixture.names[i], default: false, context: contexts[i]))
        }
    } setup: { () -> (EvaluationFixture, any FlagEvaluating, [[String: String]]) in
        let fixture = try EvaluationFixture()
        return (fixture, try pluginFlags(), fixture.contexts.map(pluginContext))
    } teardown: {
        ScratchBoard.removeAll()
    }

    // The same with the context bound once (`flags.with(context:)`, what a plug-in keeps per request or user).
    Benchmark("flags.plugin-api.bool.bound", configuration: hotPath) { benchmark, state in
        let (fixture, evaluators) = state
        for _ in benchmark.scaledIterations {
            let i = fixture.cursor.next(mask: EvaluationFixture.mask)
            blackHole(evaluators[i].bool(fixture.names[i], default: false, context: [:]))
        }
    } setup: { () -> (EvaluationFixture, [any FlagEvaluating]) in
        let fixture = try EvaluationFixture()
        let evaluator = try pluginFlags()
        return (fixture, fixture.contexts.map { evaluator.with(context: pluginContext($0)) })
    } teardown: {
        ScratchBoard.removeAll()
    }

    // What the hot path avoids: reading the flag set from the board and compiling it (BoardFlagProvider.refresh).
    let rebuild = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 3, maxDuration: .seconds(3), maxIterations: 300)

    Benchmark("flags.snapshot-from-board", configuration: rebuild) { benchmark, fixture in
        for _ in benchmark.scaledIterations {
            let set = try! fixture.scratch.board.featureSet(environment: fixture.environment)
            blackHole(try! FlagSnapshot(set, mode: .strict, environment: Fixtures.evaluationEnvironment))
        }
    } setup: {
        try BoardFlagsFixture()
    } teardown: {
        ScratchBoard.removeAll()
    }

    Benchmark("flags.featureSet-read", configuration: rebuild) { benchmark, fixture in
        for _ in benchmark.scaledIterations {
            blackHole(try! fixture.scratch.board.featureSet(environment: fixture.environment))
        }
    } setup: {
        try BoardFlagsFixture()
    } teardown: {
        ScratchBoard.removeAll()
    }

    Benchmark("flags.compile", configuration: rebuild) { benchmark, set in
        for _ in benchmark.scaledIterations {
            blackHole(try! FlagSnapshot(set, mode: .strict, environment: Fixtures.evaluationEnvironment))
        }
    } setup: {
        try FeatureSet.decode(from: Fixtures.featuresData())
    }
}
