import Foundation
import PlugboardTestSupport
import Testing

/// Advisories through the CLI: a file or a folder imported in one change, what they affect, their actions per
/// environment, a withdrawal, and the refusals that leave the board as it was.
@Suite("CLI: advisories", .timeLimit(.hangGuard))
struct AdvisoryCLITests {
    /// A board with the calendar at 1.0.0, 1.3.0 and 1.4.2, the notes at 2.0.1 and the greeter at 1.1.0.
    static func board() async throws -> Sandbox {
        try await Sandbox.withBoard([
            manifest("com.example.calendar", "1.0.0"), manifest("com.example.calendar", "1.3.0"), manifest("com.example.calendar", "1.4.2"),
            manifest("com.example.notes", "2.0.1"), manifest("com.example.greeter", "1.1.0"),
        ])
    }

    @Test func aFolderIsImportedListedAndShown() async throws {
        let sandbox = try await Self.board()
        let imported = try await sandbox.ok("advisory", "import", AdvisoryFixtures.folder).stdout
        #expect(imported.contains("Imported 4 advisories: PBSA-2026-0001, PBSA-2026-0002, PBSA-2026-0003, PBSA-2026-0004."), "\(imported)")

        let affecting = try await sandbox.ok("advisory", "list", "--affecting", "--json").json() as? [[String: Any]] ?? []
        #expect(affecting.compactMap { $0["id"] as? String } == ["PBSA-2026-0001", "PBSA-2026-0002", "PBSA-2026-0004"])
        #expect(affecting.first?["affecting"] as? [String] == ["com.example.calendar@1.3.0"])
        let listed = try await sandbox.ok("advisory", "list").stdout
        #expect(listed.contains("PBSA-2026-0003") && listed.contains("withdrawn 2026-11-22T09:00:00Z"), "\(listed)")

        let shown = try await sandbox.ok("advisory", "show", "PBSA-2026-0001").stdout
        #expect(shown.contains("Aliases: CVE-2026-10001, GHSA-9x4c-2m5q-7w3r"), "\(shown)")
        #expect(shown.contains(">= 1.2.0, < 1.4.2") && shown.contains("1.3.0"))
        #expect(shown.contains("default") && shown.contains("refuse-new"))
        let notes = try await sandbox.ok("advisory", "show", "PBSA-2026-0002", "--json").json() as? [String: Any]
        #expect(notes?["severity"] as? String == "critical")
        let ranges = (notes?["plugins"] as? [[String: Any]])?.first
        #expect(ranges?["affected_versions"] as? [String] == ["2.0.1"])
        #expect((notes?["actions"] as? [[String: Any]])?.first?["action"] as? String == "stop")

        // Each advisory is an audit row, and the log verifies.
        let audit = try await sandbox.ok("audit", "--json").stdout
        #expect(audit.components(separatedBy: "\"advisory.import\"").count - 1 == 4)
        #expect(try await sandbox.ok("audit", "verify", "--json").json() as? [String: Any] != nil)
    }

