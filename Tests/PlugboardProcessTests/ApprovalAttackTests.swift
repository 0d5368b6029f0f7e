import Foundation
import PlugboardTestSupport
import Testing

/// One person alone, trying to meet the two-person rule of a protected environment from outside, as an insider would:
/// through a chain of tokens, puppet principals, a principal with no role, a revoked token or a lost role, and a
/// stray token that rejects. Each attempt is refused with one sentence, leaves the board as it was, and `audit verify`
/// passes. alice, bob and carol are admins, each an OS user of their own (``ProtectedBoard``); root made the board.
@Suite(
    "approvals one person cannot fake (processes)", .timeLimit(.hangGuard), .serialized,
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")),
    .enabled(if: canSwitchUser, "needs root and setpriv: each person is an OS user of their own"))
struct ApprovalAttackTests {
    static let pay = ProtectedBoard.pay

    /// What a refused attempt must leave alone: pay in production, the requests' states and their approvals.
    static func state(_ sandbox: Sandbox) async throws -> [String] {
        try await sandbox.boardFile.strings(
            """
            SELECT 'pay ' || enabled FROM plugin_environments WHERE plugin_id = '\(pay)' AND environment = 'production'
            UNION ALL SELECT 'request ' || id || ' ' || state FROM change_requests
            UNION ALL SELECT 'approval ' || change_id || ' ' || principal || ' ' || coalesce(token, '-') FROM change_approvals
            """)
    }

    /// The secret of a new access token of `principal` that the board's maker (root) makes on the board file.
    static func rootToken(_ sandbox: Sandbox, _ principal: String, name: String = "puppet") async throws -> String {
        let made = try await sandbox.ok("access-token", "create", "--principal", principal, "--name", name, "--json")
        return try #require((try made.json() as? [String: Any])?["token"] as? String, "\(made)")
    }

    /// The secret of a token that the token `parent` makes for its own principal through the operations API.
    static func childToken(_ board: ProtectedBoard, of parent: String, name: String) async throws -> String {
        let made = try await board.served.run(["access-token", "create", "--name", name, "--json"], token: parent)
        #expect(made.status == 0, "\(made)")
        return try #require((try made.json() as? [String: Any])?["token"] as? String, "\(made)")
    }

    /// Runs `change approve ID` with `token` and expects it refused with exactly `sentence`, the board unchanged.
    static func refused(
        _ board: ProtectedBoard, _ arguments: [String], token: String, _ sentence: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let before = try await state(board.sandbox)
        let result = try await board.served.run(arguments, token: token)
        #expect(result.status == 1 && result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr == "error: \(sentence)\n", "\(result)", sourceLocation: sourceLocation)
        #expect(try await state(board.sandbox) == before, sourceLocation: sourceLocation)
    }

    /// Finding: root opens a request, makes a token for a new principal sock, and sock's token mints a child that
    /// approves root's request. Refused: sock holds no role; made an admin, sock's child still goes back to root.
    @Test func aChildOfATokenTheAuthorMadeDoesNotApproveTheAuthorsRequest() async throws {
        let board = try await ProtectedBoard.start()
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        try await sandbox.ok("plugin", "enable", Self.pay, "--env", "production")
        let sock = try await Self.rootToken(sandbox, "sock", name: "first")
        let child = try await Self.childToken(board, of: sock, name: "child")
        try await Self.refused(
            board, ["change", "approve", "1"], token: child,
            "sock may not approve change request 1: in production only board admins, and the owners and maintainers of com.example.pay, approve it (plugboard admin list, plugboard owner list)"
        )
        // With the role, and a second sock: each is root, who is behind the request.
        try await sandbox.ok("admin", "add", "sock")
        try await sandbox.ok("admin", "add", "sock2")
        let sock2 = try await Self.childToken(board, of: try await Self.rootToken(sandbox, "sock2", name: "first"), name: "child")
        for (principal, token) in [("sock", child), ("sock2", sock2)] {
            try await Self.refused(
                board, ["change", "approve", "1"], token: token,
                "the access token '\(principal)/child' goes back to root, who is behind change request 1 too, so it cannot approve it; another person must, with a token of their own"
            )
        }
        #expect(try await sandbox.ok("change", "list").stdout.contains("0/2"))
        try await sandbox.ok("audit", "verify")
    }

    /// Finding: a principal with no role at all (a CI token) approves and applies an owner's production request.
    @Test func aPrincipalWithNoRoleDoesNotApprove() async throws {
        let board = try await ProtectedBoard.start(more: ["dave"])
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        try await sandbox.ok("owner", "add", Self.pay, "dave")
        try await board.ok("dave", "plugin", "enable", Self.pay, "--env", "production")
        // The CI token is a person's own (alice's OS user made it), but its principal holds no role.
        let ci = try await sandbox.personalToken(for: "ci-bot", uid: 4321, name: "ci")
        try await Self.refused(
            board, ["change", "approve", "1"], token: ci,
            "ci-bot may not approve change request 1: in production only board admins, and the owners and maintainers of com.example.pay, approve it (plugboard admin list, plugboard owner list)"
        )
        try await Self.refused(
            board, ["change", "apply", "1"], token: ci, "change request 1 has 0 of the 2 approvals it needs; nothing was changed")
        try await sandbox.ok("audit", "verify")
    }

