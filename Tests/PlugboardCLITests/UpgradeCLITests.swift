import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A board made by an earlier Plugboard (`Tests/PlugboardStoreTests/Fixtures/legacy-board`, made by the CLI as it was
/// before the store was restructured) opens, reads, decrypts and verifies with this one, and takes new changes.
@Suite("boards made by an earlier Plugboard", .timeLimit(.hangGuard))
struct UpgradeCLITests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("PlugboardStoreTests/Fixtures/legacy-board")
    static let checkpoint = "27:7046c61bbabe9cdedf7e6f48fabb2f54e865973dda8296dcbdeffb92f536a032"

    /// The fixture's first admin is the OS user `root`, who made it; other users may only read it.
    static var runningAsRoot: Bool { geteuid() == 0 }

    /// Copies the fixture (board, key file with mode 0600, artifact store) into the sandbox as its board.
    static func copy(into sandbox: Sandbox) throws {
        let files = FileManager.default
        try files.copyItem(atPath: fixture.appendingPathComponent("legacy-board.sqlite").path, toPath: sandbox.board)
        try files.copyItem(atPath: fixture.appendingPathComponent("legacy-board.sqlite.key").path, toPath: sandbox.board + ".key")
        try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: sandbox.board + ".key")
        try files.copyItem(
            atPath: fixture.appendingPathComponent("legacy-board.sqlite.artifacts").path, toPath: sandbox.board + ".artifacts")
    }

    @Test(.enabled(if: runningAsRoot, "the fixture's admin is root"))
    func aBoardFromBeforeTheRestructuringReadsVerifiesAndTakesChanges() async throws {
        let sandbox = try Sandbox()
        try Self.copy(into: sandbox)

        // Commands say to migrate first; only the migrations added since the fixture was made are pending (0005:
        // what plugboard serve keeps, 0006: the state proof, 0007: signed plug-ins, 0008: remote hosts, 0009: the audit
        // log without its index of hashes, 0010: token kinds, 0011: access tokens, 0012: how a change arrived, 0013:
        // releases of hosts' quarantines, 0014: rollouts, 0015: the parents of access tokens, 0016: change requests,
        // 0017: who approves, and the tokens behind requests and approvals, 0018: the moment an approval binds,
        // 0019: the release a protected environment runs, 0020: identities and groups of an identity provider, 0021: what
        // an access token may do, 0022: webhook endpoints, 0023:
        // advisories, 0024: advisory feed subscriptions).
        let stale = try await sandbox.run(["plugin", "list"])
        #expect(stale.status != 0 && stale.stderr.contains("plugboard migrate"), "\(stale)")
        let migrations = try await sandbox.ok("migrate", "--status", "--json").json() as? [String: Any]
        let pending = (migrations?["pending"] as? [[String: Any]] ?? []).compactMap { $0["file_name"] as? String }
        #expect(
            pending == [
                "0005_serve.sql", "0006_state_proof.sql", "0007_signatures.sql", "0008_remote_hosts.sql", "0009_audit_hash_unindexed.sql",
                "0010_token_kinds.sql", "0011_access_tokens.sql", "0012_audit_via.sql", "0013_quarantine_releases.sql",
                "0014_rollouts.sql", "0015_access_token_parents.sql", "0016_change_requests.sql", "0017_approvers.sql",
                "0018_approval_moment.sql", "0019_approved_release.sql", "0020_identities.sql", "0021_token_scopes.sql",
                "0022_webhooks.sql", "0023_advisories.sql", "0024_advisory_feeds.sql",
            ])
        let applied = try await sandbox.ok("migrate").stdout
        #expect(
            applied.contains("0005_serve.sql") && applied.contains("0006_state_proof.sql") && applied.contains("0007_signatures.sql")
                && applied.contains("0008_remote_hosts.sql") && applied.contains("0009_audit_hash_unindexed.sql")
                && applied.contains("0010_token_kinds.sql") && applied.contains("0011_access_tokens.sql"))
        #expect(try await sandbox.ok("migrate").stdout.contains("up to date"))
        // The state proof's migration recorded the digests of the board's rows as they were (board.baseline), and they
        // verify; 0007, 0011, 0013, 0014, 0023 and 0024 only add empty tables, and 0010, 0015 and 0021 columns to tables with no rows here, so
        // their own rows are recorded like any change's. 0019 adds a column to plugin_environments, which has rows here:
        // it records their digests again, in a baseline of its own.
        let baseline = try await sandbox.ok("audit", "--json").stdout.split(separator: "\n").filter { $0.contains("\"board.baseline\"") }
        #expect(baseline.count == 2)
        let upgraded = try await sandbox.ok("audit", "verify", "--checkpoint", Self.checkpoint, "--json").json() as? [String: Any]
        #expect(upgraded?["ok"] as? Bool == true)
        #expect((upgraded?["state_rows_checked"] as? Int ?? 0) > 20)

        // The registry as the old CLI left it.
        let list = try await sandbox.ok("plugin", "list", "--env", "production", "--json").json() as? [[String: Any]] ?? []
        let byID = Dictionary(uniqueKeysWithValues: list.compactMap { row in (row["id"] as? String).map { ($0, row) } })
        #expect(byID["com.example.notes"]?["enabled"] as? Bool == true)
        #expect(byID["com.example.greeter"]?["pinned_version"] as? String == "1.2.0")
        #expect(byID["com.example.notes"]?["killed"] as? Bool == false)

        // Secrets sealed before two key rotations, and after them.
        #expect(try await sandbox.ok("secret", "get", "--plugin", "com.example.notes", "oauth-token").stdout == "s3cret-token")
        #expect(try await sandbox.ok("secret", "get", "--plugin", "com.example.notes", "second").stdout == "after-rotation")
        #expect(try await sandbox.ok("secret", "get", "--plugin", "com.example.greeter", "suffix").stdout == "other")

        // The stored artifact still matches its digest, and the flag gate evaluates.
        let status = try await sandbox.ok("plugin", "show", "com.example.greeter", "--json").json() as? [String: Any]
        let versions = status?["versions"] as? [[String: Any]] ?? []
        let pinned = versions.first { $0["version"] as? String == "1.2.0" }
        #expect((pinned?["artifact_sha256"] as? String)?.hasPrefix("e29cfb") == true)
        #expect(pinned?["killed"] as? Bool == true)
        #expect(versions.first { $0["version"] as? String == "1.3.0-beta.1" }?["yank_reason"] as? String == "broken beta")
        #expect(try await sandbox.ok("flag", "show", "plugin.greeter.rollout").stdout.contains("30"))

        // A new change extends the old chain.
        try await sandbox.ok("plugin", "kill", "com.example.notes", "--reason", "INC-3")
        let set = try await sandbox.run(["secret", "set", "--plugin", "com.example.notes", "third", "--from-file", "-"], stdin: "new")
        #expect(set.status == 0, "\(set)")
        let verified = try await sandbox.ok("audit", "verify", "--checkpoint", Self.checkpoint, "--json").json() as? [String: Any]
        #expect(verified?["ok"] as? Bool == true)
        #expect((verified?["rows_checked"] as? Int ?? 0) >= 29)
        #expect(try await sandbox.ok("secret", "get", "--plugin", "com.example.notes", "third").stdout == "new")
    }
}
