// compare-peer: Plugboard's flag evaluator against Unleash's own engine (yggdrasil), both called from native code in
// one process, on the same flags and contexts, alternating, per flag family. Run it with Tools/Benchmarks/compare-peer, which
// installs the engine's library and builds this program; see Tools/Benchmarks/README.md.

import BenchmarkContexts
import Foundation
import PlugboardFlags

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: Options

struct Options {
    var library = ""
    var features = BenchmarkContexts.featuresURL.path
    var contexts = 2048
    var rounds = 5
    /// Only evaluate this family with Plugboard, for a few seconds (to run under `perf record`).
    var profile: String?

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--library": library = rest.popFirst() ?? ""
            case "--features": features = rest.popFirst() ?? features
            case "--contexts": contexts = rest.popFirst().flatMap { Int($0) } ?? contexts
            case "--rounds": rounds = rest.popFirst().flatMap { Int($0) } ?? rounds
            case "--profile": profile = rest.popFirst()
            case "--short":
                contexts = 512
                rounds = 3
            default: fail("unknown argument \(argument); use --library PATH [--features FILE] [--contexts N] [--rounds N] [--short]")
            }
        }
        if library.isEmpty { fail("--library PATH (libyggdrasilffi.so) is required; Tools/Benchmarks/compare-peer passes it") }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("compare-peer: \(message)\n".utf8))
    exit(2)
}

// MARK: Unleash's engine through its C interface

/// yggdrasil's FFI (`yggdrasilffi`): an engine handle, JSON in as C strings, JSON out that the caller frees.
struct Yggdrasil {
    typealias NewEngine = @convention(c) () -> UnsafeMutableRawPointer?
    typealias TakeState = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>?
    typealias Check =
        @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafePointer<CChar>) ->
        UnsafeMutablePointer<CChar>?
    typealias FreeResponse = @convention(c) (UnsafeMutablePointer<CChar>?) -> Void

    let engine: UnsafeMutableRawPointer?
    let checkEnabled: Check
    let checkVariant: Check
    let freeResponse: FreeResponse

    init(library: String, state: String) {
        guard let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL) else { fail("cannot load \(library): \(String(cString: dlerror()))") }
        func symbol<T>(_ name: String, as type: T.Type) -> T {
            guard let pointer = dlsym(handle, name) else { fail("\(library) has no \(name)") }
            return unsafeBitCast(pointer, to: type)
        }
        let newEngine = symbol("new_engine", as: NewEngine.self)
        let takeState = symbol("take_state", as: TakeState.self)
        checkEnabled = symbol("check_enabled", as: Check.self)
        checkVariant = symbol("check_variant", as: Check.self)
        freeResponse = symbol("free_response", as: FreeResponse.self)
        engine = newEngine()
        let response = takeState(engine, state)
        let text = response.map { String(cString: $0) } ?? "null"
        freeResponse(response)
        guard text.contains("\"Ok\"") else { fail("the engine refused the features: \(text)") }
    }

    /// The `value` of a response, parsed (outside the timed loops).
    func answer(_ check: Check, _ toggle: UnsafePointer<CChar>, _ context: UnsafePointer<CChar>) -> Any? {
        let response = check(engine, toggle, context, Self.noCustomStrategies)
        defer { freeResponse(response) }
        guard let response, let object = try? JSONSerialization.jsonObject(with: Data(String(cString: response).utf8)) as? [String: Any]
        else { return nil }
        return object["value"]
    }

    /// What SDKs pass when no custom strategy is registered.
    nonisolated(unsafe) static let noCustomStrategies: UnsafePointer<CChar> = UnsafePointer(strdup("{}")!)
}

// MARK: The run

let families = BenchmarkContexts.families

