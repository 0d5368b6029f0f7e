import Foundation
import PlugboardTestSupport
import Testing

@testable import PlugboardFlags

/// The hot path's own parsers and hashes against the slower, obviously right forms they replace.
@Suite("Hot path", .timeLimit(.hangGuard))
struct HotPathTests {
    @Test("the joined rollout hash equals hashing the joined string, for every length")
    func joinedHash() {
        var text = ""
        for length in 0..<40 {
            for seed: UInt32 in [0, MurmurHash3.variantSeed] {
                #expect(MurmurHash3.joinedHash("group", text, seed: seed) == MurmurHash3.hash("group:" + text, seed: seed))
                #expect(MurmurHash3.joinedHash(text, "", seed: seed) == MurmurHash3.hash(text + ":", seed: seed))
            }
            text.append(length % 3 == 0 ? "é" : "x")
        }
        let long = String(repeating: "ab", count: 700)
        #expect(MurmurHash3.joinedHash(long, long, seed: 0) == MurmurHash3.hash(long + ":" + long))
    }

    @Test(
        "IP addresses: Rust's grammar",
        arguments: [
            ("10.0.0.1", true), ("255.255.255.255", true), ("0.0.0.0", true), ("256.0.0.1", false), ("01.2.3.4", false),
            ("1.2.3", false), ("1.2.3.4.5", false), ("1..2.3", false), ("1.2.3.4 ", false), ("::", true), ("::1", true),
            ("2001:db8::1", true), ("2001:db8:0:0:0:0:0:1", true), ("1:2:3:4:5:6:7:8", true), ("1:2:3:4:5:6:7:8:9", false),
            ("::ffff:10.0.0.1", true), ("1::2::3", false), ("1:2:3:4:5:6:7::", true), ("::1:2:3:4:5:6:7", true),
            ("1.2.3.4::", false), ("12345::", false), ("fe80::1%eth0", false), ("g::1", false), (":1", false), ("1:", false),
            ("1:2:3:4:5:6:1.2.3.4", true), ("1:2:3:4:5:6:7:1.2.3.4", false), ("", false), ("1.2.3.04", false),
        ])
    func addresses(_ text: String, _ valid: Bool) {
        #expect((IPAddress(text) != nil) == valid, "\(text)")
    }

    @Test("IPv6 forms of one address are one address")
    func ipv6Forms() throws {
        let full = try #require(IPAddress("2001:0db8:0000:0000:0000:ff00:0042:8329"))
        #expect(IPAddress("2001:db8::ff00:42:8329") == full)
        #expect(full.high == 0x2001_0db8_0000_0000 && full.low == 0x0000_ff00_0042_8329)
        #expect(IPAddress("::ffff:1.2.3.4")?.low == 0x0000_ffff_0102_0304)
        #expect(IPAddress("10.1.2.3")?.low == 0x0A01_0203)
    }

