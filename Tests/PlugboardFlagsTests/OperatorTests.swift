import Foundation
import PlugboardFlags
import PlugboardTestSupport
import Testing

/// Builds a one-flag snapshot whose only strategy has the given constraint.
func snapshot(constraint: Constraint, mode: ValidationMode = .strict, now: Date = Date(timeIntervalSince1970: 1_750_000_000)) throws
    -> FlagSnapshot
{
    let flag = FeatureFlag(name: "f", enabled: true, strategies: [Strategy(name: "default", constraints: [constraint])])
    return try FlagSnapshot(FeatureSet(features: [flag]), mode: mode, environment: EvaluationEnvironment(now: { now }))
}

func props(_ properties: [String: String]) -> UnleashContext { UnleashContext(properties: properties) }

@Suite("Constraint operators", .timeLimit(.hangGuard))
struct OperatorTests {
    @Test("IN / NOT_IN with a missing field, inversion, and exact byte comparison")
    func lists() throws {
        let inList = try snapshot(constraint: Constraint(contextName: "country", operator: "IN", values: ["norway", "Ærø"]))
        #expect(inList.isEnabled("f", context: props(["country": "norway"])))
        #expect(!inList.isEnabled("f", context: props(["country": "Norway"])))
        #expect(!inList.isEnabled("f", context: UnleashContext()))
        // Canonically equivalent but different bytes: Unleash compares bytes.
        #expect(!inList.isEnabled("f", context: props(["country": "Ae\u{0301}rø"])))
        #expect(inList.isEnabled("f", context: props(["country": "Ærø"])))

        let notIn = try snapshot(constraint: Constraint(contextName: "country", operator: "NOT_IN", values: ["norway"]))
        #expect(notIn.isEnabled("f", context: UnleashContext()))
        #expect(!notIn.isEnabled("f", context: props(["country": "norway"])))

        let invertedIn = try snapshot(constraint: Constraint(contextName: "country", operator: "IN", values: ["norway"], inverted: true))
        #expect(invertedIn.isEnabled("f", context: UnleashContext()))
        // IN ignores caseInsensitive, as Unleash's engine does.
        let ci = try snapshot(constraint: Constraint(contextName: "country", operator: "IN", values: ["Norway"], caseInsensitive: true))
        #expect(!ci.isEnabled("f", context: props(["country": "norway"])))
    }

    @Test("STR_* operators, caseInsensitive and a missing field")
    func strings() throws {
        let ends = try snapshot(
            constraint: Constraint(contextName: "email", operator: "STR_ENDS_WITH", values: ["@Example.com"], caseInsensitive: true))
        #expect(ends.isEnabled("f", context: props(["email": "a@EXAMPLE.COM"])))
        #expect(!ends.isEnabled("f", context: UnleashContext()))
        let starts = try snapshot(constraint: Constraint(contextName: "email", operator: "STR_STARTS_WITH", values: ["admin"]))
        #expect(starts.isEnabled("f", context: props(["email": "admin@x"])))
        #expect(!starts.isEnabled("f", context: props(["email": "Admin@x"])))
        let contains = try snapshot(constraint: Constraint(contextName: "email", operator: "STR_CONTAINS", values: ["e"], inverted: true))
        #expect(contains.isEnabled("f", context: UnleashContext()), "a missing field is false, inverted true")
        #expect(!contains.isEnabled("f", context: props(["email": "e"])))
        // Byte-wise: a decomposed é contains a plain e.
        let plain = try snapshot(constraint: Constraint(contextName: "word", operator: "STR_CONTAINS", values: ["e"]))
        #expect(plain.isEnabled("f", context: props(["word": "cafe\u{0301}"])))
    }

