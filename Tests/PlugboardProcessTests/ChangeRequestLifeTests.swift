import Foundation
import PlugboardTestSupport
import Testing

/// The life of a change request between people: the author on the board file (the OS user), alice, bob, carol and
/// dave through their access tokens against `plugboard serve --admin`. Approvals count per principal, never the
/// author's, and bind to the rows as they were approved.
@Suite(
    "change requests between people (processes)", .timeLimit(.hangGuard), .serialized,
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")),
    .enabled(if: canSwitchUser, "needs root and setpriv: each person is an OS user of their own"))
struct ChangeRequestLifeTests {
    static let pay = ProtectedBoard.pay

    /// Whether pay is enabled in production, as the board file says.
    static func payEnabled(_ sandbox: Sandbox) async throws -> Bool {
        try await sandbox.boardFile.int(
            "SELECT enabled FROM plugin_environments WHERE plugin_id = ? AND environment = 'production'", .text(pay)) == 1
    }

    @Test func twoOtherPeopleApplyItAndTheAuthorCountsUnderNoToken() async throws {
        let board = try await ProtectedBoard.start()
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        let opened = try await sandbox.ok("plugin", "enable", Self.pay, "--env", "production")
        #expect(opened.stdout == "change request 1 opened: plugin enable \(Self.pay) in production; needs 2 approvals\n", "\(opened)")
        #expect(opened.stderr.isEmpty)
        #expect(try await Self.payEnabled(sandbox) == false)

        // The author's own token maps to the same principal: refused, and with --as too.
        let own = try await board.served.run(["change", "approve", "1"])
        #expect(
            own.status == 1 && own.stderr == "error: root opened change request 1 and cannot approve it; another person must\n", "\(own)")
        let declared = try await sandbox.run(["change", "approve", "1", "--as", "alice"])
        #expect(declared.status == 1 && declared.stderr.contains("root opened change request 1 and cannot approve it"), "\(declared)")

        let first = try await board.ok("alice", "change", "approve", "1", "--comment", "checked the release notes")
        #expect(first.stdout == "change request 1 approved by alice; 1 of 2 approvals\n", "\(first)")
        // A principal counts once, whichever of their tokens approves again.
        let again = try await board.ok("alice", "change", "approve", "1")
        #expect(again.stdout == "change request 1 approved by alice; 1 of 2 approvals\n", "\(again)")
        let early = try await board.run("carol", ["change", "apply", "1"])
        #expect(early.status == 1 && early.stderr.contains("has 1 of the 2 approvals it needs; nothing was changed"), "\(early)")
        #expect(try await Self.payEnabled(sandbox) == false)

        let last = try await board.ok("bob", "change", "approve", "1")
        #expect(last.stdout.hasPrefix("change request 1 approved by bob and applied: "), "\(last)")
        #expect(try await Self.payEnabled(sandbox))
        let shown = try await sandbox.ok("change", "show", "1").stdout
        #expect(shown.contains("state applied"), "\(shown)")
        // alice's second approval replaced her first: one approval each, the last one's comment (none).
        #expect(shown.contains("applied ") && shown.contains(" by bob\n"), "\(shown)")
        #expect(shown.contains(" by alice\n") && !shown.contains("checked the release notes"), "\(shown)")

