public import Foundation
public import PlugboardFlags

// The inputs the flag benchmarks and Tools/Benchmarks/compare-peer share: the differential features file and seeded contexts.

/// SplitMix64, so that every run evaluates the same contexts.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The flags and contexts every flag measurement uses.
public enum BenchmarkContexts {
    /// The repository root (this file is Tools/Benchmarks/BenchmarkContexts/BenchmarkContexts.swift).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The features file of the differential tests: 33 flags, 3 segments — flexibleRollout with several
    /// stickiness sources, gradual and random rollouts, user ids, remote addresses, string/list/number/date/semver/
    /// regex/CIDR constraints, segments, flag and strategy variants, dependencies.
    public static let featuresURL = repositoryRoot.appendingPathComponent("Tests/PlugboardFlagsTests/Fixtures/differential/features.json")

    /// `count` realistic contexts: every request has a user id and most of the properties the flags read.
    public static func contexts(count: Int, seed: UInt64 = 0x5EED) -> [UnleashContext] {
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

/// A kind of flag definition, measured on its own.
/// A context as an app holds it while it asks flags: immutable, in one place. Timed loops read contexts through
/// these, so each call borrows the context as an app passes the one it holds; read from an array of structs, each
/// would be copied (its strings and dictionary retained and released) before each call, which an app does not pay.
public final class HeldContext: @unchecked Sendable {
    public let context: UnleashContext
    public init(_ context: UnleashContext) { self.context = context }
}

public struct FlagFamily: Sendable {
    public let name: String
    public let flags: [String]
    /// Variant evaluation (`getVariant`) instead of `isEnabled`.
    public var variants = false

    /// Creates a family.
    public init(name: String, flags: [String], variants: Bool = false) {
        self.name = name
        self.flags = flags
        self.variants = variants
    }
}

extension BenchmarkContexts {
    /// The flags of the features file by kind of definition: each family is measured on its own.
    public static let families: [FlagFamily] = [
        FlagFamily(
            name: "rollout", flags: ["rollout.user", "rollout.session", "rollout.tenant", "rollout.appName", "gradual.user", "users"]),
        FlagFamily(name: "strings", flags: ["strings", "lists"]),
        FlagFamily(name: "numbers", flags: ["numbers"]),
        FlagFamily(name: "dates", flags: ["dates"]),
        FlagFamily(name: "semver", flags: ["versions"]),
        FlagFamily(name: "regex", flags: ["regexes"]),
        FlagFamily(name: "CIDR", flags: ["cidrs", "remote"]),
        FlagFamily(name: "segments", flags: ["segmented"]),
        FlagFamily(
            name: "variants", flags: ["variants.weighted", "variants.tenant", "variants.default.stickiness", "strategy.variants"],
            variants: true),
        FlagFamily(
            name: "dependencies", flags: ["child.of.rollout", "child.expects.parent.off", "child.of.variant", "child.of.parent.variant"]),
    ]
}
