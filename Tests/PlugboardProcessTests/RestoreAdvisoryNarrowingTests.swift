import Foundation
import PlugboardTestSupport
import Testing

/// A restore never undoes what an advisory denies on the board it replaces: advisories taken in or brought up to date
/// since the backup, a withdrawal the replaced board does not have, and actions and floors raised since, each carried
/// forward with its `restore.carried-forward` row.
@Suite("a restore keeps what advisories deny on the board it replaces", .timeLimit(.hangGuard), .serialized)
struct RestoreAdvisoryNarrowingTests {
    static let alpha = "com.example.alpha"

    /// An OSV advisory of alpha, affecting `introduced` before `fixed`.
    static func advisory(_ id: String, modified: String = "2026-11-20T10:00:00Z", _ introduced: String, _ fixed: String) -> String {
        """
        {"schema_version":"1.7.0","id":"\(id)","modified":"\(modified)","summary":"\(id)",
         "affected":[{"package":{"ecosystem":"Plugboard","name":"\(alpha)"},
           "ranges":[{"type":"SEMVER","events":[{"introduced":"\(introduced)"},{"fixed":"\(fixed)"}]}]}],
         "database_specific":{"severity":"LOW"}}
        """
    }

    func carried(_ result: CLIResult) throws -> [String] {
        let report = try #require(try result.json() as? [String: Any])
        return (report["carried"] as? [[String: Any]] ?? []).map {
            "\($0["kind"] ?? "") \($0["target"] ?? "")\(($0["environment"] as? String).map { " in \($0)" } ?? "")"
        }
    }

    func shown(_ sandbox: Sandbox, _ id: String) async throws -> [String: Any] {
        try #require(try await sandbox.ok("advisory", "show", id, "--json").json() as? [String: Any])
    }

    @Test("advisories imported or updated since the backup, a withdrawal taken back, raised actions and floors stay")
    func advisoriesAreCarriedForward() async throws {
        let sandbox = try await Sandbox.withBoard([
            manifest(Self.alpha, "1.0.0"), manifest(Self.alpha, "1.1.0"), manifest(Self.alpha, "1.2.0"),
        ])
        try await sandbox.ok("plugin", "enable", Self.alpha)
        func importing(_ name: String, _ text: String) async throws {
            try await sandbox.ok("advisory", "import", try sandbox.write(name, text))
        }
        try await importing("a-old.json", Self.advisory("PBSA-2026-0201", "1.1.0", "1.2.0"))
        try await importing("w.json", Self.advisory("PBSA-2026-0202", "1.0.0", "1.1.0"))
        let standing = sandbox.root.appendingPathComponent("standing.sqlite").path
        try await sandbox.ok("backup", "--to", standing)
        try await sandbox.ok("advisory", "withdraw", "PBSA-2026-0202", "--reason", "a false alarm")
        let withdrawn = sandbox.root.appendingPathComponent("withdrawn.sqlite").path
        try await sandbox.ok("backup", "--to", withdrawn)
        // Back to the board where the advisory stands: the replaced board's withdrawal does not deny anything, and is
        // not carried.
        #expect(try carried(try await sandbox.ok("restore", "--from", standing, "--json")).isEmpty)

        // Since the backup of the withdrawal: an update, a new advisory, a raised action and a raised floor.
        try await importing("a-new.json", Self.advisory("PBSA-2026-0201", modified: "2026-11-25T10:00:00Z", "1.1.0", "1.3.0"))
        try await importing("n.json", Self.advisory("PBSA-2026-0203", "1.2.0", "1.3.0"))
        try await sandbox.ok("advisory", "set-action", "PBSA-2026-0201", "--env", "default", "--action", "stop")
        try await sandbox.ok("policy", "set", "--env", "production", "--advisories", "refuse-new")

        let restored = try await sandbox.ok("restore", "--from", withdrawn, "--json")
        #expect(
            try carried(restored) == [
                "advisory PBSA-2026-0201", "advisory PBSA-2026-0202", "advisory PBSA-2026-0203", "advisory floor production in production",
                "advisory action PBSA-2026-0201 in default",
            ], "\(restored)")
        let updated = try await shown(sandbox, "PBSA-2026-0201")
        #expect(updated["modified"] as? String == "2026-11-25T10:00:00Z", "\(updated)")
        #expect((updated["plugins"] as? [[String: Any]])?.first?["affected_versions"] as? [String] == ["1.2.0", "1.1.0"], "\(updated)")
        let actions = updated["actions"] as? [[String: Any]] ?? []
        #expect(actions.first { $0["environment"] as? String == "default" }?["action"] as? String == "stop", "\(actions)")
        #expect(actions.first { $0["environment"] as? String == "production" }?["action"] as? String == "refuse-new", "\(actions)")
        #expect(try await shown(sandbox, "PBSA-2026-0202")["withdrawn"] == nil)
        #expect(try await shown(sandbox, "PBSA-2026-0203")["severity"] as? String == "low")

        // Each is a restore.carried-forward row that says when and by whom it was made on the replaced board.
        let rows = try await sandbox.boardFile.rows(
            "SELECT target_id, environment, after_json FROM audit_log WHERE action = 'restore.carried-forward' ORDER BY seq")
        #expect(rows.count == 5, "\(rows)")
        let action = rows.first { $0["target_id"]?.string == "PBSA-2026-0201" && $0["environment"]?.string == "default" }
        let after = action?["after_json"]?.string ?? ""
        #expect(after.contains("\"made_by\"") && after.contains("\"carried\":true") && !after.contains("\"made_at\":null"), "\(rows)")
        try await sandbox.ok("audit", "verify")

        // A second restore of the same backup carries the same, and nothing is lost on the way.
        let again = try await sandbox.ok("restore", "--from", withdrawn, "--json")
        #expect(try carried(again).count == 5, "\(again)")
        try await sandbox.ok("audit", "verify")
    }
}