    @Test("NUM_* operators with invalid context numbers")
    func numbers() throws {
        let gte = try snapshot(constraint: Constraint(contextName: "age", operator: "NUM_GTE", value: "18"))
        #expect(gte.isEnabled("f", context: props(["age": "18"])))
        #expect(gte.isEnabled("f", context: props(["age": "1.8e1"])))
        #expect(gte.isEnabled("f", context: props(["age": "inf"])))
        #expect(!gte.isEnabled("f", context: props(["age": "17.99"])))
        for invalid in ["abc", "", " 18", "0x20", "1_000", "NaN"] {
            #expect(!gte.isEnabled("f", context: props(["age": invalid])), "\(invalid)")
        }
        #expect(!gte.isEnabled("f", context: UnleashContext()))
        let eq = try snapshot(constraint: Constraint(contextName: "n", operator: "NUM_EQ", value: "12.0"))
        #expect(eq.isEnabled("f", context: props(["n": "12"])))
        let invertedLt = try snapshot(constraint: Constraint(contextName: "n", operator: "NUM_LT", value: "5", inverted: true))
        #expect(invertedLt.isEnabled("f", context: props(["n": "junk"])), "invalid is false, inverted true")
    }

    @Test("DATE_* operators: default now, time zones, invalid dates")
    func dates() throws {
        let now = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15T15:06:40Z
        let after = try snapshot(
            constraint: Constraint(contextName: "currentTime", operator: "DATE_AFTER", value: "2025-06-15T15:00:00.000Z"), now: now)
        #expect(after.isEnabled("f", context: UnleashContext()), "no currentTime means now")
        #expect(!after.isEnabled("f", context: UnleashContext(currentTime: "2025-06-15T15:00:00Z")), "exclusive")
        #expect(after.isEnabled("f", context: UnleashContext(currentTime: "2025-06-15T15:00:00.000000001Z")))
        #expect(after.isEnabled("f", context: UnleashContext(currentTime: "2025-06-15T16:30:00+01:00")))
        #expect(!after.isEnabled("f", context: UnleashContext(currentTime: "2025-06-15T15:30:00+01:00")))
        #expect(after.isEnabled("f", context: UnleashContext(currentTime: "2025-06-15 15:00:01 UTC")), "chrono's relaxed form")
        for invalid in ["2025-06-15T15:00:01", "2025-02-30T00:00:00Z", "tomorrow", "2025-06-15T15:00:01+01"] {
            #expect(!after.isEnabled("f", context: UnleashContext(currentTime: invalid)), "\(invalid)")
        }
        let before = try snapshot(constraint: Constraint(contextName: "launch", operator: "DATE_BEFORE", value: "2030-01-01T00:00:00Z"))
        #expect(!before.isEnabled("f", context: UnleashContext()), "only currentTime defaults to now")
        #expect(before.isEnabled("f", context: props(["launch": "2029-12-31T23:59:59Z"])))
    }

