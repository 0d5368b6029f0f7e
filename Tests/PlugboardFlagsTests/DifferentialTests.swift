import Foundation
import PlugboardFlags
import PlugboardTestSupport
import Synchronization
import Testing

/// Random but reproducible Unleash contexts that exercise every field the differential features file reads.
struct ContextGenerator {
    var rng: SplitMix64

    private mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }
    private mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }
    private mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    mutating func userId() -> String {
        if chance(20) { return pick(["u1", "u2", "u3", "alice", "ü-ser", "", "USER-42", "user-123", "User-9999"]) }
        return "user-\(int(0...99_999))"
    }

    mutating func ipv4() -> String {
        switch int(0...5) {
        case 0: return "10.\(int(0...255)).\(int(0...255)).\(int(0...255))"
        case 1: return "172.\(int(14...33)).\(int(0...255)).\(int(0...255))"
        case 2: return "203.0.\(int(112...114)).\(int(0...255))"
        case 3: return pick(["192.168.1.1", "192.168.1.2", "127.0.0.1", "010.1.2.3", "10.0.0", "256.1.1.1", " 10.1.1.1"])
        default: return "\(int(1...223)).\(int(0...255)).\(int(0...255)).\(int(0...255))"
        }
    }

    mutating func ipv6() -> String {
        let hex = { (g: inout ContextGenerator) in String(g.int(0...0xFFFF), radix: 16) }
        switch int(0...4) {
        case 0: return "2001:db8:\(hex(&self))::\(hex(&self))"
        case 1: return "2001:db8:1:\(hex(&self))::1"
        case 2: return "fd\(String(int(0...255), radix: 16)):\(hex(&self))::\(hex(&self))"
        case 3:
            return pick(["::1", "::", "::ffff:10.1.2.3", "2001:db8::1%eth0", "[::1]", "1:2:3:4:5:6:7:8", "1::2::3", "fe80::1:2:3:4:5:6:7"])
        default: return (0..<8).map { _ in hex(&self) }.joined(separator: ":")
        }
    }

    mutating func date() -> String {
        let year = int(2019...2029)
        let month = int(1...12)
        let day = int(1...28)
        let (h, m, s) = (int(0...23), int(0...59), int(0...59))
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let base = "\(year)-\(two(month))-\(two(day))"
        let time = "\(two(h)):\(two(m)):\(two(s))"
        switch int(0...9) {
        case 0: return "\(base)T\(time)Z"
        case 1: return "\(base)T\(time).\(int(0...999))Z"
        case 2: return "\(base)T\(time)+0\(int(0...9)):\(pick(["00", "30", "45"]))"
        case 3: return "\(base)T\(time)-\(two(int(0...12))):00"
        case 4: return "\(base) \(time)Z"
        case 5: return "\(base)t\(time)z"
        case 6: return "\(base)T\(time)"
        case 7:
            return pick([
                "2024-06-01T12:00:00Z", "2024-06-01T12:00:00.000000001Z", "2026-12-31T22:00:00Z", "2026-12-31T22:00:00.000Z",
                "2024-02-30T00:00:00Z", "not a date", "2025-1-2T3:4:5Z", "2025-01-01T00:00:00 UTC", "2025-01-01T23:59:60Z",
                "2025-01-01T00:00:00+0130", "2025-01-01T00:00:00+01", "+2025-01-01T00:00:00Z", "2025-01-01T00:00:00.Z",
            ])
        default: return "\(base)T\(time).\(int(0...999_999))+\(two(int(0...14))):00"
        }
    }

    mutating func version() -> String {
        let core = "\(int(0...3)).\(int(0...5)).\(int(0...3))"
        switch int(0...6) {
        case 0: return core
        case 1: return "\(core)-\(pick(["alpha", "beta", "rc"])).\(int(0...4))"
        case 2: return "\(core)-\(pick(["alpha", "beta.2", "rc.1", "0", "x-y"]))"
        case 3: return "\(core)+build.\(int(0...9))"
        case 4:
            return pick([
                "v1.4.2", "1.4", "01.4.2", "1.4.2-01", "not", "", "2.0.0-beta.2", "1.4.2", "0.9.0", "3.0.0-alpha", "0.1.0-rc.1",
                "0.1.0-rc.2",
            ])
        default: return core
        }
    }

    mutating func number() -> String {
        switch int(0...6) {
        case 0, 1: return String(int(-10...120))
        case 2: return String(Double(int(-1000...12_000)) / 100)
        case 3:
            return pick([
                "1e2", "100", "100.0", "1E2", "-3", "-3.0", "inf", "-inf", "NaN", "abc", "", " 20", "18", "65.5", "65.49", "1.", ".5e2",
                "0x10", "+40",
            ])
        default: return String(int(0...100))
        }
    }

    mutating func regexSubject() -> String {
        if chance(20) {
            let letters = Array("abcxyzABC019 \n.@é")
            return String((0..<int(0...6)).map { _ in letters[int(0...(letters.count - 1))] })
        }
        return pick([
            "abc", "ABC", "a cat b", "concatenate", "foo", "fo", "f", "AbCdef", "a___b___b", "a___b___c", "a\nb", "x\nfoo\ny",
            "x", "x\n", "", "12", "1234", "12345", "user@example.com", "A1", "Ab", "αβγ", "éa", "e\u{301}a", "straße", "STRASSE",
            "hello world", "hello  world", ".", "aa", "aaa", "abc\n", "ab", "c", "ababc", "b", "٣٤", "Σίσυφος", "cat", "CAT", "\u{E9}",
        ])
    }

    mutating func context() -> [String: Any] {
        var context: [String: Any] = [:]
        var properties: [String: Any] = [:]
        if chance(75) { context["userId"] = userId() }
        if chance(60) { context["sessionId"] = "s-\(int(0...9999))" }
        if chance(60) { context["remoteAddress"] = chance(60) ? ipv4() : ipv6() }
        if chance(40) { context["environment"] = pick(["production", "staging", "test", "dev"]) }
        if chance(30) { context["appName"] = pick(["web", "ios", "android", "cli"]) }
        if chance(70) { context["currentTime"] = date() }
        if chance(60) {
            properties["tenant"] = pick([
                "acme", "globex", "initech", "beta", "x\nbeta", "ÜBER", "über-corp", "Beta-Labs", "t-\(int(0...99))",
            ])
        }
        if chance(60) {
            properties["country"] = pick([
                "norway", "sweden", "denmark", "Norway", "Ærø", "Ae\u{0301}rø", "finland", "germany", "galway", "norway1", "",
            ])
        }
        if chance(60) { properties["age"] = number() }
        if chance(40) { properties["score"] = number() }
        if chance(60) { properties["version"] = version() }
        if chance(50) {
            properties["email"] = pick([
                "admin@example.com", "Root@EXAMPLE.COM", "bob@test.com", "eve@example.org", "x@Example.org",
                "a.b-c@example.com", "ADMIN@corp.net", "admin", "mallory@example.com\n", "user\(int(0...99))@test.com",
            ])
        }
        if chance(40) { properties["clientIp"] = chance(50) ? ipv4() : ipv6() }
        if chance(30) { properties["launchAt"] = date() }
        if chance(70) { properties["s"] = regexSubject() }
        if chance(5) { properties["userId"] = userId() }
        if chance(5) { properties["environment"] = "production" }
        if chance(3) { properties["tenant"] = NSNull() }
        if chance(5) { context["tenant"] = pick(["acme", "beta", "globex"]) }  // top-level extras are properties
        if chance(3) { context["country"] = pick(["norway", "spain"]) }
        if !properties.isEmpty { context["properties"] = properties }
        return context
    }
}