let options = Options(Array(CommandLine.arguments.dropFirst()))
let featuresData: Data
do { featuresData = try Data(contentsOf: URL(fileURLWithPath: options.features)) } catch {
    fail("cannot read \(options.features): \(error)")
}
let snapshot: FlagSnapshot
do { snapshot = try FlagSnapshot(json: featuresData, mode: .strict) } catch { fail("cannot compile \(options.features): \(error)") }
// Two snapshots whose randomness is pinned to its two ends: an answer that differs between them is random.
let lowRandom = try! FlagSnapshot(json: featuresData, environment: EvaluationEnvironment(random: { _ in 0 }))
let highRandom = try! FlagSnapshot(json: featuresData, environment: EvaluationEnvironment(random: { max(1, $0) - 1 }))
let peer = Yggdrasil(library: options.library, state: String(decoding: featuresData, as: UTF8.self))

let contexts = BenchmarkContexts.contexts(count: options.contexts)
let heldContexts = contexts.map(HeldContext.init)
let encoder = JSONEncoder()
encoder.outputFormatting = .sortedKeys
let contextJSON: [UnsafePointer<CChar>] = contexts.map { UnsafePointer(strdup(String(decoding: try! encoder.encode($0), as: UTF8.self))!) }
func cString(_ text: String) -> UnsafePointer<CChar> { UnsafePointer(strdup(text)!) }

for family in families {
    for flag in family.flags where !snapshot.contains(flag) { fail("the features file has no flag \(flag) (family \(family.name))") }
}

/// Nanoseconds of a monotonic clock.
func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Keeps answers alive so that the optimizer cannot drop the calls.
var sink = 0

