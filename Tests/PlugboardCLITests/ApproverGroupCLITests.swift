import Foundation
import PlugboardTestSupport
import Testing

/// `plugboard group` and `policy set --approvers` on a board file: a group is made with its first member, an approval
/// policy names it, `policy approvals` shows who approves, and once the environment is protected, widening who
/// approves opens a change request while narrowing it applies at once.
@Suite("who approves, on a board file (CLI)", .timeLimit(.hangGuard))
struct ApproverGroupCLITests {
    @Test func aGroupNamedByAPolicyIsShownAndWideningItWaits() async throws {
        let sandbox = try await Sandbox.withBoard([manifest("com.example.pay")])
        try await sandbox.ok("plugin", "enable", "com.example.pay", "--env", "production")
        let added = try await sandbox.ok("group", "add", "release", "alice")
        #expect(added.stdout == "alice is now in the group release.\n", "\(added)")
        let missing = try await sandbox.run(["policy", "set", "--env", "production", "--approvers", "nobody"])
        #expect(missing.status == 1 && missing.stderr.hasPrefix("error: there is no group nobody;"), "\(missing)")
        let reserved = try await sandbox.run(["group", "add", "admins", "bob"])
        #expect(reserved.status == 2 && reserved.stderr.contains("names who approves without a group"), "\(reserved)")

        let set = try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "2", "--approvers", "release")
        #expect(
            set.stdout
                == "Set the approval policy of production: a change that starts or widens what runs there needs 2 approvals by other people, from the group release (its members who are board admins or own or maintain the plug-in).\n",
            "\(set)")
        let policies = try await sandbox.ok("policy", "approvals").stdout
        #expect(policies.contains("APPROVERS") && policies.contains("release"), "\(policies)")
        let listed = try await sandbox.ok("group", "list").stdout
        #expect(listed.contains("release") && listed.contains("alice"), "\(listed)")

        // Adding a member, or going back to the default, widens who approves: requests. Removing a member does not wait.
        let bob = try await sandbox.ok("group", "add", "release", "bob")
        #expect(bob.stdout.hasPrefix("change request 1 opened: group add release bob (board-wide); needs 2 approvals"), "\(bob)")
        let loosen = try await sandbox.ok("policy", "set", "--env", "production", "--approvers", "default")
        #expect(loosen.stdout.hasPrefix("change request 2 opened: policy set"), "\(loosen)")
        let removed = try await sandbox.ok("group", "remove", "release", "alice")
        #expect(removed.stdout == "alice is no longer in the group release.\n", "\(removed)")
        #expect(try await sandbox.ok("group", "list", "release").stdout == "The group release has no members.\n")
        let rows = try await sandbox.boardFile.strings(
            "SELECT action || ' ' || target_id FROM audit_log WHERE action LIKE 'group.%' AND outcome = 'ok' ORDER BY seq")
        #expect(rows == ["group.add release/alice", "group.remove release/alice"], "\(rows)")
        try await sandbox.ok("audit", "verify")
    }
}
