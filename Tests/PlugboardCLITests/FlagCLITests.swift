import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Unleash client specification files, read as plain JSON, for driving `plugboard flag …` end to end.
enum FlagSpec {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("PlugboardFlagsTests/Fixtures/unleash-client-specification/specifications")

    /// Flags of the spec files that Unleash evaluates as off but the board refuses (strict validation): an
    /// unknown operator, a version with a leading 'v', a missing segment, a dependency cycle, invalid or
    /// unsupported regular expressions, invalid CIDRs. Round-trips through the board leave them out, with their
    /// test cases; `flag evaluate --features` evaluates them as Unleash does.
    static let refusedByTheBoard: [String: Set<String>] = [
        "13-constraint-operators.json": ["F7.invalid-operator"],
        "14-constraint-semver-operators.json": ["F8.invalidSemverWithLeadingV"],
        "15-global-constraints.json": ["F9.withMissingSegment"],
        "17-dependent-features.json": ["parent.with.cycle", "child.with.cycle"],
        "21-regex-constraint-operators.json": ["invalid-regex-defaults-to-false", "R90.reject_lookahead", "R91.reject_backreference"],
        "22-cidr-constraint-operators.json": ["CIDR.mixed.values", "CIDR.invalid.only", "CIDR.ipv6.mixed.values"],
    ]

    /// The spec file as a JSON object.
    static func load(_ file: String) throws -> [String: Any] {
        let data = try Data(contentsOf: folder.appendingPathComponent(file))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(file) is not a JSON object")
    }

    /// The spec's `state` (a client-API feature set) as JSON text, without the flags named in `dropping`.
    static func stateJSON(_ spec: [String: Any], dropping: Set<String> = []) throws -> String {
        var state = try #require(spec["state"] as? [String: Any])
        if !dropping.isEmpty {
            state["features"] = (state["features"] as? [[String: Any]] ?? []).filter { !dropping.contains($0["name"] as? String ?? "") }
        }
        return String(decoding: try JSONSerialization.data(withJSONObject: state, options: [.sortedKeys]), as: UTF8.self)
    }

    /// One `flag evaluate` request and what the spec expects of its answer.
    struct Case {
        let toggle: String
        let line: String
        /// `expectedResult` of a `tests` case (a Bool) or of a `variantTests` case (a variant object).
        let expected: Any
        let isVariant: Bool
        let description: String
    }

    /// Every `tests` and `variantTests` case of the spec, as JSONL request lines, without toggles in `dropping`.
    static func cases(_ spec: [String: Any], dropping: Set<String> = []) throws -> [Case] {
        var result: [Case] = []
        for (key, isVariant) in [("tests", false), ("variantTests", true)] {
            for test in spec[key] as? [[String: Any]] ?? [] {
                let toggle = try #require(test["toggleName"] as? String)
                if dropping.contains(toggle) { continue }
                let request: [String: Any] = ["toggle": toggle, "context": test["context"] ?? [String: Any]()]
                let line = String(decoding: try JSONSerialization.data(withJSONObject: request, options: [.sortedKeys]), as: UTF8.self)
                result.append(
                    Case(
                        toggle: toggle, line: line, expected: test["expectedResult"] as Any, isVariant: isVariant,
                        description: test["description"] as? String ?? toggle))
            }
        }
        return result
    }

    static func jsonl(_ cases: [Case]) -> String { cases.map(\.line).joined(separator: "\n") + "\n" }

    /// The part of each output line the spec pins down: the whole line for a variant test, the toggle and
    /// `enabled` for the others (their variant may be random: a stickiness field the context lacks).
    static func deterministic(_ output: String, _ cases: [Case]) -> [String] {
        zip(output.split(separator: "\n"), cases).map { line, test in
            if test.isVariant { return String(line) }
            let answer = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            return "\(answer?["toggle"] ?? "?") enabled: \(answer?["enabled"] ?? "?")"
        }
    }

    /// Checks `flag evaluate` output lines against the spec's expectations, one line per case, in order.
    static func expectMatches(_ output: String, _ cases: [Case], file: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()  // the text ends with a newline
        #expect(lines.count == cases.count, "\(file): \(lines.count) output lines for \(cases.count) cases", sourceLocation: sourceLocation)
        for (line, test) in zip(lines, cases) {
            let answer = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], sourceLocation: sourceLocation)
            #expect(answer["toggle"] as? String == test.toggle, sourceLocation: sourceLocation)
            if test.isVariant {
                let variant = answer["variant"] as? NSDictionary
                #expect(
                    variant == (test.expected as? NSDictionary), "\(file): \(test.description): got \(line)", sourceLocation: sourceLocation
                )
            } else {
                #expect(
                    answer["enabled"] as? Bool == test.expected as? Bool, "\(file): \(test.description): got \(line)",
                    sourceLocation: sourceLocation)
            }
        }
    }
}

