import Benchmark

// Entry point for ordo-one/benchmark; see Tools/Benchmarks/README.md for what each benchmark measures.
let benchmarks: @Sendable () -> Void = {
    flagBenchmarks()
    regexBenchmarks()
    boardBenchmarks()
    hostBenchmarks()
    secureStorageBenchmarks()
    advisoryBenchmarks()
}