/// Whether Unleash's engine is importable by `python3` on PATH.
enum Yggdrasil {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tools/Scripts/Conformance/yggdrasil_eval.py").standardizedFileURL

    static let isAvailable: Bool = (try? run(["python3", "-c", "import yggdrasil_engine"]).status == 0) ?? false

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty && $0 != "false" } ?? false }

    @discardableResult
    static func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let result = try Spawned.runBlocking("/usr/bin/env", arguments).text
        return (result.status, result.stderr)
    }
}

/// Records whether an evaluation drew a random number (its answer is then not comparable across engines).
final class RandomnessProbe: Sendable {
    let used = Mutex(false)
}

@Suite("Differential test against Unleash's engine (yggdrasil)", .timeLimit(.hangGuard))
struct DifferentialTests {
    static let featuresURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/differential/features.json")

    @Test("the differential features file passes strict validation")
    func featuresAreValid() throws {
        let data = try Data(contentsOf: Self.featuresURL)
        let set = try FeatureSet.decode(from: data)
        let report = set.validate()
        #expect(report.errors.isEmpty, "\(report.errors)")
        // Two deliberate warnings: a missing parent and a transitive dependency.
        #expect(report.warnings.count == 2, "\(report.warnings)")
    }

    struct Outcome {
        var lines = 0
        var agree = 0
        var random = 0
        var disagreements: [String] = []
    }