    @Test("SEMVER_* operators, pre-releases and invalid versions")
    func versions() throws {
        let gt = try snapshot(constraint: Constraint(contextName: "version", operator: "SEMVER_GT", value: "2.0.0-alpha.1"))
        #expect(gt.isEnabled("f", context: props(["version": "2.0.0-beta.1"])))
        #expect(gt.isEnabled("f", context: props(["version": "2.0.0"])))
        #expect(!gt.isEnabled("f", context: props(["version": "2.0.0-alpha"])))
        for invalid in ["v2.1.0", "2.1", "02.1.0", "2.1.0-01", "", " 2.1.0"] {
            #expect(!gt.isEnabled("f", context: props(["version": invalid])), "\(invalid)")
        }
        let lte = try snapshot(constraint: Constraint(contextName: "version", operator: "SEMVER_LTE", value: "1.2.3"))
        #expect(lte.isEnabled("f", context: props(["version": "1.2.3+build.7"])), "build metadata is ignored")
        // A leading 'v' in the definition is refused strictly and is false leniently, as in Unleash.
        #expect(throws: FlagsError.self) {
            try snapshot(constraint: Constraint(contextName: "version", operator: "SEMVER_EQ", value: "v1.0.0"))
        }
        let lenient = try snapshot(constraint: Constraint(contextName: "version", operator: "SEMVER_EQ", value: "v1.0.0"), mode: .lenient)
        #expect(!lenient.isEnabled("f", context: props(["version": "1.0.0"])))
    }

    @Test("REGEX: RE2 semantics (as Rust's regex)")
    func regexes() throws {
        func regex(_ pattern: String, caseInsensitive: Bool = false) throws -> FlagSnapshot {
            try snapshot(constraint: Constraint(contextName: "s", operator: "REGEX", value: pattern, caseInsensitive: caseInsensitive))
        }
        #expect(try regex("^cat$").isEnabled("f", context: props(["s": "cat"])))
        #expect(!(try regex("^cat$").isEnabled("f", context: props(["s": "cat\n"]))), "RE2's $ does not match before a final newline")
        #expect(try regex("(?m)^cat$").isEnabled("f", context: props(["s": "dog\ncat\n"])))
        #expect(try regex("^[[:alpha:]]+$").isEnabled("f", context: props(["s": "Abc"])))
        #expect(!(try regex("^[[:alpha:]]+$").isEnabled("f", context: props(["s": "Äbc"]))), "POSIX classes are ASCII in RE2")
        #expect(try regex("^(?P<word>\\w+)$").isEnabled("f", context: props(["s": "word"])))
        #expect(try regex("^abc$", caseInsensitive: true).isEnabled("f", context: props(["s": "ABC"])))
        #expect(try regex("\\bcat\\b").isEnabled("f", context: props(["s": "a cat b"])))
        #expect(!(try regex("x").isEnabled("f", context: UnleashContext())))
        #expect(
            !(try regex("straße", caseInsensitive: true).isEnabled("f", context: props(["s": "STRASSE"]))), "simple case folding, as RE2")
        #expect(try regex("straße", caseInsensitive: true).isEnabled("f", context: props(["s": "STRAẞE"])))
        #expect(try regex("[[:foo:]]").isEnabled("f", context: props(["s": "o"])), "an unknown POSIX name is a nested class in RE2")
        for refused in ["[\\d-z]", "(a)\\1", "(?=a)b", "(?<!a)b", "(?>a)", "(regex", "\\Qa\\E", "a\\Z"] {
            #expect(throws: FlagsError.self, "\(refused)") { try regex(refused) }
        }
    }

    @Test("IN_CIDR: IPv4, IPv6, invalid entries and addresses")
    func cidrs() throws {
        let cidr = try snapshot(
            constraint: Constraint(
                contextName: "remoteAddress", operator: "IN_CIDR", values: ["10.0.0.0/8", "2001:db8::/32", "192.168.1.7"]))
        #expect(cidr.isEnabled("f", context: UnleashContext(remoteAddress: "10.200.3.4")))
        #expect(cidr.isEnabled("f", context: UnleashContext(remoteAddress: "2001:db8:ffff::1")))
        #expect(cidr.isEnabled("f", context: UnleashContext(remoteAddress: "192.168.1.7")))
        for outside in ["11.0.0.1", "192.168.1.8", "::ffff:10.0.0.1", "010.0.0.1", "10.0.0", "2001:db9::1", "not an ip", "fe80::1%eth0"] {
            #expect(!cidr.isEnabled("f", context: UnleashContext(remoteAddress: outside)), "\(outside)")
        }
        #expect(!cidr.isEnabled("f", context: UnleashContext()))
        #expect(throws: FlagsError.self) {
            try snapshot(constraint: Constraint(contextName: "remoteAddress", operator: "IN_CIDR", values: ["10.0.0.0/33"]))
        }
    }

    @Test("unknown top-level context keys with string values are properties, as in Unleash's engine")
    func topLevelExtras() throws {
        let context = try JSONDecoder().decode(
            UnleashContext.self, from: Data(#"{"tenant":"acme","properties":{"tenant":"x","n":12,"b":true,"z":null},"flag":true}"#.utf8))
        #expect(context.properties == ["tenant": "acme", "n": "12", "b": "true"])
    }

    @Test("standard fields fall back to properties of the same name")
    func propertyFallback() throws {
        let users = try snapshot(constraint: Constraint(contextName: "userId", operator: "IN", values: ["x"]))
        #expect(users.isEnabled("f", context: props(["userId": "x"])))
        #expect(!users.isEnabled("f", context: UnleashContext(userId: "y", properties: ["userId": "x"])), "the top-level field wins")
    }
}