    @Test func aRefusedFileImportsNothingAndIsNamed() async throws {
        let sandbox = try await Self.board()
        let before = try await sandbox.snapshot()
        for name in ["another-ecosystem.json", "git-range.json", "malformed.json"] {
            let path = AdvisoryFixtures.path("advisories-refused/\(name)")
            let refused = try await sandbox.run(["advisory", "import", path])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("the advisory \(path)") && refused.stderr.contains("nothing was imported"), "\(refused)")
            #expect(refused.stderr.split(separator: "\n").count == 1)
        }
        // A folder with one bad file among good ones imports none of them.
        let folder = sandbox.root.appendingPathComponent("mixed").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: AdvisoryFixtures.path("PBSA-2026-0001.json"), toPath: folder + "/a.json")
        try FileManager.default.copyItem(
            atPath: AdvisoryFixtures.path("advisories-refused/another-ecosystem.json"), toPath: folder + "/b.json")
        let mixed = try await sandbox.run(["advisory", "import", folder])
        #expect(mixed.status != 0 && mixed.stderr.contains("b.json") && mixed.stderr.contains("'npm', not Plugboard"), "\(mixed)")
        // Too large a file is refused before it is read whole.
        let large = try sandbox.write("large.json", String(repeating: " ", count: 70_000) + "{}")
        let tooLarge = try await sandbox.run(["advisory", "import", large])
        #expect(tooLarge.status != 0 && tooLarge.stderr.contains("larger than"), "\(tooLarge)")
        #expect(try await sandbox.snapshot() == before)
    }

    @Test func actionsAndTheFloorAreSetAndAWithdrawalIsAudited() async throws {
        let sandbox = try await Self.board()
        try await sandbox.ok("advisory", "import", AdvisoryFixtures.path("PBSA-2026-0001.json"))
        func action() async throws -> String? {
            let shown = try await sandbox.ok("advisory", "show", "PBSA-2026-0001", "--json").json() as? [String: Any]
            return (shown?["actions"] as? [[String: Any]])?.first { $0["environment"] as? String == "default" }?["action"] as? String
        }
        #expect(try await action() == "refuse-new")
        let set = try await sandbox.ok("advisory", "set-action", "PBSA-2026-0001", "--env", "default", "--action", "stop").stdout
        #expect(set.contains("Set the action of PBSA-2026-0001 in default to stop."), "\(set)")
        #expect(try await action() == "stop")
        try await sandbox.ok("advisory", "set-action", "PBSA-2026-0001", "--env", "default", "--action", "warn")
        try await sandbox.ok("policy", "set", "--env", "default", "--advisories", "refuse-new")
        #expect(try await action() == "refuse-new")
        let bad = try await sandbox.run(["policy", "set", "--env", "default", "--advisories", "ignore"])
        #expect(bad.status != 0)

        let withdrawn = try await sandbox.ok("advisory", "withdraw", "PBSA-2026-0001", "--reason", "not exploitable").stdout
        #expect(withdrawn.contains("Withdrew PBSA-2026-0001"))
        let audit = try await sandbox.ok("audit", "--json").stdout
        #expect(audit.contains("\"advisory.withdraw\"") && audit.contains("\"advisory.set-action\""))
        let unknown = try await sandbox.run(["advisory", "withdraw", "PBSA-2099-0001", "--reason", "x"])
        #expect(unknown.status != 0 && unknown.stderr.contains("no advisory PBSA-2099-0001 is on the board"), "\(unknown)")
    }

    @Test func loosenOrWithdrawWaitsForApprovalsWhereTheEnvironmentIsProtectedAndRaisingDoesNot() async throws {
        let sandbox = try await Self.board()
        try await sandbox.ok("advisory", "import", AdvisoryFixtures.path("PBSA-2026-0001.json"))
        try await sandbox.ok("policy", "set", "--env", "default", "--approvals", "1")
        // Raising never waits.
        let raised = try await sandbox.ok("advisory", "set-action", "PBSA-2026-0001", "--env", "default", "--action", "stop").stdout
        #expect(raised.contains("Set the action"), "\(raised)")
        // Loosening becomes a change request; so does a withdrawal.
        let loosened = try await sandbox.ok("advisory", "set-action", "PBSA-2026-0001", "--env", "default", "--action", "warn").stdout
        #expect(loosened.contains("change request"), "\(loosened)")
        let withdrawal = try await sandbox.ok("advisory", "withdraw", "PBSA-2026-0001", "--reason", "x").stdout
        #expect(withdrawal.contains("change request"), "\(withdrawal)")
        let shown = try await sandbox.ok("advisory", "show", "PBSA-2026-0001", "--json").json() as? [String: Any]
        #expect(shown?["withdrawn"] == nil || shown?["withdrawn"] is NSNull)
        #expect((shown?["actions"] as? [[String: Any]])?.first?["action"] as? String == "stop")
    }

    @Test func aReimportThatLetsMoreRunWaitsForApprovalsWhereProtectedAndIsNotMixedWithStops() async throws {
        let sandbox = try await Self.board()
        try await sandbox.ok("advisory", "import", AdvisoryFixtures.path("PBSA-2026-0001.json"))
        let original = try AdvisoryFixtures.text("PBSA-2026-0001.json")
        let later = original.replacingOccurrences(of: "2026-11-20T10:00:00Z", with: "2026-11-25T10:00:00Z")
        // The same advisory, fixed earlier: 1.3.0 is no longer affected.
        let narrowed = try sandbox.write(
            "narrowed.json", later.replacingOccurrences(of: "\"fixed\": \"1.4.2\"", with: "\"fixed\": \"1.3.0\""))
        let stop = try sandbox.write(
            "stop.json",
            original.replacingOccurrences(of: "PBSA-2026-0001", with: "PBSA-2026-0009").replacingOccurrences(of: "HIGH", with: "CRITICAL"))
        try await sandbox.ok("policy", "set", "--env", "default", "--approvals", "1")

        let waits = try await sandbox.ok("advisory", "import", narrowed).stdout
        #expect(waits.contains("change request 1 opened: advisory import"), "\(waits)")
        #expect(try await sandbox.ok("advisory", "show", "PBSA-2026-0001").stdout.contains(">= 1.2.0, < 1.4.2"))
        let before = try await sandbox.snapshot()

        // Mixed with a text that stops, it is refused whole, so the stop is never held back.
        let folder = sandbox.root.appendingPathComponent("mixed").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: narrowed, toPath: folder + "/a.json")
        try FileManager.default.copyItem(atPath: stop, toPath: folder + "/b.json")
        let mixed = try await sandbox.run(["advisory", "import", folder])
        #expect(mixed.status == 1, "\(mixed)")
        #expect(
            mixed.stderr
                == "error: PBSA-2026-0001 (no longer affects com.example.calendar 1.3.0) would let hosts run more and so waits for approvals, while PBSA-2026-0009 never waits; import them in separate commands; nothing was imported\n",
            "\(mixed)")
        #expect(try await sandbox.snapshot() == before)
        // The stop alone applies at once.
        #expect(try await sandbox.ok("advisory", "import", stop).stdout.contains("Imported 1 advisory: PBSA-2026-0009."))

        // As an emergency it applies now, and the log holds to the policy.
        let emergency = try await sandbox.ok("advisory", "import", narrowed, "--emergency", "--reason", "publisher's fix confirmed").stdout
        #expect(emergency.contains("applied as an emergency"), "\(emergency)")
        #expect(try await sandbox.ok("advisory", "show", "PBSA-2026-0001").stdout.contains(">= 1.2.0, < 1.3.0"))
        try await sandbox.ok("audit", "verify")
        let row = try await sandbox.boardFile.strings(
            "SELECT after_json FROM audit_log WHERE action = 'advisory.import' AND outcome = 'ok' ORDER BY seq DESC LIMIT 1")
        #expect(row.first?.contains("\"loosens\":\"no longer affects com.example.calendar 1.3.0\"") == true, "\(row)")
    }

    @Test func withoutApprovalsAReimportThatLetsMoreRunAppliesAtOnce() async throws {
        let sandbox = try await Self.board()
        try await sandbox.ok("advisory", "import", AdvisoryFixtures.path("PBSA-2026-0001.json"))
        let later = try AdvisoryFixtures.text("PBSA-2026-0001.json").replacingOccurrences(
            of: "2026-11-20T10:00:00Z", with: "2026-11-25T10:00:00Z"
        ).replacingOccurrences(of: "HIGH", with: "LOW")
        let lowered = try await sandbox.ok("advisory", "import", try sandbox.write("lowered.json", later)).stdout
        #expect(lowered.contains("Imported 1 advisory: PBSA-2026-0001."), "\(lowered)")
        #expect(try await sandbox.ok("advisory", "show", "PBSA-2026-0001", "--json").json() as? [String: Any] != nil)
        try await sandbox.ok("audit", "verify")
    }
}
