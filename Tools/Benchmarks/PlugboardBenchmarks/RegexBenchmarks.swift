import Benchmark
import Foundation
import PlugboardFlags

/// Flags with one REGEX constraint each, and the contexts their benchmarks evaluate, prepared outside the measurement.
final class RegexFixture {
    static let typical = #"^user-[0-9]+@example\.com$"#
    static let redos = "(a+)+$"

    let snapshot: FlagSnapshot
    let matching = UnleashContext(properties: ["email": "user-12345@example.com"])
    let notMatching = UnleashContext(properties: ["email": "user-12345@example.org"])
    /// `(a+)+$` against `a`s and a `!`: exponential for a backtracking engine.
    let redos20 = UnleashContext(properties: ["s": String(repeating: "a", count: 20) + "!"])
    let redos1000 = UnleashContext(properties: ["s": String(repeating: "a", count: 999) + "!"])

    init() throws {
        func flag(_ name: String, _ field: String, _ pattern: String) -> [String: Any] {
            let constraint: [String: Any] = ["contextName": field, "operator": "REGEX", "value": pattern]
            return ["name": name, "enabled": true, "strategies": [["name": "default", "constraints": [constraint]]]]
        }
        let features: [String: Any] = [
            "version": 2, "features": [flag("regex.typical", "email", Self.typical), flag("regex.redos", "s", Self.redos)],
        ]
        snapshot = try FlagSnapshot(json: JSONSerialization.data(withJSONObject: features), mode: .strict)
    }
}

func regexBenchmarks() {
    let hotPath = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 10, scalingFactor: .kilo,
        maxDuration: .seconds(3), maxIterations: 2000)
    let slow = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 2, maxDuration: .seconds(3), maxIterations: 200)

    Benchmark("regex.typical.match", configuration: hotPath) { benchmark, fixture in
        for _ in benchmark.scaledIterations { blackHole(fixture.snapshot.isEnabled("regex.typical", context: fixture.matching)) }
    } setup: {
        try RegexFixture()
    }

    Benchmark("regex.typical.no-match", configuration: hotPath) { benchmark, fixture in
        for _ in benchmark.scaledIterations { blackHole(fixture.snapshot.isEnabled("regex.typical", context: fixture.notMatching)) }
    } setup: {
        try RegexFixture()
    }

    Benchmark("regex.redos.20", configuration: slow) { benchmark, fixture in
        for _ in benchmark.scaledIterations { blackHole(fixture.snapshot.isEnabled("regex.redos", context: fixture.redos20)) }
    } setup: {
        try RegexFixture()
    }

    // Only with a linear-time engine: a backtracking one would not finish (2^1000 paths).
    if ProcessInfo.processInfo.environment["PLUGBOARD_BENCH_OLD_REGEX"] == nil {
        Benchmark("regex.redos.1000", configuration: slow) { benchmark, fixture in
            for _ in benchmark.scaledIterations { blackHole(fixture.snapshot.isEnabled("regex.redos", context: fixture.redos1000)) }
        } setup: {
            try RegexFixture()
        }
    }
}