/// A JSON text as a Foundation object, for comparisons that ignore key order and spacing.
func jsonObject(_ text: String) throws -> NSObject {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSObject)
}

extension Sandbox {
    /// The flag's `show --json` document.
    func flagDetail(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: Any] {
        let shown = try await ok("flag", "show", name, "--json", sourceLocation: sourceLocation)
        return try #require(try shown.json() as? [String: Any], sourceLocation: sourceLocation)
    }

    /// The flag's definition in one environment, from `show --json`.
    func flagEnvironment(_ name: String, _ environment: String = "default", sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> [String: Any]
    {
        let environments = try await flagDetail(name, sourceLocation: sourceLocation)["environments"] as? [[String: Any]] ?? []
        return try #require(
            environments.first { $0["environment"] as? String == environment }, "\(name) has no \(environment)",
            sourceLocation: sourceLocation)
    }

    /// Evaluates one toggle for one context against the board (`flag evaluate`, contexts on stdin).
    func evaluate(
        _ toggle: String, context: String = "{\"userId\":\"42\"}", env: String = "default",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: Any] {
        let result = try await run(
            ["flag", "evaluate", "--contexts", "-", "--env", env], stdin: "{\"toggle\":\"\(toggle)\",\"context\":\(context)}\n")
        #expect(result.status == 0, "\(result)", sourceLocation: sourceLocation)
        return try #require(try result.json() as? [String: Any], sourceLocation: sourceLocation)
    }

    /// The audit rows of one action, oldest first.
    func auditRows(_ action: String) async throws -> [BoardSQL.Row] {
        try await boardFile.rows("SELECT * FROM audit_log WHERE action = ? ORDER BY seq", .text(action))
    }
}

/// End-to-end tests of `plugboard flag …`: each runs the real binary and checks its exit status, stdout,
/// stderr, and the board afterwards.
@Suite("plugboard flag commands", .timeLimit(.hangGuard))
struct FlagCLITests {
    // MARK: create, list, show

    @Test func createListAndShow() async throws {
        let sandbox = try await Sandbox.withBoard()
        let created = try await sandbox.ok("flag", "create", "checkout.new-flow", "--description", "The new checkout")
        #expect(created.stdout.contains("Created the release flag 'checkout.new-flow'"), "\(created)")

        let before = try await sandbox.snapshot()
        let duplicate = try await sandbox.run(["flag", "create", "checkout.new-flow", "--type", "experiment"])
        #expect(duplicate.status == 1, "\(duplicate)")
        #expect(duplicate.stdout.isEmpty)
        #expect(
            duplicate.stderr.hasPrefix("error: ") && duplicate.stderr.contains("flag 'checkout.new-flow' already exists"),
            "\(duplicate.stderr)")
        #expect(duplicate.stderr.split(separator: "\n").count == 1)
        #expect(try await sandbox.snapshot() == before)