    /// Evaluates `contextCount` seeded random contexts against every flag of `featuresURL` (plus an unknown
    /// one) here and in yggdrasil, and compares the answers that did not depend on randomness.
    static func compare(featuresURL: URL, mode: ValidationMode, contextCount: Int, seed: UInt64) throws -> Outcome {
        let featuresData = try Data(contentsOf: featuresURL)
        let toggles = try FeatureSet.decode(from: featuresData).features.map(\.name) + ["no.such.flag"]

        // Each line is {"context":…,"toggle":…}, the keys in sorted order. A context and a toggle name are encoded once
        // and joined per line: encoding every line whole spent most of the suite's time in Foundation's key sort.
        func json(_ value: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
        }
        let encodedToggles = try toggles.map(json)
        var generator = ContextGenerator(rng: SplitMix64(seed: seed))
        var inputLines: [String] = []
        inputLines.reserveCapacity(contextCount * toggles.count)
        for _ in 0..<contextCount {
            let context = try json(generator.context())
            for toggle in encodedToggles {
                inputLines.append(#"{"context":"# + context + #","toggle":"# + toggle + "}")
            }
        }

        // Ours, noting which answers drew a random number.
        let probe = RandomnessProbe()
        let environment = EvaluationEnvironment(random: { bound in
            probe.used.withLock { $0 = true }
            return UInt32.random(in: 0..<max(1, bound))
        })
        let evaluator = try BatchEvaluator(features: featuresData, mode: mode, environment: environment)
        var ours: [String] = []
        var randomLines = Set<Int>()
        for (index, line) in inputLines.enumerated() {
            probe.used.withLock { $0 = false }
            ours.append(try evaluator.evaluate(line: line, lineNumber: index + 1))
            if probe.used.withLock({ $0 }) { randomLines.insert(index) }
        }

        // Theirs.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-diff-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputURL = directory.appendingPathComponent("contexts.jsonl")
        let outputURL = directory.appendingPathComponent("yggdrasil.jsonl")
        try (inputLines.joined(separator: "\n") + "\n").write(to: inputURL, atomically: true, encoding: .utf8)
        let result = try Yggdrasil.run([
            "python3", Yggdrasil.script.path, "--features", featuresURL.path, "--contexts", inputURL.path, "--output", outputURL.path,
        ])
        try #require(result.status == 0, "yggdrasil_eval.py failed: \(result.stderr)")
        let theirs = try String(contentsOf: outputURL, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init).filter { !$0.isEmpty }
        try #require(theirs.count == ours.count, "yggdrasil produced \(theirs.count) lines for \(ours.count) inputs")

        var outcome = Outcome(lines: ours.count, random: randomLines.count)
        for index in ours.indices where !randomLines.contains(index) {
            if ours[index] == theirs[index] {
                outcome.agree += 1
            } else {
                outcome.disagreements.append(
                    "line \(index + 1) input \(inputLines[index])\n  ours:      \(ours[index])\n  yggdrasil: \(theirs[index])")
            }
        }
        if let report = ProcessInfo.processInfo.environment["PLUGBOARD_DIFF_REPORT"] {
            try outcome.disagreements.joined(separator: "\n").write(toFile: report, atomically: true, encoding: .utf8)
        }
        return outcome
    }

    static let availability = Testing.ConditionTrait.enabled(
        if: Yggdrasil.isAvailable || Yggdrasil.isCI,
        "skipped: `python3 -c 'import yggdrasil_engine'` fails here — run `pip install yggdrasil-engine` to compare against Unleash's engine"
    )

    @Test("random contexts give the same answers as yggdrasil", availability)
    func agreesWithYggdrasil() throws {
        guard Yggdrasil.isAvailable else {
            Issue.record("yggdrasil-engine is not installed for python3 (pip install yggdrasil-engine); the differential test cannot run")
            return
        }
        let seed: UInt64 = 0x5EED_F1A6
        let contexts = 3000
        let outcome = try Self.compare(featuresURL: Self.featuresURL, mode: .strict, contextCount: contexts, seed: seed)
        for disagreement in outcome.disagreements.prefix(15) { Issue.record(Comment(rawValue: disagreement)) }
        #expect(
            outcome.disagreements.count == 0,
            "\(outcome.disagreements.count) of \(outcome.lines - outcome.random) deterministic answers differ")
        #expect(outcome.agree > outcome.lines / 2)
        print(
            "Differential vs yggdrasil (seed \(String(seed, radix: 16))): \(contexts) contexts, \(outcome.lines) lines; "
                + "\(outcome.agree) deterministic lines identical, \(outcome.disagreements.count) differ, \(outcome.random) random-dependent lines not compared"
        )
    }

