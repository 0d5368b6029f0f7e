import Foundation
import PlugboardTestSupport
import Testing

/// Approver keys through the CLI: registering, listing and revoking them, the refusals that change nothing, the audit
/// rows, and what the policy says of plug-ins enabled without signed approvals.
@Suite("CLI: approver keys", .timeLimit(.hangGuard))
struct ApproverCLITests {
    static func key(_ sandbox: Sandbox, _ name: String) async throws -> (file: String, keyID: String, publicKey: String) {
        let file = sandbox.root.appendingPathComponent("\(name).key").path
        let made = try await sandbox.ok("signing-key", "generate", "--out", file, "--json").json() as? [String: String]
        return (file, try #require(made?["keyID"]), try #require(made?["publicKey"]))
    }

    @Test func approverKeysAreRegisteredListedAndRevoked() async throws {
        let sandbox = try await Sandbox.withBoard()
        let bob = try await Self.key(sandbox, "bob")
        let added = try await sandbox.ok("approver", "add", "bob", bob.publicKey)
        #expect(added.stdout == "Registered key \(bob.keyID) as an approver key of bob.\n", "\(added)")
        let again = try await sandbox.ok("approver", "add", "bob", bob.publicKey)
        #expect(again.stdout.contains("already an approver key of bob; nothing changed"), "\(again)")

        let listed = try #require(try await sandbox.ok("approver", "list", "--json").json() as? [[String: Any]])
        #expect(listed.count == 1)
        #expect(listed.first?["key_id"] as? String == bob.keyID && listed.first?["principal"] as? String == "bob", "\(listed)")
        #expect(listed.first?["revoked_at"] == nil)

        // Refusals change no approver row.
        let rows = "SELECT key_id, principal, public_key, revoked_at FROM approvers ORDER BY key_id"
        let before = try await sandbox.boardFile.rows(rows)
        for (arguments, message) in [
            (["approver", "add", "carol", bob.publicKey], "is registered for bob"),
            (["approver", "add", "bob", "bm90IGEga2V5"], "is not an Ed25519 public key"),
            (["approver", "add", "bob/../ x", bob.publicKey], "is not valid"),
            (["approver", "revoke", "0123456789abcdef", "--reason", "gone"], "is not a registered approver key"),
            (["approver", "revoke", "XYZ", "--reason", "gone"], "is not a key id"),
        ] {
            let refused = try await sandbox.run(arguments)
            #expect(refused.status != 0, "\(arguments): \(refused)")
            #expect(refused.stderr.contains(message), "\(arguments): \(refused.stderr)")
        }
        #expect(try await sandbox.boardFile.rows(rows) == before)

        let revoked = try await sandbox.ok("approver", "revoke", bob.keyID, "--reason", "laptop lost")
        #expect(revoked.stdout.contains("Revoked approver key \(bob.keyID) of bob"), "\(revoked)")
        let text = try await sandbox.ok("approver", "list")
        #expect(text.stdout.contains("revoked") && text.stdout.contains("laptop lost"), "\(text)")
        let readd = try await sandbox.run(["approver", "add", "bob", bob.publicKey])
        #expect(readd.status == 1 && readd.stderr.contains("was revoked") && readd.stderr.contains("generate a new key"), "\(readd)")

        for action in ["approver.add", "approver.revoke"] {
            let audit = try await sandbox.ok("audit", "--action", action)
            #expect(audit.stdout.contains(bob.keyID), "\(action): \(audit)")
        }
        try await sandbox.ok("audit", "verify")
    }

    @Test func requiringSignedApprovalsNamesWhatHostsNoLongerRun() async throws {
        let sandbox = try await Sandbox.withBoard([manifest("com.example.pay")])
        try await sandbox.ok("plugin", "enable", "com.example.pay", "--env", "production")
        let set = try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "2", "--signed-approvals", "require")
        #expect(
            set.stdout.contains("note: hosts of production do not run com.example.pay, enabled there without 2 signed approvals"),
            "\(set)")
        // A board-wide widening in a protected environment waits: registering an approver key is a change request.
        let key = try await Self.key(sandbox, "dave")
        let requested = try await sandbox.ok("approver", "add", "dave", key.publicKey)
        #expect(requested.stdout.contains("change request") && requested.stdout.contains("opened"), "\(requested)")
        let listed = try await sandbox.ok("approver", "list", "--json").json() as? [[String: Any]]
        #expect(listed?.isEmpty == true)
    }
}