    /// Finding: a scheduled request applies on the approval of a token revoked as leaked, or of a principal whose role
    /// was removed. Neither counts at apply: `change apply-due` leaves it open and says why, and `change show` too.
    @Test func anApprovalWhoseTokenWasRevokedOrWhosePrincipalLostTheRightNoLongerCounts() async throws {
        let board = try await ProtectedBoard.start()
        let sandbox = board.sandbox
        let opened = try await sandbox.ok("plugin", "enable", Self.pay, "--env", "production", "--at", "2099-01-01T00:00:00Z", "--json")
        let id = String(try ProtectedBoard.requestID(opened))
        try await board.ok("alice", "change", "approve", id)
        try await board.ok("carol", "change", "approve", id)
        #expect(try await sandbox.ok("change", "list").stdout.contains("2/2"))
        // carol's laptop token leaked: revoked. The schedule is brought forward on a board nobody serves any more.
        try await sandbox.ok("access-token", "revoke", "laptop", "--principal", "carol", "--reason", "leaked")
        await board.stop()
        try await sandbox.ok("change", "schedule", id, "--at", "2020-01-01T00:00:00Z")
        let before = try await Self.state(sandbox)
        let due = try await sandbox.ok("change", "apply-due")
        #expect(
            due.stdout
                == "change request \(id) was due; it has 1 of the 2 approvals it needs, and was not applied: the access token 'carol/laptop' was revoked; it waits for approvals that count\n",
            "\(due)")
        #expect(try await Self.state(sandbox) == before.map { $0.replacingOccurrences(of: "scheduled", with: "open") })
        let shown = try await sandbox.ok("change", "show", id).stdout
        #expect(shown.contains("by carol (no longer counts: the access token 'carol/laptop' was revoked)"), "\(shown)")
        #expect(shown.contains("has 1 that count"), "\(shown)")

        // alice loses her role: her approval no longer counts either.
        try await sandbox.ok("admin", "remove", "alice")
        let apply = try await sandbox.run(["change", "apply", id])
        #expect(
            apply.status == 1
                && apply.stderr
                    == "error: change request \(id) has 0 of the 2 approvals it needs, and was not applied: alice may not approve change request \(id): in production only board admins, and the owners and maintainers of com.example.pay, approve it (plugboard admin list, plugboard owner list); the access token 'carol/laptop' was revoked; it waits for approvals that count\n",
            "\(apply)")
        #expect(
            try await sandbox.boardFile.int(
                "SELECT enabled FROM plugin_environments WHERE plugin_id = ? AND environment = 'production'", .text(Self.pay)) != 1)
        try await sandbox.ok("audit", "verify")
    }

    /// Finding: a principal with no role rejects anyone's request, so one stray token blocks every change.
    @Test func aPrincipalWithNoRoleDoesNotRejectOrCancel() async throws {
        let board = try await ProtectedBoard.start(more: ["stray"])
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        try await board.ok("alice", "plugin", "enable", Self.pay, "--env", "production")
        for (arguments, verb) in [(["change", "reject", "1", "--reason", "no"], "reject"), (["change", "cancel", "1"], "cancel")] {
            let result = try await board.run("stray", arguments)
            #expect(result.status == 1, "\(result)")
            #expect(
                result.stderr
                    == "error: stray may not \(verb) change request 1: in production only board admins, and the owners and maintainers of com.example.pay, approve or \(verb) it (plugboard admin list, plugboard owner list), besides alice, who opened it\n",
                "\(result)")
        }
        #expect(try await sandbox.ok("change", "list", "--state", "open").stdout.contains("plugin enable"))
        // Someone who may approve it may reject it.
        try await board.ok("bob", "change", "reject", "1", "--reason", "after the freeze")
        try await sandbox.ok("audit", "verify")
    }

    /// Finding: one admin opens a request as alice and approves it as carol and erin, with tokens the admin made for
    /// them: three principals, one person. And a real author's request gets one approval from that admin, not two.
    @Test func oneAdminsTokensForOtherPrincipalsAreThatAdminEachTime() async throws {
        let board = try await ProtectedBoard.start()
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        try await sandbox.ok("admin", "add", "erin")
        var puppets: [String: String] = [:]
        for principal in ["alice", "carol", "erin"] { puppets[principal] = try await Self.rootToken(sandbox, principal) }
        let opened = try await board.served.run(["plugin", "enable", Self.pay, "--env", "production"], token: puppets["alice"])
        #expect(opened.status == 0 && opened.stdout.hasPrefix("change request 1 opened"), "\(opened)")
        for principal in ["carol", "erin"] {
            try await Self.refused(
                board, ["change", "approve", "1"], token: try #require(puppets[principal]),
                "the access token '\(principal)/puppet' goes back to root, who is behind change request 1 too, so it cannot approve it; another person must, with a token of their own"
            )
        }
        // bob, a person of his own, opens one: root's puppets approve it once between them.
        try await board.ok("bob", "plugin", "enable", ProtectedBoard.search, "--env", "production")
        let carol: String = try #require(puppets["carol"])
        let once = try await board.served.run(["change", "approve", "2"], token: carol)
        #expect(once.status == 0 && once.stdout == "change request 2 approved by carol; 1 of 2 approvals\n", "\(once)")
        try await Self.refused(
            board, ["change", "approve", "2"], token: try #require(puppets["erin"]),
            "the access token 'erin/puppet' goes back to root, who already approved change request 2 as carol; a person counts once")
        #expect(try await sandbox.ok("change", "show", "2").stdout.contains("has 1 that count"))
        try await sandbox.ok("audit", "verify")
    }
}
