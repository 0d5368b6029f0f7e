import Foundation
import PlugboardTestSupport
import Testing

/// The audit log proves the board's state: every edit made with SQLite behind the CLI's back is named by
/// `audit verify`, which still passes on the untouched board.
@Suite("audit log: the state proof", .timeLimit(.hangGuard))
struct StateProofCLITests {
    /// A board with a plug-in with an artifact, a kill switch, an owner, a flag and a secret written twice.
    static func provenBoard() async throws -> Sandbox {
        let sandbox = try await Sandbox.withBoard([manifest("com.example.mail", "1.0.0")])
        let artifact = try sandbox.write("libcalendar.so", "the first library")
        try await sandbox.ok("plugin", "register", try sandbox.write("m.json", manifest()), "--artifact", artifact)
        try await sandbox.ok("plugin", "enable", "com.example.calendar", "--env", "production")
        try await sandbox.ok("plugin", "kill", "com.example.mail", "--reason", "INC-7")
        try await sandbox.ok("owner", "add", "com.example.calendar", "alice")
        try await sandbox.ok("flag", "create", "new-ui")
        try await sandbox.ok("flag", "rollout", "new-ui", "25", "--env", "production")
        for value in ["old-token", "new-token"] {
            let set = try await sandbox.run(
                ["secret", "set", "--plugin", "com.example.calendar", "token", "--from-file", "-"], stdin: value)
            #expect(set.status == 0, "\(set)")
        }
        return sandbox
    }

    /// A copy of `sandbox`'s board (and its key file) in a new sandbox.
    static func copy(_ sandbox: Sandbox) async throws -> Sandbox {
        let copy = try Sandbox()
        try await sandbox.boardFile.backup(to: copy.board)
        try FileManager.default.copyItem(atPath: sandbox.board + ".key", toPath: copy.board + ".key")
        return copy
    }

    static func edit(_ sandbox: Sandbox, _ sql: String) async throws {
        try await sandbox.boardFile.execute(sql)
    }

    @Test func theUntouchedBoardVerifiesWithItsStateRoot() async throws {
        let sandbox = try await Self.provenBoard()
        let verified = try await sandbox.ok("audit", "verify", "--json").json() as? [String: Any]
        #expect(verified?["ok"] as? Bool == true)
        #expect((verified?["state_rows_checked"] as? Int ?? 0) > 10)
        let root = try #require(verified?["state_root"] as? String)
        let checkpoint = try await sandbox.ok("audit", "checkpoint").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(checkpoint.split(separator: ":").count == 3 && checkpoint.hasSuffix(root))
        #expect(try await sandbox.ok("audit", "verify", "--checkpoint", checkpoint).stdout.contains("intact"))
        // Every change committed to its rows; the baseline row of migration 0006 to all rows there were.
        let actions = try await sandbox.boardFile.strings("SELECT action FROM audit_log WHERE state_changes IS NOT NULL ORDER BY seq")
        #expect(actions.contains("board.baseline") && actions.contains("plugin.kill") && actions.contains("secret.set"))
    }

    @Test(
        arguments: [
            (
                "an admin inserted", "INSERT INTO admins VALUES ('mallory', '2026-01-01T00:00:00.000Z', 'mallory')",
                "admins: row mallory was added without an audit row"
            ),
            (
                "a kill switch revived", "UPDATE kill_switches SET revived_at = '2026-01-01T00:00:00.000Z', revived_by = 'mallory'",
                "kill_switches: the kill switch on com.example.mail (row 1) was revived"
            ),
            (
                "an owner removed", "DELETE FROM plugin_owners WHERE principal = 'alice'",
                "plugin_owners: row com.example.calendar/alice was removed outside the log"
            ),
            (
                "a flag definition edited", "UPDATE flag_environments SET strategies_json = '[]' WHERE environment = 'production'",
                "flag_environments: row new-ui/production was changed outside the log"
            ),
            ("a row deleted", "DELETE FROM kill_switches", "kill_switches: row 1 was removed outside the log"),
            (
                "a plug-in disabled",
                "UPDATE plugin_environments SET enabled = 0 WHERE plugin_id = 'com.example.calendar' AND environment = 'production'",
                "plugin_environments: row com.example.calendar/production was changed outside the log"
            ),
        ])
    func anEditBehindTheLogIsNamed(_ what: String, _ sql: String, _ named: String) async throws {
        let sandbox = try await Self.provenBoard()
        let before = try await sandbox.ok("audit", "checkpoint").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let edited = try await Self.copy(sandbox)
        try await Self.edit(edited, sql)
        let result = try await edited.run(["audit", "verify", "--checkpoint", before])
        #expect(result.status == 1, "\(what): \(result)")
        #expect(result.stderr.contains(named), "\(what): \(result.stderr)")
        // The log itself is intact: only the state is named.
        #expect(!result.stderr.contains("was edited: its content"), "\(what)")
    }