/// Times `body` over `count` evaluations; nanoseconds per evaluation.
func time(_ count: Int, _ body: () -> Void) -> Double {
    let start = now()
    body()
    return Double(now() - start) / Double(count)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

struct Pair {
    let flag: String
    let cFlag: UnsafePointer<CChar>
    let context: Int
}

struct Result {
    let family: String
    let pairs: Int
    /// Each side's warm passes: after its cold pass and two untimed passes of its own over the same pairs.
    let ours: Double
    let peer: Double
    /// Each side's first pass of a round, right after the other side's passes (its data pushed out of the caches).
    let oursCold: Double
    let peerCold: Double
    /// The engine's own evaluation, estimated without its FFI and JSON: the median, over every pair of every round,
    /// of a call on the pair's flag minus a call on an unknown flag beside it (same context).
    let peerEvaluation: Double
    let agree: Int
    let random: Int
    var ratio: Double { peer / ours }
    var coldRatio: Double { peerCold / oursCold }
}

/// Plugboard's timed loop (a function of its own, so that `valgrind --toggle-collect` can count it alone), over the
/// same pairs as the engine's (context after context, the family's flags for each). The contexts are `HeldContext`s, so each call borrows one as an app passes the context it holds (copying each
/// out of an array of structs would add about 60 ns per call here).
@inline(never)
func evaluateAll(_ snapshot: FlagSnapshot, _ contexts: [HeldContext], _ flags: [String], variants: Bool) -> Int {
    var enabled = 0
    for held in contexts {
        for flag in flags {
            if variants {
                enabled &+= snapshot.variant(flag, context: held.context).enabled ? 1 : 0
            } else {
                enabled &+= snapshot.isEnabled(flag, context: held.context) ? 1 : 0
            }
        }
    }
    return enabled
}

@MainActor
func ours(_ snapshot: FlagSnapshot, _ pair: Pair, variants: Bool) -> String {
    let context = contexts[pair.context]
    guard variants else { return String(snapshot.isEnabled(pair.flag, context: context)) }
    let variant = snapshot.variant(pair.flag, context: context)
    return "\(variant.name)|\(variant.enabled)|\(variant.featureEnabled)|\(variant.payload?.type ?? "-")|\(variant.payload?.value ?? "-")"
}

@MainActor
func theirs(_ pair: Pair, variants: Bool) -> String {
    guard variants else {
        return (peer.answer(peer.checkEnabled, pair.cFlag, contextJSON[pair.context]) as? Bool).map { String($0) } ?? "unknown"
    }
    guard let value = peer.answer(peer.checkVariant, pair.cFlag, contextJSON[pair.context]) as? [String: Any] else { return "unknown" }
    let payload = value["payload"] as? [String: Any]
    return "\(value["name"] as? String ?? "?")|\(value["enabled"] as? Bool ?? false)|\(value["featureEnabled"] as? Bool ?? false)|"
        + "\(payload?["type"] as? String ?? "-")|\(payload?["value"] as? String ?? "-")"
}

var disagreements: [String] = []

@MainActor
func measure(_ family: FlagFamily) -> Result {
    let cFlags = Dictionary(uniqueKeysWithValues: family.flags.map { ($0, cString($0)) })
    let pairs = contexts.indices.flatMap { context in family.flags.map { Pair(flag: $0, cFlag: cFlags[$0]!, context: context) } }
    let unknown = cString("compare-peer.no-such-flag")

    // Agreement, outside the timing.
    var agree = 0
    var random = 0
    for pair in pairs {
        let low = ours(lowRandom, pair, variants: family.variants)
        guard low == ours(highRandom, pair, variants: family.variants) else {
            random += 1
            continue
        }
        let answer = theirs(pair, variants: family.variants)
        if answer == low {
            agree += 1
        } else if disagreements.count < 20 {
            disagreements.append(
                "\(family.name): \(pair.flag) \(String(cString: contextJSON[pair.context])): plugboard \(low), yggdrasil \(answer)")
        }
    }

    // Timing: the two engines alternate, round after round. In a round each side passes over the pairs several times
    // in a row: its first pass follows the other side's passes (cold: its data out of the caches), the next two warm up
    // untimed, as a harness's warm-up does, and the median of the last five counts (warm). Then the engine's own
    // evaluation is estimated call by call: each pair's call on its flag against a call on an unknown flag beside it,
    // which parses the same context and stops at the lookup; the two go in either order, by turns. Medians throughout.
    var oursTimes: [Double] = []
    var peerTimes: [Double] = []
    var oursColdTimes: [Double] = []
    var peerColdTimes: [Double] = []
    var evaluationTimes: [Double] = []
    let check = family.variants ? peer.checkVariant : peer.checkEnabled
    func oursPass() -> Double {
        time(pairs.count) { sink &+= evaluateAll(snapshot, heldContexts, family.flags, variants: family.variants) }
    }
    func call(_ flag: UnsafePointer<CChar>, _ pair: Pair) {
        let response = check(peer.engine, flag, contextJSON[pair.context], Yggdrasil.noCustomStrategies)
        sink &+= Int(response?.pointee ?? 0)
        peer.freeResponse(response)
    }
    func peerPass() -> Double { time(pairs.count) { for pair in pairs { call(pair.cFlag, pair) } } }
    /// One side's passes of a round, the same for both: the cold one, two untimed, the median of five warm ones.
    func passes(_ pass: () -> Double, cold: inout [Double], warm: inout [Double]) {
        cold.append(pass())
        _ = (pass(), pass())
        warm.append(median((0..<5).map { _ in pass() }))
    }
    for round in 0..<options.rounds {
        passes(oursPass, cold: &oursColdTimes, warm: &oursTimes)
        passes(peerPass, cold: &peerColdTimes, warm: &peerTimes)
        for (index, pair) in pairs.enumerated() {
            let knownFirst = (index + round) % 2 == 0
            let start = now()
            call(knownFirst ? pair.cFlag : unknown, pair)
            let middle = now()
            call(knownFirst ? unknown : pair.cFlag, pair)
            let first = Double(middle - start)
            let second = Double(now() - middle)
            evaluationTimes.append(knownFirst ? first - second : second - first)
        }
    }
    return Result(
        family: family.name, pairs: pairs.count, ours: median(oursTimes), peer: median(peerTimes), oursCold: median(oursColdTimes),
        peerCold: median(peerColdTimes), peerEvaluation: max(0, median(evaluationTimes)), agree: agree, random: random)
}

func format(_ value: Double) -> String { value >= 100 ? String(Int(value.rounded())) : String(format: "%.1f", value) }
func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
    let padding = String(repeating: " ", count: max(0, width - text.count))
    return left ? text + padding : padding + text
}

