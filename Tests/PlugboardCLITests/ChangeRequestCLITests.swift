import Foundation
import PlugboardTestSupport
import Testing

/// Change requests on a board file, as one operator meets them: in a protected environment a change that starts or
/// widens what runs opens a request and says so in one sentence; stops apply at once; the author cannot approve.
/// (Requests between several people, through their tokens, are in the process tests.)
@Suite("change requests on a board file (CLI)", .timeLimit(.hangGuard))
struct ChangeRequestCLITests {
    static let pay = "com.example.pay"

    /// A board with pay at 1.0.0 and 1.1.0 and the flag checkout.new-flow, pay enabled and the flag on in production
    /// before `policy set --env production --approvals 2`.
    static func protectedBoard() async throws -> Sandbox {
        let sandbox = try await Sandbox.withBoard([manifest(pay, "1.0.0"), manifest(pay, "1.1.0")])
        try await sandbox.ok("flag", "create", "checkout.new-flow")
        try await sandbox.ok("plugin", "enable", pay, "--env", "production")
        try await sandbox.ok("flag", "enable", "checkout.new-flow", "--env", "production")
        let policy = try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "2")
        #expect(
            policy.stdout
                == "Set the approval policy of production: a change that starts or widens what runs there needs 2 approvals by other people.\n"
        )
        return sandbox
    }

    /// The rows of the plug-in in production: enabled and pinned version.
    static func payInProduction(_ sandbox: Sandbox) async throws -> String {
        let rows = try await sandbox.boardFile.rows(
            "SELECT enabled, coalesce(pinned_version, '-') AS pin FROM plugin_environments WHERE plugin_id = ? AND environment = 'production'",
            .text(pay))
        return rows.map { "\($0["enabled"]?.int ?? -1) \($0["pin"]?.string ?? "?")" }.joined()
    }

    @Test func aWideningChangeOpensARequestThatListAndShowDescribe() async throws {
        let sandbox = try await Self.protectedBoard()
        let before = try await Self.payInProduction(sandbox)
        let pin = try await sandbox.run(["plugin", "pin", Self.pay, "1.1.0", "--env", "production"])
        #expect(pin.status == 0 && pin.stderr.isEmpty, "\(pin)")
        #expect(
            pin.stdout == "change request 1 opened: plugin pin \(Self.pay) 1.1.0 in production; needs 2 approvals\n", "\(pin)")
        #expect(try await Self.payInProduction(sandbox) == before)

        let json = try await sandbox.ok("flag", "rollout", "checkout.new-flow", "25", "--env", "production", "--json")
        let object = try #require(try json.json() as? [String: Any])
        #expect(object["id"] as? Int == 2 && object["state"] as? String == "open", "\(json)")
        #expect((object["message"] as? String)?.hasPrefix("change request 2 opened: flag rollout checkout.new-flow") == true, "\(json)")

        let list = try await sandbox.ok("change", "list").stdout.split(separator: "\n").map(String.init)
        #expect(list.count == 3 && list[0].hasPrefix("ID  STATE"), "\(list)")
        #expect(list[1].hasPrefix("2   open   flag rollout checkout.new-flow") && list[1].contains("root  0/2"), "\(list)")
        #expect(list[2].hasPrefix("1   open   plugin pin \(Self.pay) 1.1.0 in production"), "\(list)")
        #expect(try await sandbox.ok("change", "list", "--state", "applied").stdout == "No change request is applied.\n")

        let show = try await sandbox.ok("change", "show", "1").stdout
        #expect(show.hasPrefix("change request 1: plugin pin \(Self.pay) 1.1.0 in production\n  state open; opened "), "\(show)")
        #expect(show.contains("needs 2 approvals; has 0 that count"), "\(show)")
        // Every row it would change, before and after.
        let row = try #require(show.split(separator: "\n").first { $0.hasPrefix("plugin.pin") }, "\(show)")
        #expect(row.contains(#""enabled":true,"pinned_version":null}"#) && row.contains(#""pinned_version":"1.1.0""#), "\(row)")
        let shown = try #require(try await sandbox.ok("change", "show", "1", "--json").json() as? [String: Any])
        #expect(shown["state"] as? String == "open" && shown["author"] as? String == "root" && shown["required"] as? Int == 2)

        let opened = try await sandbox.boardFile.strings(
            "SELECT target_id || ' ' || json_extract(after_json, '$.operation') FROM audit_log WHERE action = 'change.open' ORDER BY seq")
        #expect(opened == ["1 plugin.pin", "2 flag.rollout"], "\(opened)")
        try await sandbox.ok("audit", "verify")
    }

    @Test func theAuthorCannotApproveAndNothingAppliesBeforeItsApprovals() async throws {
        let sandbox = try await Self.protectedBoard()
        try await sandbox.ok("plugin", "pin", Self.pay, "1.1.0", "--env", "production")
        let before = try await Self.payInProduction(sandbox)
        let approve = try await sandbox.run(["change", "approve", "1"])
        #expect(approve.status == 1 && approve.stdout.isEmpty, "\(approve)")
        #expect(approve.stderr == "error: root opened change request 1 and cannot approve it; another person must\n", "\(approve)")
        let apply = try await sandbox.run(["change", "apply", "1"])
        #expect(
            apply.status == 1 && apply.stderr == "error: change request 1 has 0 of the 2 approvals it needs; nothing was changed\n",
            "\(apply)")
        let missing = try await sandbox.run(["change", "approve", "7"])
        #expect(missing.status == 1 && missing.stderr.contains("there is no change request 7"), "\(missing)")
        let bad = try await sandbox.run(["change", "approve", "x"])
        #expect(bad.status == 2 && bad.stderr.contains("'x' is not a change request number"), "\(bad)")
        #expect(try await Self.payInProduction(sandbox) == before)
        #expect(try await sandbox.boardFile.int("SELECT count(*) FROM change_approvals") == 0)
        #expect(try await sandbox.ok("change", "list", "--state", "open").stdout.contains("0/2"))
    }

    @Test func rejectWithAReasonAndCancelByTheAuthorCloseItForGood() async throws {
        let sandbox = try await Self.protectedBoard()
        try await sandbox.ok("plugin", "pin", Self.pay, "1.1.0", "--env", "production")
        try await sandbox.ok("flag", "rollout", "checkout.new-flow", "10", "--env", "production")
        let noReason = try await sandbox.run(["change", "reject", "1"])
        #expect(noReason.status == 2, "\(noReason)")
        let reject = try await sandbox.run(["change", "reject", "1", "--reason", "not during the freeze"])
        #expect(reject.status == 0 && reject.stdout == "change request 1 rejected by root: not during the freeze\n", "\(reject)")
        let again = try await sandbox.run(["change", "approve", "1"])
        #expect(again.status == 1 && again.stderr.contains("change request 1 is rejected"), "\(again)")
        let apply = try await sandbox.run(["change", "apply", "1"])
        #expect(apply.status == 1 && apply.stderr.contains("change request 1 is rejected"), "\(apply)")

        let cancel = try await sandbox.run(["change", "cancel", "2"])
        #expect(cancel.status == 0 && cancel.stdout == "change request 2 cancelled by root\n", "\(cancel)")
        let twice = try await sandbox.run(["change", "cancel", "2"])
        #expect(twice.status == 1 && twice.stderr.contains("change request 2 is cancelled"), "\(twice)")
        let listed = try await sandbox.ok("change", "list").stdout
        #expect(listed.contains("2   cancelled") && listed.contains("1   rejected"), "\(listed)")
        #expect(try await sandbox.ok("change", "show", "1").stdout.contains("rejected ") == true)
        #expect(try await sandbox.ok("change", "show", "1").stdout.contains("by root: not during the freeze"))
        let rows = try await sandbox.boardFile.strings(
            "SELECT action || ' ' || target_id || ' ' || coalesce(reason, '-') FROM audit_log WHERE action IN ('change.reject', 'change.cancel') AND outcome = 'ok' ORDER BY seq"
        )
        #expect(rows == ["change.reject 1 not during the freeze", "change.cancel 2 -"], "\(rows)")
        #expect(try await Self.payInProduction(sandbox) == "1 -")
        try await sandbox.ok("audit", "verify")
    }

    @Test func stopsInAProtectedEnvironmentApplyAtOnce() async throws {
        let sandbox = try await Self.protectedBoard()
        let kill = try await sandbox.ok("plugin", "kill", Self.pay, "--reason", "INC-4")
        #expect(kill.stdout.hasPrefix("Killed \(Self.pay)"), "\(kill)")
        let disable = try await sandbox.ok("plugin", "disable", Self.pay, "--env", "production")
        #expect(!disable.stdout.contains("change request"), "\(disable)")
        let flag = try await sandbox.ok("flag", "disable", "checkout.new-flow", "--env", "production")
        #expect(!flag.stdout.contains("change request"), "\(flag)")
        let yank = try await sandbox.ok("plugin", "yank", Self.pay, "1.0.0", "--reason", "broken")
        #expect(!yank.stdout.contains("change request"), "\(yank)")
        #expect(try await Self.payInProduction(sandbox) == "0 -")
        #expect(try await sandbox.boardFile.int("SELECT count(*) FROM kill_switches WHERE revived_at IS NULL") == 1)
        #expect(
            try await sandbox.boardFile.int(
                "SELECT enabled FROM flag_environments WHERE flag_name = 'checkout.new-flow' AND environment = 'production'") == 0)
        #expect(try await sandbox.ok("change", "list").stdout == "No change request yet.\n")
        // Scheduling or an emergency make no sense for a stop: its command has no such options.
        let scheduled = try await sandbox.run(["plugin", "kill", Self.pay, "--reason", "x", "--at", "2030-01-01T00:00:00Z"])
        #expect(scheduled.status == 2, "\(scheduled)")
        try await sandbox.ok("audit", "verify")
    }

    @Test func boardWideChangesAreProtectedWhenAnyEnvironmentIs() async throws {
        let key = Data(repeating: 7, count: 32).base64EncodedString()
        // No environment protected: revive and signer add apply at once.
        let open = try await Sandbox.withBoard([manifest(Self.pay)])
        try await open.ok("plugin", "kill", Self.pay, "--reason", "x")
        #expect(!(try await open.ok("plugin", "revive", Self.pay).stdout.contains("change request")))
        #expect(!(try await open.ok("signer", "add", "--all", key).stdout.contains("change request")))

        let sandbox = try await Self.protectedBoard()
        try await sandbox.ok("plugin", "kill", Self.pay, "--reason", "x")
        let revive = try await sandbox.ok("plugin", "revive", Self.pay)
        #expect(revive.stdout == "change request 1 opened: plugin revive \(Self.pay) (board-wide); needs 2 approvals\n", "\(revive)")
        #expect(try await sandbox.boardFile.int("SELECT count(*) FROM kill_switches WHERE revived_at IS NULL") == 1)
        let signer = try await sandbox.ok("signer", "add", "--all", key)
        #expect(
            signer.stdout.hasPrefix("change request 2 opened: signer add ") && signer.stdout.hasSuffix("(board-wide); needs 2 approvals\n"),
            "\(signer)")
        #expect(try await sandbox.boardFile.int("SELECT count(*) FROM signers") == 0)
        // The unprotected environment waits for nobody.
        let staging = try await sandbox.ok("plugin", "enable", Self.pay, "--env", "staging")
        #expect(!staging.stdout.contains("change request"), "\(staging)")
        let at = try await sandbox.run(["plugin", "enable", Self.pay, "--env", "default", "--at", "2030-01-01T00:00:00Z"])
        #expect(at.status == 1 && at.stderr.contains("needs no approvals, so it is applied at once"), "\(at)")
    }

    @Test func looseningThePolicyIsARequestAndTighteningAppliesAtOnce() async throws {
        let sandbox = try await Self.protectedBoard()
        let tighter = try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "3")
        #expect(tighter.stdout.hasPrefix("Set the approval policy of production: "), "\(tighter)")
        for (approvals, id) in [("1", 1), ("0", 2)] {
            let looser = try await sandbox.ok("policy", "set", "--env", "production", "--approvals", approvals)
            #expect(
                looser.stdout == "change request \(id) opened: policy set --approvals \(approvals) in production; needs 3 approvals\n",
                "\(looser)")
        }
        #expect(try await sandbox.boardFile.int("SELECT approvals FROM approval_policies WHERE environment = 'production'") == 3)
        // Another environment's policy is not protected by production's.
        try await sandbox.ok("policy", "set", "--env", "staging", "--approvals", "1")
        let staging = try await sandbox.ok("policy", "set", "--env", "staging", "--approvals", "0")
        #expect(staging.stdout.hasPrefix("change request 3 opened: policy set --approvals 0 in staging; needs 1 approval\n"), "\(staging)")
    }

    @Test func anEmergencyNeedsAReasonIsAuditedAndShowsUntilAcknowledged() async throws {
        let sandbox = try await Self.protectedBoard()
        let noReason = try await sandbox.run(["plugin", "pin", Self.pay, "1.1.0", "--env", "production", "--emergency"])
        #expect(
            noReason.status == 2 && noReason.stderr.hasPrefix("error: --emergency needs --reason: say why it cannot wait\n"), "\(noReason)")
        let both = try await sandbox.run(
            ["plugin", "pin", Self.pay, "1.1.0", "--env", "production", "--emergency", "--reason", "x", "--at", "2030-01-01T00:00:00Z"])
        #expect(both.status != 0, "\(both)")
        #expect(try await Self.payInProduction(sandbox) == "1 -")

        let applied = try await sandbox.ok(
            "plugin", "pin", Self.pay, "1.1.0", "--env", "production", "--emergency", "--reason", "INC-9: 1.0.0 leaks")
        #expect(
            applied.stdout
                == "change request 1 applied as an emergency: plugin pin \(Self.pay) 1.1.0 in production; another admin must acknowledge it (plugboard change acknowledge 1)\n",
            "\(applied)")
        #expect(try await Self.payInProduction(sandbox) == "1 1.1.0")
        #expect(try await sandbox.ok("change", "list").stdout.contains("1   applied (emergency)"))
        #expect(try await sandbox.ok("change", "show", "1").stdout.contains("not acknowledged yet"))
        let own = try await sandbox.run(["change", "acknowledge", "1"])
        #expect(own.status == 1 && own.stderr == "error: root applied emergency change 1; another admin must acknowledge it\n", "\(own)")
        let rows = try await sandbox.boardFile.strings(
            "SELECT action || ' ' || coalesce(reason, '-') FROM audit_log WHERE seq > (SELECT max(seq) FROM audit_log WHERE action = 'policy.set') AND outcome = 'ok' ORDER BY seq"
        )
        #expect(rows == ["plugin.pin -", "change.emergency INC-9: 1.0.0 leaks"], "\(rows)")
        try await sandbox.ok("audit", "verify")
    }

    /// `Tools/Scripts/audit-verify`, the auditor's script, proves the tables of change requests as `audit verify` does.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3"))
    func theAuditorsScriptAgreesOnABoardWithChangeRequests() async throws {
        let sandbox = try await Self.protectedBoard()
        try await sandbox.ok("plugin", "pin", Self.pay, "1.1.0", "--env", "production")
        try await sandbox.ok("change", "reject", "1", "--reason", "no")
        try await sandbox.ok("plugin", "unpin", Self.pay, "--env", "production", "--emergency", "--reason", "INC-2")
        let verify = try await sandbox.ok("audit", "verify").stdout
        let script = try await sandbox.run([ChainForgery.script, sandbox.board], db: false, executable: "/usr/bin/python3")
        #expect(script.status == 0 && script.stdout.hasPrefix("intact: "), "\(script)")
        let rows = try #require(script.stdout.split(separator: ",").dropFirst().first?.split(separator: " ").first, "\(script)")
        #expect(verify.contains("the board's \(rows) rows of policy match it"), "script: \(script.stdout) verify: \(verify)")
    }
}