    @Test func anArtifactSwappedWithItsDigestIsNamed() async throws {
        let sandbox = try await Self.provenBoard()
        let edited = try await Self.copy(sandbox)
        let other = String(repeating: "ab", count: 32)
        try await Self.edit(
            edited,
            """
            INSERT INTO artifacts (sha256, size_bytes, file_name, stored_at, stored_by) VALUES ('\(other)', 17, 'evil.so', '2026-01-01T00:00:00.000Z', 'mallory');
            UPDATE plugin_versions SET artifact_sha256 = '\(other)' WHERE plugin_id = 'com.example.calendar';
            """)
        let result = try await edited.run(["audit", "verify"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("plugin_versions: row com.example.calendar@1.0.0 was changed outside the log"), "\(result.stderr)")
        #expect(result.stderr.contains("artifacts: row \(other) was added without an audit row"))
    }

    @Test func anOldSealedValueCopiedBackIsNamed() async throws {
        let sandbox = try await Self.provenBoard()
        // The sealed value of the first write, as a backup or an earlier copy of the file holds it.
        let old = try await sandbox.run(["secret", "set", "--plugin", "com.example.calendar", "token", "--from-file", "-"], stdin: "v1")
        #expect(old.status == 0)
        let sealed = try #require(try await sandbox.boardFile.data("SELECT sealed FROM secret_values WHERE key = 'token'"))
        let again = try await sandbox.run(["secret", "set", "--plugin", "com.example.calendar", "token", "--from-file", "-"], stdin: "v2")
        #expect(again.status == 0)
        try await sandbox.boardFile.execute("UPDATE secret_values SET sealed = ? WHERE key = 'token'", .blob(sealed))
        let result = try await sandbox.run(["audit", "verify"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("secret_values: row com.example.calendar/token was changed outside the log"), "\(result.stderr)")
        // Reading it is refused, not answered with the old plaintext.
        let read = try await sandbox.run(["secret", "get", "--plugin", "com.example.calendar", "token"])
        #expect(read.status == 1 && read.stdout.isEmpty, "\(read)")
        #expect(read.stderr.contains("the sealed value of token for com.example.calendar does not match the audit log"), "\(read.stderr)")
    }

    @Test func anEditOfTheDigestIndexIsNamedToo() async throws {
        let sandbox = try await Self.provenBoard()
        try await Self.edit(
            sandbox,
            """
            INSERT INTO admins VALUES ('mallory', '2026-01-01T00:00:00.000Z', 'mallory');
            INSERT INTO state_digests VALUES ('admins', '["mallory"]', 0, '\(String(repeating: "0", count: 64))');
            """)
        let result = try await sandbox.run(["audit", "verify"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("admins: row mallory was added without an audit row"))
        #expect(result.stderr.contains("state_digests: the index of digests differs from the log"))
    }

    @Test func aReplacedAppendOnlyTriggerIsNamed() async throws {
        let sandbox = try await Self.provenBoard()
        try await Self.edit(
            sandbox,
            """
            DROP TRIGGER audit_log_no_update;
            CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT 1; END;
            """)
        let result = try await sandbox.run(["audit", "verify"])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                "the trigger audit_log_no_update on audit_log was replaced by one that differs from what the board's migrations made"),
            "\(result.stderr)")
    }

    /// The proof's table dropped: never "a board from before the proof". Verify names it, a change and a secret read are
    /// refused with one sentence, and the board is left as it was.
    @Test func aDroppedProofIsTamperingAndNothingIsChangedOrRead() async throws {
        let sandbox = try await Self.provenBoard()
        try await Self.edit(sandbox, "DROP TABLE state_buckets")
        let before = try await sandbox.snapshot()
        let verify = try await sandbox.run(["audit", "verify"])
        #expect(verify.status == 1 && verify.stderr.contains("the table state_buckets was dropped behind the audit log"), "\(verify)")
        let kill = try await sandbox.run(["plugin", "kill", "com.example.calendar", "--reason", "INC-9"])
        #expect(kill.status == 1 && kill.stderr.contains("state proof (table state_buckets) was dropped behind the audit log"), "\(kill)")
        let read = try await sandbox.run(["secret", "get", "--plugin", "com.example.calendar", "token"])
        #expect(read.status == 1 && read.stdout.isEmpty && read.stderr.contains("cannot be proven"), "\(read)")
        #expect(try await sandbox.snapshot() == before)
    }

    @Test func migratingATamperedBoardIsRefused() async throws {
        let sandbox = try await Self.provenBoard()
        try await Self.edit(
            sandbox,
            "INSERT INTO admins VALUES ('mallory', '2026-01-01T00:00:00.000Z', 'mallory'); DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)"
        )
        let result = try await sandbox.run(["migrate"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("does not match its audit log"), "\(result.stderr)")
    }

    /// `Tools/Scripts/audit-verify`, the auditor's script (Python's standard library only), agrees with `audit verify`.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/Scripts/audit-verify").path

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3"))
    func theAuditorsScriptRecomputesTheChainAndTheState() async throws {
        let sandbox = try await Self.provenBoard()
        // A value longer than the row encoder's buffer (4 KiB) is hashed where SQLite holds it: the script must agree.
        let large = try await sandbox.run(
            ["secret", "set", "--plugin", "com.example.calendar", "large", "--from-file", "-"],
            stdin: String(repeating: "x", count: 100_000))
        #expect(large.status == 0, "\(large)")
        let checkpoint = try await sandbox.ok("audit", "checkpoint").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let intact = try await sandbox.run([Self.script, sandbox.board, checkpoint], db: false, executable: "/usr/bin/python3")
        #expect(intact.status == 0, "\(intact)")
        #expect(intact.stdout.contains("head \(checkpoint)"), "\(intact.stdout)")

        let edited = try await Self.copy(sandbox)
        try await Self.edit(edited, "INSERT INTO admins VALUES ('mallory', '2026-01-01T00:00:00.000Z', 'mallory')")
        let caught = try await edited.run([Self.script, edited.board, checkpoint], db: false, executable: "/usr/bin/python3")
        #expect(caught.status == 1)
        #expect(caught.stdout.contains(#"admins: row ["mallory"] was added without an audit row"#), "\(caught)")
    }
}