if let name = options.profile {
    let extra = [FlagFamily(name: "all", flags: snapshot.flagNames), FlagFamily(name: "rollout.user", flags: ["rollout.user"])]
    guard let family = (families + extra).first(where: { $0.name == name }) else {
        fail("no family \(name)")
    }
    // One pass first, so that what an evaluation does once per process (tables built on first use) is not counted:
    // written out rather than through `evaluateAll`, which `--toggle-collect` counts.
    for held in heldContexts {
        for flag in family.flags {
            sink &+=
                family.variants
                ? snapshot.variant(flag, context: held.context).name.utf8.count : snapshot.isEnabled(flag, context: held.context) ? 1 : 0
        }
    }
    let start = now()
    var count = 0
    while now() - start < 3_000_000_000 {
        sink &+= evaluateAll(snapshot, heldContexts, family.flags, variants: family.variants)
        count += contexts.count * family.flags.count
    }
    print("\(name): \(format(Double(now() - start) / Double(count))) ns per evaluation (plugboard only)")
    exit(0)
}

print(
    "compare-peer: \(contexts.count) contexts, \(options.rounds) rounds, alternating; ns per evaluation (median round); "
        + "warm: each side's passes after its first three in a row, cold: its first, after the other side's")
print(
    pad("family", 13, left: true) + pad("pairs", 8) + pad("plugboard", 11) + pad("yggdrasil", 11) + pad("ratio", 8)
        + pad("cold pb", 9) + pad("cold ygg", 10) + pad("cold", 7) + pad("ygg eval*", 11) + pad("ratio*", 8) + pad("agree", 8)
        + pad("random", 8))
func row(_ name: String, _ result: Result) {
    func times(_ value: Double) -> String { String(format: "%.1fx", value) }
    print(
        pad(name, 13, left: true) + pad(String(result.pairs), 8) + pad(format(result.ours), 11) + pad(format(result.peer), 11)
            + pad(times(result.ratio), 8) + pad(format(result.oursCold), 9) + pad(format(result.peerCold), 10)
            + pad(times(result.coldRatio), 7) + pad(format(result.peerEvaluation), 11) + pad(times(result.peerEvaluation / result.ours), 8)
            + pad(String(result.agree), 8) + pad(String(result.random), 8))
}
var results: [Result] = []
for family in families {
    let result = measure(family)
    results.append(result)
    row(result.family, result)
}
let overall = measure(FlagFamily(name: "all flags", flags: snapshot.flagNames))
row("all \(snapshot.flagNames.count) flags", overall)
print(
    "* yggdrasil's own evaluation, estimated without its FFI and JSON: the median, over every pair of every round, of a call "
        + "on the pair's flag minus a call on an unknown flag beside it, same context (\(format(overall.peerEvaluation)) ns over "
        + "all flags); ratio to plugboard's " + format(overall.ours) + " ns: "
        + String(format: "%.1fx", overall.peerEvaluation / overall.ours))
if !disagreements.isEmpty {
    print("DISAGREEMENTS (first \(disagreements.count)):")
    for line in disagreements { print("  " + line) }
}
let agreeing = results.reduce(0) { $0 + $1.agree } + overall.agree
let lowest = results.min { $0.ratio < $1.ratio }!
let lowestCold = results.min { $0.coldRatio < $1.coldRatio }!
print(
    "speedup over yggdrasil: " + String(format: "%.1fx", lowest.ratio)
        + " (plugboard \(format(lowest.ours)) ns/eval, yggdrasil \(format(lowest.peer)) ns/eval, \(agreeing) evaluations agree; "
        + "cold passes: " + String(format: "%.1fx", lowestCold.coldRatio) + ", \(lowestCold.family))")
if sink == Int.min { print(sink) }
exit(disagreements.isEmpty ? 0 : 1)
