import Foundation
import GRDB
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
private func jsonObject(_ text: String) throws -> NSObject {
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
    func auditRows(_ action: String) throws -> [Row] {
        try database().read { db in try Row.fetchAll(db, sql: "SELECT * FROM audit_log WHERE action = ? ORDER BY seq", arguments: [action])
        }
    }
}

/// End-to-end tests of `plugboard flag …`: each runs the real binary and checks its exit status, stdout,
/// stderr, and the board afterwards.
@Suite("plugboard flag commands")
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
        #expect(badName.status == 2 && badName.stderr.hasPrefix("error: flag name 'has space' is not valid"), "\(badName)")
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
        #expect(badStickiness.status == 2 && badStickiness.stderr.hasPrefix("error: --stickiness"), "\(badStickiness)")
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

    @Test func archivedFlagsAreNotExportedAndEvaluateOff() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "old.banner")
        try await sandbox.ok("flag", "create", "kept")
        try await sandbox.ok("flag", "enable", "old.banner")
        await #expect(try sandbox.evaluate("old.banner")["enabled"] as? Bool == true)

        let archived = try await sandbox.ok("flag", "archive", "old.banner")
        #expect(archived.stdout.contains("Archived flag 'old.banner'"))
        let export = try #require(try await sandbox.ok("flag", "export").json() as? [String: Any])
        #expect((export["features"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["kept"])
        let answer = try await sandbox.evaluate("old.banner")
        #expect(answer["enabled"] as? Bool == false)
        #expect((answer["variant"] as? [String: Any])?["feature_enabled"] as? Bool == false)
        await #expect(try (sandbox.ok("flag", "list", "--json").json() as? [[String: Any]])?.count == 1)
        let all = try #require(try await sandbox.ok("flag", "list", "--archived", "--json").json() as? [[String: Any]])
        #expect(all.first { $0["name"] as? String == "old.banner" }?["archived"] as? Bool == true)
        #expect(try await sandbox.ok("flag", "list", "--archived").stdout.contains("old.banner (archived)"))
        #expect(try await sandbox.flagDetail("old.banner")["archived_at"] is String)
        #expect(try await sandbox.ok("flag", "archive", "old.banner").stdout.contains("already archived"))

        let disable = try await sandbox.run(["flag", "disable", "old.banner"])
        #expect(disable.status == 1 && disable.stderr.contains("flag 'old.banner' is archived; unarchive it first"), "\(disable)")

        try await sandbox.ok("flag", "unarchive", "old.banner")
        await #expect(try sandbox.evaluate("old.banner")["enabled"] as? Bool == true)
        let again = try #require(try await sandbox.ok("flag", "export").json() as? [String: Any])
        #expect((again["features"] as? [[String: Any]])?.count == 2)
        #expect(try await sandbox.ok("flag", "unarchive", "old.banner").stdout.contains("not archived"))
    }

    @Test func importingAnArchivedFlagBringsItBackAndIsAudited() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "returning")
        try await sandbox.ok("flag", "enable", "returning")
        let export = try sandbox.write("export.json", try await sandbox.ok("flag", "export").stdout)
        try await sandbox.ok("flag", "archive", "returning")

        let imported = try await sandbox.ok("flag", "import", export)
        #expect(imported.stdout.contains(": 1 flag(s) changed"), "\(imported)")
        #expect(imported.stdout.contains("note: flag 'returning' was archived"), "\(imported)")
        await #expect(try sandbox.evaluate("returning")["enabled"] as? Bool == true)
        let row = try #require(try sandbox.auditRows("flag.import").last)
        #expect((try jsonObject(row["before_json"] as String) as? [String: Any])?["archived"] as? Bool == true)
        #expect((try jsonObject(row["after_json"] as String) as? [String: Any])?["archived"] as? Bool == false)

        // A change of impression data alone is a change too.
        let impressions = try sandbox.write(
            "impressions.json", Self.features("{\"name\":\"returning\",\"enabled\":true,\"impressionData\":true}"))
        #expect(try await sandbox.ok("flag", "import", impressions).stdout.contains(": 1 flag(s) changed"))
        #expect(try await sandbox.flagDetail("returning")["impression_data"] as? Bool == true)
        #expect(try sandbox.auditRows("flag.import").count == 2)
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }

    // MARK: list --stale

    @Test func staleFlagsFollowTheirTypesExpectedLifetime() async throws {
        let sandbox = try await Sandbox.withBoard()
        let ages: [(String, String, Int)] = [
            ("rel.old", "release", 41), ("rel.young", "release", 39), ("exp.old", "experiment", 41),
            ("ops.old", "operational", 8), ("ops.young", "operational", 6), ("kill.ancient", "kill-switch", 400),
            ("perm.ancient", "permission", 400),
        ]
        let flags = ages.map { name, type, _ in "{\"name\":\"\(name)\",\"type\":\"\(type)\",\"enabled\":true}" }
        try await sandbox.ok(
            "flag", "import", try sandbox.write("ages.json", "{\"version\":1,\"features\":[\(flags.joined(separator: ","))]}"))
        #expect(try await sandbox.ok("flag", "list", "--stale").stdout.contains("No potentially stale flags"))
        try await sandbox.database().write { db in
            for (name, _, days) in ages {
                try db.execute(
                    sql: "UPDATE flags SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) WHERE name = ?",
                    arguments: ["-\(days) days", name])
            }
        }
        let stale = try #require(try await sandbox.ok("flag", "list", "--stale", "--json").json() as? [[String: Any]])
        #expect(stale.compactMap { $0["name"] as? String } == ["exp.old", "ops.old", "rel.old"])
        #expect(stale.allSatisfy { $0["potentially_stale"] as? Bool == true })
        let text = try await sandbox.ok("flag", "list", "--stale").stdout
        #expect(text.contains("ops.old") && text.contains("potentially") && !text.contains("kill.ancient"))
        #expect(try await sandbox.flagDetail("rel.old")["potentially_stale"] as? Bool == true)
        #expect(try await sandbox.flagDetail("kill.ancient")["potentially_stale"] as? Bool == false)
        // The auditors' view says the same.
        let fromView = try await sandbox.database().read { db in
            try String.fetchAll(db, sql: "SELECT name FROM flag_state WHERE potentially_stale AND environment = 'default' ORDER BY name")
        }
        #expect(fromView == ["exp.old", "ops.old", "rel.old"])
    }

    // MARK: import → export → import

    static let roundTripFiles = [
        "08-variants.json", "09-strategy-constraints.json", "13-constraint-operators.json", "15-global-constraints.json",
        "16-strategy-variants.json", "17-dependent-features.json", "22-cidr-constraint-operators.json",
    ]

    @Test(arguments: roundTripFiles)
    func importExportImportIsAFixedPoint(_ file: String) async throws {
        let spec = try FlagSpec.load(file)
        let dropped = FlagSpec.refusedByTheBoard[file] ?? []
        let sandbox = try await Sandbox.withBoard()
        let original = try sandbox.write("original.json", try FlagSpec.stateJSON(spec, dropping: dropped))
        let imported = try await sandbox.ok("flag", "import", original)
        #expect(imported.stdout.contains("into default"), "\(imported)")

        let firstText = try await sandbox.ok("flag", "export").stdout
        let first = try sandbox.write("export-default.json", firstText)
        let staged = try await sandbox.run(["flag", "import", "-", "--env", "staging"], stdin: firstText)  // from stdin
        #expect(staged.status == 0 && staged.stdout.contains("into staging"), "\(staged)")
        let secondText = try await sandbox.ok("flag", "export", "--env", "staging").stdout
        #expect(try jsonObject(firstText) == jsonObject(secondText), "\(file): export → import → export changed the feature set")
        // Importing the export where it came from changes nothing, not even a timestamp.
        let before = try await sandbox.snapshot()
        #expect(try await sandbox.ok("flag", "import", first).stdout.contains(": 0 flag(s) changed"))
        #expect(try await sandbox.snapshot() == before, "\(file): re-importing an unchanged export wrote to the board")

        // Every flag of the file is there, and evaluates from the board as the specification expects, in both
        // environments (the file itself is checked in evaluateFeaturesFileMatchesTheSpecification).
        let exported = try #require(try jsonObject(firstText) as? [String: Any])
        let originalFeatures =
            (try jsonObject(try FlagSpec.stateJSON(spec, dropping: dropped)) as? [String: Any])?["features"] as? [[String: Any]] ?? []
        #expect(
            Set((exported["features"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
                == Set(originalFeatures.compactMap { $0["name"] as? String }))
        let cases = try FlagSpec.cases(spec, dropping: dropped)
        let contexts = try sandbox.write("contexts.jsonl", FlagSpec.jsonl(cases))
        for env in ["default", "staging"] {
            let result = try await sandbox.run(["flag", "evaluate", "--contexts", contexts, "--env", env])
            #expect(result.status == 0, "\(result)")
            try FlagSpec.expectMatches(result.stdout, cases, file: "\(file) from the board's \(env)")
        }
    }

    // MARK: evaluate

    static let specFiles: [String] = {
        let index =
            (try? Data(contentsOf: FlagSpec.folder.appendingPathComponent("index.json")))
            .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String] } ?? []
        return index.filter { !["19-delta-api-hydration.json", "20-delta-api-events.json"].contains($0) }
    }()

    @Test func evaluateFeaturesFileMatchesTheSpecification() async throws {
        #expect(Self.specFiles.count >= 20, "spec files not found at \(FlagSpec.folder.path)")
        // No board at all: --features never opens one.
        let sandbox = try Sandbox()
        for file in Self.specFiles {
            let spec = try FlagSpec.load(file)
            let features = try sandbox.write("\(file).features.json", try FlagSpec.stateJSON(spec))
            let cases = try FlagSpec.cases(spec)
            let contexts = try sandbox.write("\(file).jsonl", FlagSpec.jsonl(cases))
            let result = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", contexts], db: false)
            #expect(result.status == 0, "\(file): \(result)")
            try FlagSpec.expectMatches(result.stdout, cases, file: file)
        }
        #expect(!FileManager.default.fileExists(atPath: sandbox.board))
        #expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("plugboard.sqlite").path))
    }

    @Test func evaluateReadsStdinAndRefusesAMalformedLineWithNoPartialOutput() async throws {
        let sandbox = try Sandbox()
        let spec = try FlagSpec.load("08-variants.json")
        let features = try sandbox.write("features.json", try FlagSpec.stateJSON(spec))
        let cases = try FlagSpec.cases(spec)
        let fromFile = try await sandbox.run(
            ["flag", "evaluate", "--features", features, "--contexts", try sandbox.write("c.jsonl", FlagSpec.jsonl(cases))], db: false)
        let fromStdin = try await sandbox.run(
            ["flag", "evaluate", "--features", features, "--contexts", "-"], db: false, stdin: FlagSpec.jsonl(cases))
        #expect(fromStdin.status == 0, "\(fromStdin)")
        #expect(fromStdin.stdout == fromFile.stdout && !fromStdin.stdout.isEmpty)
        // Blank lines are skipped but counted; the output keeps the input order.
        let mixed = cases[0].line + "\n\n" + cases[1].line + "\r\n"
        let mixedResult = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", "-"], db: false, stdin: mixed)
        #expect(mixedResult.stdout.split(separator: "\n").count == 2, "\(mixedResult)")

        for (bad, number) in [
            ("{\"toggle\": \"Feature.Variants.A\", \"context\": ", 3), ("[1,2]", 3), ("{\"context\": {}}", 3),
            ("{\"toggle\": 7}", 3), ("{\"toggle\":\"x\",\"context\":{\"userId\":[1]}}", 3),
        ] {
            let input = cases[0].line + "\n" + cases[1].line + "\n" + bad + "\n" + cases[2].line + "\n"
            let result = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", "-"], db: false, stdin: input)
            #expect(result.status == 1, "\(bad): \(result)")
            #expect(result.stdout.isEmpty, "partial output for \(bad): \(result.stdout)")
            #expect(result.stderr.hasPrefix("error: --contexts line \(number):"), "\(bad): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
        let missing = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", "nowhere.jsonl"], db: false)
        #expect(missing.status == 1 && missing.stderr.contains("the contexts file nowhere.jsonl does not exist"), "\(missing)")
        let noContexts = try await sandbox.run(["flag", "evaluate", "--features", features], db: false)
        #expect(noContexts.status == 2, "\(noContexts)")
        // applicationHostname compares with --hostname (default: this machine's name).
        let hosts = try sandbox.write(
            "hosts.json",
            Self.features(
                "{\"name\":\"build.hosts\",\"enabled\":true,\"strategies\":[{\"name\":\"applicationHostname\",\"parameters\":{\"hostNames\":\"build-01,build-02\"}}]}"
            ))
        for (hostname, expected) in [("build-02", true), ("laptop", false)] {
            let result = try await sandbox.run(
                ["flag", "evaluate", "--features", hosts, "--contexts", "-", "--hostname", hostname], db: false,
                stdin: "{\"toggle\":\"build.hosts\"}\n")
            #expect(result.stdout.hasPrefix("{\"toggle\":\"build.hosts\",\"enabled\":\(expected),"), "\(hostname): \(result)")
        }
        let badFeatures = try await sandbox.run(
            [
                "flag", "evaluate", "--features", try sandbox.write("bad.json", "{\"version\":1,\"features\":[{\"name\":\"x\"}]}"),
                "--contexts", "-",
            ], db: false, stdin: "")
        #expect(
            badFeatures.status == 1 && badFeatures.stderr.contains("flag 'x'") && badFeatures.stderr.contains("enabled"), "\(badFeatures)")
    }

    @Test func evaluateFromTheBoardMatchesTheFeaturesFile() async throws {
        let sandbox = try await Sandbox.withBoard()
        let file = "15-global-constraints.json"
        let spec = try FlagSpec.load(file)
        let dropped = FlagSpec.refusedByTheBoard[file] ?? []
        let features = try sandbox.write("features.json", try FlagSpec.stateJSON(spec, dropping: dropped))
        try await sandbox.ok("flag", "import", features, "--env", "production")
        let cases = try FlagSpec.cases(spec, dropping: dropped)
        let contexts = try sandbox.write("c.jsonl", FlagSpec.jsonl(cases))
        let fromFile = try await sandbox.run(["flag", "evaluate", "--features", features, "--contexts", contexts], db: false)
        let fromBoard = try await sandbox.run(["flag", "evaluate", "--env", "production", "--contexts", contexts])
        #expect(fromBoard.status == 0, "\(fromBoard)")
        #expect(FlagSpec.deterministic(fromBoard.stdout, cases) == FlagSpec.deterministic(fromFile.stdout, cases))
        try FlagSpec.expectMatches(fromBoard.stdout, cases, file: file)
        // The other environment has the flags (board-wide) but off.
        let fromDefault = try await sandbox.run(["flag", "evaluate", "--contexts", contexts])
        #expect(fromDefault.status == 0 && !fromDefault.stdout.contains("\"enabled\":true"), "\(fromDefault)")
        // A typo in --env is refused, not taken for an environment where every flag is off.
        for command in [["flag", "evaluate", "--contexts", contexts], ["flag", "export"]] {
            let typo = try await sandbox.run(command + ["--env", "prodution"])
            #expect(typo.status == 1 && typo.stdout.isEmpty, "\(command): \(typo)")
            #expect(typo.stderr.contains("environment 'prodution' does not exist"), "\(command): \(typo.stderr)")
        }
    }

    // MARK: import refusals

    struct BadImport {
        let name: String
        let json: String
        /// Substrings stderr must contain: the flag's name and the field.
        let expected: [String]
    }

    static func features(_ members: String...) -> String { "{\"version\":1,\"features\":[\(members.joined(separator: ","))]}" }
    static func flag(_ name: String, _ constraint: String) -> String {
        "{\"name\":\"\(name)\",\"enabled\":true,\"strategies\":[{\"name\":\"default\",\"constraints\":[\(constraint)]}]}"
    }

    static let badImports: [BadImport] = [
        BadImport(
            name: "malformed JSON", json: "{\"version\":1,\"features\":[{\"name\":\"half.written\",\"enabled\":true,",
            expected: ["not valid JSON"]),
        BadImport(
            name: "wrong type of field", json: features("{\"name\":\"typo.enabled\",\"enabled\":\"yes\"}"),
            expected: ["flag 'typo.enabled'", "enabled"]),
        BadImport(name: "missing enabled", json: features("{\"name\":\"no.enabled\"}"), expected: ["flag 'no.enabled'", "enabled"]),
        BadImport(
            name: "unknown operator",
            json: features(flag("bad.operator", "{\"contextName\":\"userId\",\"operator\":\"REGEX_MATCHES\",\"values\":[\"1\"]}")),
            expected: ["flag 'bad.operator'", "operator", "REGEX_MATCHES"]),
        BadImport(
            name: "invalid regex",
            json: features(flag("bad.regex", "{\"contextName\":\"email\",\"operator\":\"REGEX\",\"value\":\"(unclosed\"}")),
            expected: ["flag 'bad.regex'", "constraint 1", "(unclosed"]),
        BadImport(
            name: "invalid CIDR",
            json: features(flag("bad.cidr", "{\"contextName\":\"remoteAddress\",\"operator\":\"IN_CIDR\",\"values\":[\"10.0.0.0/33\"]}")),
            expected: ["flag 'bad.cidr'", "constraint 1", "10.0.0.0/33"]),
        BadImport(
            name: "invalid semver",
            json: features(flag("bad.semver", "{\"contextName\":\"version\",\"operator\":\"SEMVER_GT\",\"value\":\"1.2\"}")),
            expected: ["flag 'bad.semver'", "constraint 1", "1.2"]),
        BadImport(
            name: "dependency cycle",
            json: features(
                "{\"name\":\"cycle.a\",\"enabled\":true,\"dependencies\":[{\"feature\":\"cycle.b\"}]}",
                "{\"name\":\"cycle.b\",\"enabled\":true,\"dependencies\":[{\"feature\":\"cycle.a\"}]}"),
            expected: ["cycle.a", "cycle.b", "cycle"]),
        BadImport(
            name: "rollout of 150",
            json: features(
                "{\"name\":\"too.much\",\"enabled\":true,\"strategies\":[{\"name\":\"flexibleRollout\",\"parameters\":{\"rollout\":\"150\",\"stickiness\":\"default\",\"groupId\":\"g\"}}]}"
            ),
            expected: ["flag 'too.much'", "strategy 1", "150"]),
        BadImport(
            name: "unknown segment",
            json: features("{\"name\":\"seg.user\",\"enabled\":true,\"strategies\":[{\"name\":\"default\",\"segments\":[99]}]}"),
            expected: ["flag 'seg.user'", "strategy 1", "99"]),
        BadImport(
            name: "the same flag twice",
            json: features("{\"name\":\"twice\",\"enabled\":true}", "{\"name\":\"twice\",\"enabled\":false}"),
            expected: ["flag 'twice'", "twice"]),
        BadImport(
            name: "negative variant weight",
            json: features("{\"name\":\"bad.weight\",\"enabled\":true,\"variants\":[{\"name\":\"a\",\"weight\":-5}]}"),
            expected: ["flag 'bad.weight'", "variant 1"]),
        BadImport(
            name: "a cycle through a flag already on the board",
            json: features("{\"name\":\"board.child\",\"enabled\":true,\"dependencies\":[{\"feature\":\"board.parent\"}]}"),
            expected: ["board.child", "board.parent", "cycle"]),
    ]

    /// One board for every case: a refused import changes nothing, so each case starts from the same board.
    @Test func anInvalidImportIsRefusedAndChangesNothing() async throws {
        let sandbox = try await Sandbox.withBoard()
        // A board with flags and a segment already, one of which depends on board.child.
        try await sandbox.ok(
            "flag", "import",
            try sandbox.write(
                "good.json",
                """
                {"version":1,"segments":[{"id":1,"name":"beta","constraints":[{"contextName":"userId","operator":"IN","values":["1"]}]}],
                 "features":[{"name":"board.parent","enabled":true,"dependencies":[{"feature":"board.child"}]},
                             {"name":"board.child","enabled":true,"strategies":[{"name":"default","segments":[1]}]}]}
                """))
        let before = try await sandbox.snapshot()
        for bad in Self.badImports {
            let path = try sandbox.write("bad.json", bad.json)
            let result = try await sandbox.run(["flag", "import", path])
            #expect(result.status == 1, "\(bad.name): \(result)")
            #expect(result.stdout.isEmpty, "\(bad.name)")
            #expect(result.stderr.hasPrefix("error: "), "\(bad.name)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(bad.name): one sentence, one line: \(result.stderr)")
            for expected in bad.expected { #expect(result.stderr.contains(expected), "\(bad.name): \(result.stderr)") }
            #expect(!result.stderr.contains("SQLite"), "\(bad.name)")
            #expect(try await sandbox.snapshot() == before, "\(bad.name) changed the board")
        }
    }

    // MARK: audit and permissions

    @Test func everyFlagChangeIsAuditedWithBeforeAndAfter() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "audited", "--type", "experiment")
        try await sandbox.ok("flag", "enable", "audited", "--env", "production")
        try await sandbox.ok("flag", "rollout", "audited", "10", "--env", "production")
        try await sandbox.ok("flag", "rollout", "audited", "30", "--env", "production", "--as", "ci-bot")
        try await sandbox.ok("flag", "disable", "audited", "--env", "production")
        try await sandbox.ok("flag", "archive", "audited")
        try await sandbox.ok("flag", "unarchive", "audited")
        try await sandbox.ok(
            "flag", "import", try sandbox.write("f.json", Self.features("{\"name\":\"audited\",\"type\":\"experiment\",\"enabled\":true}")))
        // Nothing-to-do commands write no row.
        try await sandbox.ok("flag", "rollout", "audited", "30", "--env", "production")

        let rows = try sandbox.database().read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM audit_log WHERE target_type = 'flag' ORDER BY seq")
        }
        #expect(
            rows.map { $0["action"] as String } == [
                "flag.create", "flag.enable", "flag.rollout", "flag.rollout", "flag.disable",
                "flag.archive", "flag.unarchive", "flag.import",
            ])
        #expect(
            rows.allSatisfy {
                $0["target_id"] as String == "audited" && $0["outcome"] as String == "ok" && ($0["after_json"] as String?) != nil
            })
        #expect(rows.dropFirst().allSatisfy { ($0["before_json"] as String?) != nil }, "every change after create records the before state")

        let rollout = rows[3]
        #expect(rollout["environment"] as String? == "production")
        #expect(rollout["on_behalf_of"] as String? == "ci-bot")
        let before = try #require(try jsonObject(rollout["before_json"] as String) as? [String: Any])
        let after = try #require(try jsonObject(rollout["after_json"] as String) as? [String: Any])
        let strategy = { (state: [String: Any]) in ((state["strategies"] as? [[String: Any]])?.first?["parameters"] as? [String: String]) }
        #expect(strategy(before) == ["rollout": "10", "stickiness": "default", "groupId": "audited"])
        #expect(strategy(after) == ["rollout": "30", "stickiness": "default", "groupId": "audited"])
        #expect(before["enabled"] as? Bool == true && after["enabled"] as? Bool == true)
        #expect((try jsonObject(rows[1]["before_json"] as String) as? [String: Any])?["enabled"] as? Bool == false)
        #expect((try jsonObject(rows[1]["after_json"] as String) as? [String: Any])?["enabled"] as? Bool == true)
        #expect(try await sandbox.ok("audit", "--target", "audited").stdout.contains("flag.rollout"))
        let verified = try await sandbox.ok("audit", "verify")
        #expect(verified.stdout.contains("intact"), "\(verified)")
    }

    @Test(.enabled(if: canSwitchUser, "needs root and setpriv to act as another OS user"))
    func importNeedsAnAdminAndFlagsTheirOwner() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "root.flag")
        chown(sandbox.root.path, 65534, 65534)
        chown(sandbox.board, 65534, 65534)
        let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        let features = try sandbox.write("f.json", Self.features("{\"name\":\"root.flag\",\"enabled\":true}"))
        chown(features, 65534, 65534)

        let before = try await sandbox.ok("flag", "export").stdout
        let imported = try await sandbox.run(["flag", "import", features], prefix: asNobody)
        #expect(imported.status == 1, "\(imported)")
        #expect(imported.stderr.contains("nobody may not import flags: only a board admin may"), "\(imported.stderr)")
        for arguments in [["flag", "enable", "root.flag"], ["flag", "rollout", "root.flag", "50"], ["flag", "archive", "root.flag"]] {
            let refused = try await sandbox.run(arguments, prefix: asNobody)
            #expect(refused.status == 1, "\(arguments): \(refused)")
            #expect(refused.stderr.contains("nobody may not change flag 'root.flag': only its owner"), "\(refused.stderr)")
        }
        #expect(try await sandbox.ok("flag", "export").stdout == before)

        // Anyone may create a flag; its creator may change it, and so may an admin.
        let created = try await sandbox.run(["flag", "create", "nobody.flag"], prefix: asNobody)
        #expect(created.status == 0, "\(created)")
        let own = try await sandbox.run(["flag", "enable", "nobody.flag"], prefix: asNobody)
        #expect(own.status == 0, "\(own)")
        #expect(try await sandbox.flagDetail("nobody.flag")["owner"] as? String == "nobody")
        try await sandbox.ok("flag", "rollout", "nobody.flag", "20")

        let refusals = try sandbox.database().read { db in
            try Row.fetchAll(db, sql: "SELECT actor, action, target_id, reason FROM audit_log WHERE outcome = 'refused' ORDER BY seq")
        }
        #expect(refusals.map { $0["action"] as String } == ["flag.import", "flag.enable", "flag.rollout", "flag.archive"])
        #expect(refusals.allSatisfy { ($0["actor"] as String) == "nobody" && ($0["reason"] as String?)?.isEmpty == false })
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }
}

@Suite("flag store: fail closed")
struct FlagFailClosedTests {
    @Test func aHandBrokenDefinitionIsAnIntegrityErrorNotAFlagOnForEveryone() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "guarded")
        try await sandbox.ok("flag", "rollout", "guarded", "5")
        try await sandbox.ok("flag", "enable", "guarded")
        try await sandbox.database().write { db in
            try db.execute(sql: "UPDATE flag_environments SET strategies_json = '[{broken' WHERE flag_name = 'guarded'")
        }
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
