import Foundation
import PlugboardModel
import PlugboardTestSupport
import Testing

/// A change request or a policy edited in the board file, behind the log, as a writer of the file would: every step of
/// the request refuses it with a sentence naming it, `audit verify` names the edited row, an approver's key signs
/// nothing it was not shown, and a host loads nothing the policy it no longer sees would have held back.
@Suite("change requests and policies edited behind the log (processes)", .timeLimit(.hangGuard), .serialized)
struct EditedChangeRequestTests {
    static let pay = ProtectedBoard.pay

    /// alice asks to pin pay 1.0.0 in production; the file is then edited so that the request enables pay instead, its
    /// summary (what `change show` and the console show) left as the pin. With `digest`, the digest is made to match.
    static func edited(digest: Bool) async throws -> ProtectedBoard {
        let board = try await ProtectedBoard.start(approvals: 2)
        let opened = try await board.ok("alice", "plugin", "pin", pay, "1.0.0", "--env", "production", "--json")
        #expect(try ProtectedBoard.requestID(opened) == 1)
        try await edit(board.sandbox, id: 1, digest: digest)
        let shown = try await board.request(1)
        #expect((shown["summary"] as? String)?.hasPrefix("plugin pin \(pay) 1.0.0") == true, "\(shown)")
        return board
    }

    /// Edits request `id`, a pin, in the board file so that it enables the plug-in instead, its summary left as the pin;
    /// with `digest`, the digest is made to match.
    static func edit(_ sandbox: Sandbox, id: Int, digest: Bool) async throws {
        let file = sandbox.boardFile
        try await file.execute(
            "UPDATE change_requests SET operation = 'plugin.enable', body = json_remove(body, '$.version') WHERE id = \(id)")
        if digest {
            let body = try #require(try await file.string("SELECT body FROM change_requests WHERE id = \(id)"))
            let recomputed = ApprovalStatement.changeDigest(operation: "plugin.enable", body: body)
            try await file.execute("UPDATE change_requests SET digest = '\(recomputed)' WHERE id = \(id)")
        }
    }

    /// What a refused step must leave as it was (a served board's file also records when tokens were last used).
    static func state(_ board: ProtectedBoard) async throws -> [String] {
        try await board.sandbox.boardFile.strings(
            """
            SELECT 'log ' || count(*) || ' ' || max(seq) FROM audit_log
            UNION ALL SELECT 'request ' || json_array(id, operation, body, digest, summary, state, base, scheduled_at) FROM change_requests
            UNION ALL SELECT 'approval ' || json_array(change_id, principal, signature) FROM change_approvals
            UNION ALL SELECT 'enabled ' || json_array(plugin_id, environment, enabled, pinned_version) FROM plugin_environments
            """)
    }

    @Test(arguments: [false, true])
    func anEditedRequestIsRefusedAtEveryStepAndVerifyNamesIt(digest: Bool) async throws {
        let board = try await Self.edited(digest: digest)
        let before = try await Self.state(board)
        let expected = digest ? "it shows \"plugin pin \(Self.pay) 1.0.0" : "its operation and body give the digest"
        for (person, arguments) in [
            ("bob", ["change", "approve", "1"]), ("carol", ["change", "approve", "1", "--comment", "looks fine"]),
            ("alice", ["change", "schedule", "1", "--at", "2030-01-01T00:00:00Z"]), ("bob", ["change", "apply", "1"]),
        ] {
            let result = try await board.run(person, arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains("change request 1 was edited outside plugboard"), "\(arguments): \(result)")
            #expect(result.stderr.contains(expected), "\(arguments): \(result)")
        }
        #expect(try await Self.state(board) == before, "a refused step changed the board")
        #expect(!before.contains { $0.hasPrefix("enabled [\"\(Self.pay)\",\"production\",1") }, "\(before)")
        let verify = try await board.sandbox.run(["audit", "verify"])
        #expect(verify.status == 1 && verify.stderr.contains("change_requests: row 1 was changed outside the log"), "\(verify)")
        await board.served.stop()
    }

    @Test func anApproverKeySignsNothingItWasNotShown() async throws {
        let board = try await Self.edited(digest: true)
        let key = board.sandbox.root.appendingPathComponent("bob.key").path
        try await board.sandbox.ok("signing-key", "generate", "--out", key)
        let before = try await Self.state(board)
        let signed = try await board.run("bob", ["change", "approve", "1", "--key", key])
        #expect(signed.status == 1, "\(signed)")
        #expect(
            signed.stderr.contains("change request 1 was edited outside plugboard")
                && signed.stderr.contains("but its operation is \"plugin enable \(Self.pay) in production\""), "\(signed)")
        #expect(!signed.stderr.contains("note: signing"), "it signed before it refused: \(signed)")
        #expect(try await Self.state(board) == before)
        await board.served.stop()
    }

    /// The approval policy of production requires one signed approval; its row is deleted from the file and pay is
    /// enabled there at once, unsigned. A host of the board file that pins no approver keys loads nothing of it.
    @Test func aDeletedPolicyRowLoadsNothing() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.pay)])
        try await sandbox.ok("plugin", "enable", Self.pay, "--env", "production")
        try await sandbox.ok("plugin", "disable", Self.pay, "--env", "production")
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "1", "--signed-approvals", "require")
        try await sandbox.boardFile.execute("DELETE FROM approval_policies")
        try await sandbox.ok("plugin", "enable", Self.pay, "--env", "production")

        let host = try ChildProcess(OperationsAPITests.hostBinary, ["--db", sandbox.board, "--env", "production", "--plugins", Self.pay])
        _ = await host.waitForLine { $0.contains("\"started\"") || $0.contains("approval_policies") }
        _ = await host.closeInput()
        let lines = host.output
        #expect(!SignedApprovalTests.loaded(lines, Self.pay), "\(lines) \(host.errorOutput)")
        #expect(
            (lines + [host.errorOutput]).joined().contains("approval_policies: row production was removed outside the log"),
            "\(lines) \(host.errorOutput)")
        let verify = try await sandbox.run(["audit", "verify"])
        #expect(verify.status == 1 && verify.stderr.contains("approval_policies: row production was removed outside the log"), "\(verify)")
    }
}
