import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Archived and stale flags, imports and round trips.
extension FlagCLITests {
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
        let row = try #require(try await sandbox.auditRows("flag.import").last)
        #expect((try jsonObject(try #require(row["before_json"]?.string)) as? [String: Any])?["archived"] as? Bool == true)
        #expect((try jsonObject(try #require(row["after_json"]?.string)) as? [String: Any])?["archived"] as? Bool == false)

        // A change of impression data alone is a change too.
        let impressions = try sandbox.write(
            "impressions.json", Self.features("{\"name\":\"returning\",\"enabled\":true,\"impressionData\":true}"))
        #expect(try await sandbox.ok("flag", "import", impressions).stdout.contains(": 1 flag(s) changed"))
        #expect(try await sandbox.flagDetail("returning")["impression_data"] as? Bool == true)
        #expect(try await sandbox.auditRows("flag.import").count == 2)
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
        for (name, _, days) in ages {
            try await sandbox.boardFile.execute(
                "UPDATE flags SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?) WHERE name = ?", .text("-\(days) days"), .text(name)
            )
        }
        let stale = try #require(try await sandbox.ok("flag", "list", "--stale", "--json").json() as? [[String: Any]])
        #expect(stale.compactMap { $0["name"] as? String } == ["exp.old", "ops.old", "rel.old"])
        #expect(stale.allSatisfy { $0["potentially_stale"] as? Bool == true })
        let text = try await sandbox.ok("flag", "list", "--stale").stdout
        #expect(text.contains("ops.old") && text.contains("potentially") && !text.contains("kill.ancient"))
        #expect(try await sandbox.flagDetail("rel.old")["potentially_stale"] as? Bool == true)
        #expect(try await sandbox.flagDetail("kill.ancient")["potentially_stale"] as? Bool == false)
        // The auditors' view says the same.
        let fromView = try await sandbox.boardFile.strings(
            "SELECT name FROM flag_state WHERE potentially_stale AND environment = 'default' ORDER BY name")
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
}