    @Test("a context date parses as before: chrono's relaxed grammar")
    func dates() {
        #expect(UnleashDate.parseContextValue("2024-05-01T12:00:00Z") == UnleashInstant(seconds: 1_714_564_800, nanoseconds: 0))
        #expect(
            UnleashDate.parseContextValue("2024-05-01 12:00:00.5 utc") == UnleashInstant(seconds: 1_714_564_800, nanoseconds: 500_000_000))
        #expect(UnleashDate.parseContextValue("2024-05-01T12:00:00+01:30") == UnleashInstant(seconds: 1_714_559_400, nanoseconds: 0))
        #expect(UnleashDate.parseContextValue("2024-05-01T12:00:00 UTX") == nil)
        #expect(UnleashDate.parseContextValue("2024-05-01T12:00:00") == nil)
    }

    @Test("a context date's shortcut for the common shape gives what the general parser gives")
    func dateShortcut() {
        var texts = [
            "2024-05-01T12:00:00Z", "2024-05-01t12:00:00z", "2024-05-01 12:00:00Z", "2024-02-29T23:59:60Z", "2023-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z", "2024-00-10T00:00:00Z", "2024-04-31T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T12:60:00Z",
            "2024-05-01T12:00:00.5Z", "2024-05-01T12:00:00.123456789Z", "2024-05-01T12:00:00.1234567891Z", "2024-05-01T12:00:00.Z",
            "2024-05-01T12:00:00+01:30", "2024-05-01T12:00:00-23:59", "2024-05-01T12:00:00+24:00", "2024-05-01T12:00:00+01:60",
            "2024-05-01T12:00:00+0130", "2024-05-01T12:00:00 UTC", "2024-05-01T12:00:00", " 2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z ",
            "2024-5-01T12:00:00Z", "+2024-05-01T12:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2024-05-01T12:00:00ZZ",
            "2024-05-01T12:00:00.5+01:00", "2024-05-01T12:00:00\u{2212}01:00", "２024-05-01T12:00:00Z",
        ]
        var generator = SystemRandomNumberGenerator()
        let pieces = Array("0123456789-:T .Z+z")
        for _ in 0..<2000 {
            var text = Array(texts[Int.random(in: 0..<texts.count, using: &generator)])
            let position = Int.random(in: 0..<text.count, using: &generator)
            text[position] = pieces.randomElement(using: &generator)!
            texts.append(String(text))
        }
        for text in texts {
            #expect(UnleashDate.parseContextValue(text) == UnleashDate.parseAnyContextValue(text), "\(text.debugDescription)")
        }
    }

    @Test("a context number's whole-number shortcut gives what the general conversion gives")
    func wholeNumbers() {
        let texts = [
            "0", "-0", "+0", "7", "007", "-42", "+42", "123456789012345", "1234567890123456", "99999999999999999999", "9007199254740993",
            "18", "65.5", "1e2", "", "+", "-", "1.", ".5", " 1", "1 ",
        ]
        for text in texts {
            let expected: Double? =
                text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E || $0 == 0x65 })
                ? Double(text) : nil
            let parsed = UnleashNumber.parseContextValue(text)
            #expect(parsed == expected && parsed?.sign == expected?.sign, "\(text.debugDescription)")
        }
    }

    @Test("per-call overrides read as if merged into the context")
    func overrides() throws {
        let snapshot = try FlagSnapshot(json: Data(contentsOf: Self.features), environment: EvaluationEnvironment(random: { _ in 0 }))
        let base = UnleashContext(userId: "host-1", environment: "production", properties: ["region": "eu", "tenant": "acme"])
        let calls: [[String: String]] = [
            [:], ["userId": "user-7"], ["tenant": "globex", "version": "2.1.0"], ["currentTime": "2030-01-01T00:00:00Z"],
            ["remoteAddress": "10.1.2.3", "sessionId": "s-9"], ["appName": "ios", "email": "bob@test.com", "age": "40"],
        ]
        for call in calls {
            var merged = base
            for (key, value) in call { merged.set(key, to: value) }
            for flag in snapshot.flagNames {
                let layered = snapshot.evaluate(flag, context: base, overrides: call, wantVariant: true)
                let plain = snapshot.evaluate(flag, context: merged, wantVariant: true)
                #expect(layered.enabled == plain.enabled, "\(flag) \(call)")
                #expect(layered.variant == plain.variant, "\(flag) \(call)")
            }
        }
    }

    @Test("a parent flag's parsed context values do not answer for its child's constraints")
    func parentParsedValues() throws {
        // Both flags' first parsed field lands in the same slot: the child's `age` must not read the parent's `score`.
        let json = """
            {"version": 2, "features": [
              {"name": "parent", "enabled": true, "strategies": [{"name": "default", "constraints": [
                {"contextName": "score", "operator": "NUM_LT", "value": "10"},
                {"contextName": "launchAt", "operator": "DATE_AFTER", "value": "2024-01-01T00:00:00Z"}]}]},
              {"name": "child", "enabled": true, "dependencies": [{"feature": "parent"}], "strategies": [{"name": "default",
                "constraints": [{"contextName": "age", "operator": "NUM_GT", "value": "30"},
                  {"contextName": "score", "operator": "NUM_LT", "value": "10"}]}]}]}
            """
        let snapshot = try FlagSnapshot(json: Data(json.utf8))
        for (age, score, expected) in [("40", "5", true), ("20", "5", false), ("40", "50", false)] {
            let context = UnleashContext(properties: ["age": age, "score": score, "launchAt": "2025-01-01T00:00:00Z"])
            #expect(snapshot.isEnabled("child", context: context) == expected, "age \(age), score \(score)")
        }
    }

    static let features = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/differential/features.json")
}