        let types = ["experiment", "operational", "kill-switch", "permission"]
        for type in types { try await sandbox.ok("flag", "create", "t.\(type)", "--type", type) }
        for bad in [["--type", "feature"], ["--type", "killswitch"]] {
            let result = try await sandbox.run(["flag", "create", "t.bad"] + bad)
            #expect(result.status == 2, "\(bad): \(result)")
        }
        let badName = try await sandbox.run(["flag", "create", "has space"])
        #expect(
            badName.status == 2 && badName.stderr.hasPrefix("error: ") && badName.stderr.contains("flag name 'has space' is not valid"),
            "\(badName)")
        #expect(try await sandbox.snapshot().dump.contains("t.bad") == false)

        // list: text and JSON.
        let text = try await sandbox.ok("flag", "list").stdout
        let lines = text.split(separator: "\n")
        #expect(lines.first?.hasPrefix("NAME") == true && lines.first?.contains("STALE") == true, "\(text)")
        #expect(lines.count == 6)
        #expect(lines.contains { $0.hasPrefix("t.kill-switch ") && $0.contains("kill-switch") && $0.contains(" no ") })
        let list = try #require(try await sandbox.ok("flag", "list", "--json").json() as? [[String: Any]])
        #expect(
            list.compactMap { $0["name"] as? String } == [
                "checkout.new-flow", "t.experiment", "t.kill-switch", "t.operational", "t.permission",
            ])
        #expect(list.dropFirst().compactMap { $0["type"] as? String } == types.sorted())
        let first = try #require(list.first)
        #expect(first["type"] as? String == "release")
        #expect(first["enabled"] as? Bool == false)
        #expect(first["environment"] as? String == "default")
        #expect(first["description"] as? String == "The new checkout")
        #expect(first["potentially_stale"] as? Bool == false)
        #expect((first["owner"] as? String)?.isEmpty == false)

        // show: text and JSON.
        let shown = try await sandbox.ok("flag", "show", "checkout.new-flow").stdout
        #expect(shown.hasPrefix("checkout.new-flow  (release, owner "), "\(shown)")
        #expect(shown.contains("The new checkout") && shown.contains("ENVIRONMENT") && shown.contains("default"))
        let detail = try await sandbox.flagDetail("checkout.new-flow")
        #expect(detail["name"] as? String == "checkout.new-flow")
        #expect(detail["description"] as? String == "The new checkout")
        #expect(detail["archived_at"] == nil)
        let environments = try #require(detail["environments"] as? [[String: Any]])
        #expect(environments.count == 1 && environments.first?["enabled"] as? Bool == false)
        #expect((environments.first?["strategies"] as? [Any])?.isEmpty == true)

        let missing = try await sandbox.run(["flag", "show", "no.such.flag"])
        #expect(missing.status == 1 && missing.stderr.contains("flag 'no.such.flag' does not exist"), "\(missing)")
        let empty = try await Sandbox.withBoard()
        #expect(try await empty.ok("flag", "list").stdout.contains("No flags yet"))
    }

    // MARK: enable, disable

    @Test func enableAndDisableArePerEnvironment() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "search.v2")
        let enabled = try await sandbox.ok("flag", "enable", "search.v2", "--env", "production")
        #expect(enabled.stdout.contains("Enabled flag 'search.v2' in production"), "\(enabled)")
        func isEnabled(_ env: String) async throws -> Bool? {
            try await (sandbox.ok("flag", "list", "--env", env, "--json").json() as? [[String: Any]])?.first?["enabled"] as? Bool
        }
        await #expect(try isEnabled("production") == true)
        await #expect(try isEnabled("default") == false)
        await #expect(try sandbox.evaluate("search.v2", env: "production")["enabled"] as? Bool == true)
        await #expect(try sandbox.evaluate("search.v2", env: "default")["enabled"] as? Bool == false)
        #expect(try await sandbox.ok("flag", "enable", "search.v2", "--env", "production").stdout.contains("already enabled"))

        // Enabling in another environment leaves production alone, and disabling there leaves it on in production.
        try await sandbox.ok("flag", "enable", "search.v2")
        try await sandbox.ok("flag", "disable", "search.v2")
        await #expect(try isEnabled("production") == true)
        await #expect(try isEnabled("default") == false)
        let disabled = try await sandbox.ok("flag", "disable", "search.v2", "--env", "production")
        #expect(disabled.stdout.contains("Disabled flag 'search.v2' in production"))
        await #expect(try isEnabled("production") == false)
        let missing = try await sandbox.run(["flag", "enable", "no.such.flag"])
        #expect(missing.status == 1 && missing.stderr.contains("flag 'no.such.flag' does not exist"), "\(missing)")
    }

    // MARK: rollout

    @Test func rolloutCreatesThenUpdatesOneFlexibleRollout() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "pricing.v3")
        let first = try await sandbox.ok("flag", "rollout", "pricing.v3", "25")
        #expect(first.stdout.contains("rolls out to 25% of users in default") && first.stdout.contains("it is disabled there"), "\(first)")
        var strategies = try #require(try await sandbox.flagEnvironment("pricing.v3")["strategies"] as? [[String: Any]])
        #expect(strategies.count == 1)
        #expect(strategies.first?["name"] as? String == "flexibleRollout")
        #expect(
            strategies.first?["parameters"] as? [String: String] == ["rollout": "25", "stickiness": "default", "groupId": "pricing.v3"])

        try await sandbox.ok("flag", "rollout", "pricing.v3", "60", "--stickiness", "sessionId")
        strategies = try #require(try await sandbox.flagEnvironment("pricing.v3")["strategies"] as? [[String: Any]])
        #expect(strategies.count == 1)
        #expect(
            strategies.first?["parameters"] as? [String: String] == ["rollout": "60", "stickiness": "sessionId", "groupId": "pricing.v3"])
        #expect(try await sandbox.ok("flag", "rollout", "pricing.v3", "60", "--stickiness", "sessionId").stdout.contains("nothing changed"))

        // 0% and 100% of an enabled flag, evaluated from the board.
        try await sandbox.ok("flag", "enable", "pricing.v3")
        try await sandbox.ok("flag", "rollout", "pricing.v3", "0")
        await #expect(try sandbox.evaluate("pricing.v3", context: "{\"sessionId\":\"s1\"}")["enabled"] as? Bool == false)
        try await sandbox.ok("flag", "rollout", "pricing.v3", "100")
        await #expect(try sandbox.evaluate("pricing.v3", context: "{\"sessionId\":\"s1\"}")["enabled"] as? Bool == true)

        let before = try await sandbox.snapshot()
        let tooMuch = try await sandbox.run(["flag", "rollout", "pricing.v3", "101"])
        #expect(tooMuch.status == 2 && tooMuch.stderr.hasPrefix("error: the rollout percentage 101 is not between 0 and 100"), "\(tooMuch)")
        #expect(tooMuch.stdout.isEmpty)
        #expect(try await sandbox.snapshot() == before)
        let ten = try await sandbox.run(["flag", "rollout", "pricing.v3", "ten"])
        #expect(ten.status == 2 && ten.stderr.hasPrefix("error: "), "one prefix for argument-parser's errors and ours: \(ten)")
        let badStickiness = try await sandbox.run(["flag", "rollout", "pricing.v3", "10", "--stickiness", "user id"])
        #expect(
            badStickiness.status == 2 && badStickiness.stderr.hasPrefix("error: ")
                && badStickiness.stderr.contains("--stickiness 'user id' is not valid"), "\(badStickiness)")
        #expect(try await sandbox.snapshot() == before)

        // A flag with more elaborate strategies is refused: a percentage would change what they mean.
        let complex = try sandbox.write(
            "complex.json",
            """
            {"version":1,"features":[{"name":"beta.users","enabled":true,"strategies":[
              {"name":"userWithId","parameters":{"userIds":"1,2,3"}},
              {"name":"flexibleRollout","parameters":{"rollout":"10","stickiness":"default","groupId":"beta.users"}}]}]}
            """)
        try await sandbox.ok("flag", "import", complex)
        let beforeComplex = try await sandbox.snapshot()
        let refused = try await sandbox.run(["flag", "rollout", "beta.users", "50"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("flag 'beta.users' has 2 strategies in default (userWithId, flexibleRollout)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("plugboard flag import"))
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(try await sandbox.snapshot() == beforeComplex)
        // So is a default strategy with constraints.
        let constrained = try sandbox.write(
            "constrained.json",
            """
            {"version":1,"features":[{"name":"eu.only","enabled":true,"strategies":[
              {"name":"default","constraints":[{"contextName":"region","operator":"IN","values":["eu"]}]}]}]}
            """)
        try await sandbox.ok("flag", "import", constrained)
        #expect(try await sandbox.run(["flag", "rollout", "eu.only", "50"]).status == 1)
    }

    // MARK: archive

}

@Suite("flag store: fail closed", .timeLimit(.hangGuard))
struct FlagFailClosedTests {
    @Test func aHandBrokenDefinitionIsAnIntegrityErrorNotAFlagOnForEveryone() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "guarded")
        try await sandbox.ok("flag", "rollout", "guarded", "5")
        try await sandbox.ok("flag", "enable", "guarded")
        try await sandbox.boardFile.execute("UPDATE flag_environments SET strategies_json = '[{broken' WHERE flag_name = 'guarded'")
        let contexts = try sandbox.write("c.jsonl", "{\"toggle\":\"guarded\",\"context\":{\"userId\":\"1\"}}\n")
        let result = try await sandbox.run(["flag", "evaluate", "--contexts", contexts])
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("flag 'guarded' in default has an unreadable strategies_json"))
    }

    @Test func anUnknownFlagTypeInAnImportIsRefused() async throws {
        let sandbox = try await Sandbox.withBoard()
        let file = try sandbox.write("f.json", "{\"version\":1,\"features\":[{\"name\":\"x\",\"type\":\"banana\",\"enabled\":true}]}")
        let before = try await sandbox.snapshot()
        let result = try await sandbox.run(["flag", "import", file])
        #expect(result.status == 1 && result.stderr.contains("flag 'x' type: 'banana' is not a flag type"), "\(result)")
        #expect(try await sandbox.snapshot() == before)
    }

    @Test func featuresAndContextsCannotBothReadStdin() async throws {
        let sandbox = try await Sandbox.withBoard()
        #expect(try await sandbox.run(["flag", "evaluate", "--features", "-", "--contexts", "-"]).status == 2)
    }
}