    @Test("odd definitions (lenient mode) agree with yggdrasil", availability)
    func lenientAgreesWithYggdrasil() throws {
        guard Yggdrasil.isAvailable else {
            Issue.record("yggdrasil-engine is not installed for python3 (pip install yggdrasil-engine); the differential test cannot run")
            return
        }
        let seed: UInt64 = 0x1E_17E7
        let contexts = 600
        // PLUGBOARD_DIFF_FEATURES=/path/to/features.json compares another file (lenient) for ad-hoc investigations.
        let url =
            ProcessInfo.processInfo.environment["PLUGBOARD_DIFF_FEATURES"].map { URL(fileURLWithPath: $0) }
            ?? Self.featuresURL.deletingLastPathComponent().appendingPathComponent("features-lenient.json")
        let outcome = try Self.compare(featuresURL: url, mode: .lenient, contextCount: contexts, seed: seed)
        for disagreement in outcome.disagreements.prefix(15) { Issue.record(Comment(rawValue: disagreement)) }
        #expect(
            outcome.disagreements.count == 0,
            "\(outcome.disagreements.count) of \(outcome.lines - outcome.random) deterministic answers differ")
        print(
            "Differential vs yggdrasil, lenient definitions (seed \(String(seed, radix: 16))): \(contexts) contexts, \(outcome.lines) lines; "
                + "\(outcome.agree) deterministic lines identical, \(outcome.disagreements.count) differ, \(outcome.random) random-dependent lines not compared"
        )
    }

    @Test("regular expressions (RE2 syntax and semantics) agree with yggdrasil", availability)
    func regexesAgreeWithYggdrasil() throws {
        guard Yggdrasil.isAvailable else {
            Issue.record("yggdrasil-engine is not installed for python3 (pip install yggdrasil-engine); the differential test cannot run")
            return
        }
        let seed: UInt64 = 0x2E6E_7E57
        let contexts = 150
        let url = Self.featuresURL.deletingLastPathComponent().appendingPathComponent("features-regex.json")
        let outcome = try Self.compare(featuresURL: url, mode: .lenient, contextCount: contexts, seed: seed)
        for disagreement in outcome.disagreements.prefix(15) { Issue.record(Comment(rawValue: disagreement)) }
        #expect(outcome.disagreements.count == 0, "\(outcome.disagreements.count) of \(outcome.lines - outcome.random) answers differ")
        print(
            "Differential vs yggdrasil, regular expressions (seed \(String(seed, radix: 16))): \(contexts) contexts, \(outcome.lines) lines; "
                + "\(outcome.agree) identical, \(outcome.disagreements.count) differ")
    }
}