        let rows = try await AuditRows.read(sandbox).filter { $0.targetID == "1" || $0.action == "plugin.enable" }
        let story = rows.map { "\($0.actor) \($0.action) \($0.outcome)" }
        #expect(
            story == [
                "root change.open ok", "root change.approve refused", "root change.approve refused", "alice change.approve ok",
                "alice change.approve ok", "bob change.approve ok", "root plugin.enable ok", "root change.apply ok",
            ], "\(story)")
        // Applied as its author asked, on the last approval: bob applied it.
        let apply = try #require(rows.last?.after)
        #expect(Set(apply["approvals"] as? [String] ?? []) == ["alice", "bob"] && apply["author"] as? String == "root", "\(apply)")
        #expect(apply["applied_by"] as? String == "bob", "\(apply)")
        try await sandbox.ok("audit", "verify")
    }

    @Test func aMovedBaseRefusesTheApplicationAndSaysWhatMovedUntilApprovedAgain() async throws {
        let board = try await ProtectedBoard.start()
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        try await sandbox.ok("plugin", "enable", Self.pay, "--env", "production", "--emergency", "--reason", "first release")
        let id = try ProtectedBoard.requestID(try await sandbox.ok("plugin", "pin", Self.pay, "1.1.0", "--env", "production", "--json"))
        try await board.ok("alice", "change", "approve", String(id))

        // A stop moves the row the pin touches: applied at once, and alice's approval no longer counts.
        let disabled = try await board.ok("carol", "plugin", "disable", Self.pay, "--env", "production")
        #expect(!disabled.stdout.contains("change request"), "\(disabled)")
        #expect(try await Self.payEnabled(sandbox) == false)
        let bob = try await board.ok("bob", "change", "approve", String(id))
        // The approval is kept, and the application it would make is refused with what moved.
        #expect(bob.stdout.hasPrefix("change request \(id) approved by bob; it was not applied: "), "\(bob)")
        #expect(bob.stdout.contains("plugin_environments \(Self.pay)/production moved since alice approved it"), "\(bob)")
        let shown = try await sandbox.ok("change", "show", String(id)).stdout
        #expect(shown.contains("by alice (no longer counts: the rows moved since)"), "\(shown)")

        let refused = try await board.run("bob", ["change", "apply", String(id)])
        #expect(refused.status == 1, "\(refused)")
        #expect(
            refused.stderr
                == "error: change request \(id) was not applied: plugin_environments \(Self.pay)/production moved since alice approved it; it needs 2 approvals of the board as it is now, so approve it again to renew it\n",
            "\(refused)")
        #expect(
            try await sandbox.boardFile.string("SELECT pinned_version FROM plugin_environments WHERE plugin_id = ?", .text(Self.pay)) == nil
        )

        // Renewed: alice approves the board as it is now, and the pin applies.
        let renewed = try await board.ok("alice", "change", "approve", String(id))
        #expect(renewed.stdout.hasPrefix("change request \(id) approved by alice and applied: "), "\(renewed)")
        #expect(
            try await sandbox.boardFile.string(
                "SELECT pinned_version FROM plugin_environments WHERE plugin_id = ? AND environment = 'production'", .text(Self.pay))
                == "1.1.0")
        try await sandbox.ok("audit", "verify")
    }

    @Test func anEmergencyNeedsAnAdminAndAReasonAndShowsUntilAnotherAdminAcknowledgesIt() async throws {
        let board = try await ProtectedBoard.start(more: ["dave"])
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        try await sandbox.ok("owner", "add", Self.pay, "dave")

        // dave owns pay, so he may ask for its enablement, but not apply it as an emergency.
        let refused = try await board.run(
            "dave", ["plugin", "enable", Self.pay, "--env", "production", "--emergency", "--reason", "INC-7"])
        #expect(refused.status == 1 && refused.stderr.contains("admin"), "\(refused)")
        let noReason = try await board.run("alice", ["plugin", "enable", Self.pay, "--env", "production", "--emergency"])
        #expect(noReason.status == 2 && noReason.stderr.hasPrefix("error: --emergency needs --reason"), "\(noReason)")
        #expect(try await sandbox.ok("change", "list").stdout == "No change request yet.\n")
        let asked = try await board.ok("dave", "plugin", "enable", Self.pay, "--env", "production")
        #expect(asked.stdout.hasPrefix("change request 1 opened: "), "\(asked)")
        #expect(try await Self.payEnabled(sandbox) == false)

        let emergency = try await board.ok(
            "alice", "plugin", "enable", Self.pay, "--env", "production", "--emergency", "--reason", "INC-7: checkout is down")
        #expect(
            emergency.stdout
                == "change request 2 applied as an emergency: plugin enable \(Self.pay) in production; another admin must acknowledge it (plugboard change acknowledge 2)\n",
            "\(emergency)")
        #expect(try await Self.payEnabled(sandbox))
        let listed = try await sandbox.ok("change", "list").stdout
        #expect(listed.contains("applied (emergency)"), "\(listed)")
        #expect(
            try await sandbox.ok("change", "show", "2").stdout.contains(
                "not acknowledged yet: another admin runs plugboard change acknowledge 2"))

        let own = try await board.run("alice", ["change", "acknowledge", "2"])
        #expect(own.status == 1 && own.stderr.contains("alice applied emergency change 2; another admin must acknowledge it"), "\(own)")
        let notAdmin = try await board.run("dave", ["change", "acknowledge", "2"])
        #expect(notAdmin.status == 1, "\(notAdmin)")
        let acknowledged = try await board.ok("bob", "change", "acknowledge", "2")
        #expect(acknowledged.stdout == "change request 2 acknowledged by bob\n", "\(acknowledged)")
        let shown = try await sandbox.ok("change", "show", "2").stdout
        #expect(shown.contains("acknowledged ") && shown.contains(" by bob") && !shown.contains("not acknowledged"), "\(shown)")

        let rows = try await AuditRows.read(sandbox).filter { $0.targetID == "2" }
        #expect(
            rows.map { "\($0.actor) \($0.action) \($0.outcome)" } == [
                "alice change.emergency ok", "alice change.acknowledge refused", "dave change.acknowledge refused",
                "bob change.acknowledge ok",
            ], "\(rows)")
        let reason = try await sandbox.boardFile.string("SELECT reason FROM audit_log WHERE action = 'change.emergency'")
        #expect(reason == "INC-7: checkout is down")
        try await sandbox.ok("audit", "verify")
    }

    @Test func throughTheAPIAProtectedChangeIsAcceptedWithItsNumberAndAStopIsApplied() async throws {
        let board = try await ProtectedBoard.start()
        defer { Task { await board.stop() } }
        let http = try LoopbackHTTP(url: board.served.url)
        let alice = try #require(board.tokens["alice"])
        let opened = try await http.post("/api/admin/plugin.enable", json: ["id": Self.pay, "env": "production"], token: alice)
        #expect(opened.status == 202 && opened.headers["plugboard-change-request"] == "1", "\(opened)")
        #expect(opened.object?["state"] as? String == "open", "\(opened)")
        let kill = try await http.post("/api/admin/plugin.kill", json: ["id": Self.pay, "reason": "INC-8"], token: alice)
        #expect(kill.status == 200 && kill.headers["plugboard-change-request"] == nil, "\(kill)")
        #expect(try await board.sandbox.boardFile.int("SELECT count(*) FROM kill_switches WHERE revived_at IS NULL") == 1)
        let revive = try await http.post("/api/admin/plugin.revive", json: ["id": Self.pay], token: alice)
        #expect(revive.status == 202 && revive.headers["plugboard-change-request"] == "2", "\(revive)")
        #expect(try await board.sandbox.boardFile.int("SELECT count(*) FROM kill_switches WHERE revived_at IS NULL") == 1)
    }

    @Test func waitReturnsOnceTheRequestIsAppliedOrRejected() async throws {
        let board = try await ProtectedBoard.start()
        defer { Task { await board.stop() } }
        let sandbox = board.sandbox
        /// Waits until request `id` is on the board (the waiting command's stdout is a pipe: its lines come at its end).
        func opened(_ id: Int) async throws {
            try await eventually("change request \(id) opened", poll: .milliseconds(100)) {
                try await sandbox.boardFile.int("SELECT count(*) FROM change_requests WHERE id = ?", .integer(Int64(id))) == 1
            }
        }
        let waiting = try ChildProcess(
            Sandbox.binary, ["plugin", "enable", Self.pay, "--env", "production", "--wait", "--db", sandbox.board])
        try await opened(1)
        try await board.ok("alice", "change", "approve", "1")
        #expect(waiting.isRunning)
        try await board.ok("bob", "change", "approve", "1")
        #expect(await waiting.closeInput() == 0, "\(waiting.output) \(waiting.errorOutput)")
        #expect(
            waiting.output == [
                "change request 1 opened: plugin enable \(Self.pay) in production; needs 2 approvals", "change request 1 applied by bob",
            ],
            "\(waiting.output)")

        let rejected = try ChildProcess(
            Sandbox.binary, ["plugin", "pin", Self.pay, "1.1.0", "--env", "production", "--wait", "--db", sandbox.board])
        try await opened(2)
        try await board.ok("carol", "change", "reject", "2", "--reason", "pin after the freeze")
        #expect(await rejected.closeInput() == 1, "\(rejected.output) \(rejected.errorOutput)")
        #expect(rejected.output.last == "change request 2 rejected by carol", "\(rejected.output)")
        #expect(rejected.errorOutput.contains("change request 2 was rejected: pin after the freeze"), "\(rejected.errorOutput)")
    }
}
