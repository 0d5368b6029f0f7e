import Crypto
import Foundation
import PlugboardModel
import PlugboardTestSupport
import Testing

/// Signed approvals as operators and hosts use them: production needs 2 signed approvals; alice opens a request through
/// `plugboard serve --admin`, bob and carol approve it with their keys from their machines (`change approve --key`,
/// `--server`), and hosts of the board file and of the served board load the plug-in. An enablement that lacks the
/// signatures — an admin's emergency, or rows written by hand with the audit chain and the state proof recomputed by
/// the board's own code — is refused with the reason `unapproved`: by every host when the signatures are missing or
/// made for another change, and by hosts pinned to the approvers' keys when the writer registered keys of their own.
@Suite(
    "signed approvals a host checks (processes)", .timeLimit(.hangGuard), .serialized,
    .enabled(if: canSwitchUser, "needs root and setpriv: bob and carol are OS users of their own"))
struct SignedApprovalTests {
    static let pay = "com.example.pay"
    static let other = "com.example.other"

    /// A board whose production needs 2 signed approvals, served with `--admin`, where alice (an admin) opened the
    /// enablement of pay and bob and carol approved it with their keys.
    struct Approved {
        let served: OperationsAPITests.Served
        let keys: [String: (file: String, publicKey: String)]
        let hostsToken: String
        /// alice's, bob's and carol's access tokens.
        let tokens: [String: String]
        var sandbox: Sandbox { served.sandbox }

        /// The options that pin a test host to bob's and carol's keys, needing both.
        var pinned: [String] {
            ["--approver-key", keys["bob"]!.publicKey, "--approver-key", keys["carol"]!.publicKey, "--approvals", "2"]
        }
    }

    static func approved() async throws -> Approved {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        try await sandbox.ok(
            "plugin", "register", sandbox.write("pay.json", manifest(pay)), sandbox.write("other.json", manifest(other)))
        for person in ["alice", "bob", "carol"] { try await sandbox.ok("admin", "add", person) }
        var keys: [String: (file: String, publicKey: String)] = [:]
        for person in ["bob", "carol", "mallory"] {
            let file = sandbox.root.appendingPathComponent("\(person).key").path
            let made = try #require(try await sandbox.ok("signing-key", "generate", "--out", file, "--json").json() as? [String: Any])
            keys[person] = (file, try #require(made["publicKey"] as? String))
        }
        for person in ["bob", "carol"] { try await sandbox.ok("approver", "add", person, keys[person]!.publicKey) }
        // production exists once a plug-in was enabled there; its hosts token is made before it is protected.
        try await sandbox.ok("plugin", "enable", other, "--env", "production")
        try await sandbox.ok("plugin", "disable", other, "--env", "production")
        let created = try await sandbox.ok("token", "create", "--name", "hosts", "--for", "hosts", "--env", "production", "--json")
        let hostsToken = try #require((try created.json() as? [String: Any])?["token"] as? String)
        var tokens: [String: String] = [:]
        // alice's token is the board maker's (root's); bob and carol each made theirs as an OS user of their own.
        let made = try await sandbox.ok("access-token", "create", "--principal", "alice", "--name", "laptop", "--json")
        tokens["alice"] = try #require((try made.json() as? [String: Any])?["token"] as? String)
        for (person, uid) in [("bob", UInt32(4312)), ("carol", UInt32(4313))] {
            tokens[person] = try await sandbox.personalToken(for: person, uid: uid, name: "laptop")
        }
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "2", "--signed-approvals", "require")
        let served = try await OperationsAPITests.serve(sandbox)

        let opened = try await served.run(["plugin", "enable", pay, "--env", "production", "--json"], token: tokens["alice"])
        #expect(opened.status == 0, "\(opened)")
        let request = try #require(try opened.json() as? [String: Any])
        let id = try #require(request["id"] as? Int)
        #expect(request["state"] as? String == "open", "\(request)")

        let bob = try await served.run(["change", "approve", String(id), "--key", keys["bob"]!.file], token: tokens["bob"])
        #expect(bob.status == 0 && bob.stdout.contains("1 of 2 approvals"), "\(bob)")
        // Unsigned, or signed with another principal's key: refused, and nothing counts.
        let unsigned = try await served.run(["change", "approve", String(id)], token: tokens["carol"])
        #expect(unsigned.status == 1 && unsigned.stderr.contains("needs signed approvals"), "\(unsigned)")
        let borrowed = try await served.run(["change", "approve", String(id), "--key", keys["bob"]!.file], token: tokens["carol"])
        #expect(borrowed.status == 1 && borrowed.stderr.contains("is registered for bob, not carol"), "\(borrowed)")
        let carol = try await served.run(["change", "approve", String(id), "--key", keys["carol"]!.file], token: tokens["carol"])
        #expect(carol.status == 0 && carol.stdout.contains("applied"), "\(carol)")
        return Approved(served: served, keys: keys, hostsToken: hostsToken, tokens: tokens)
    }

    /// Runs a host of the board file in production until it started; its output lines.
    static func fileHost(_ sandbox: Sandbox, _ options: [String] = []) async throws -> [String] {
        let host = try ChildProcess(
            OperationsAPITests.hostBinary, ["--db", sandbox.board, "--env", "production", "--plugins", "\(pay),\(other)"] + options)
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "\(host.output) \(host.errorOutput)")
        _ = await host.closeInput()
        return host.output
    }

    /// Runs a host of the served board in production until it started; its output lines.
    static func servedHost(_ approved: Approved, _ options: [String] = []) async throws -> [String] {
        let host = try RemoteHostTests().host(
            approved.served.url, approved.hostsToken, key: try await approved.sandbox.boardKey(),
            cache: approved.sandbox.root.appendingPathComponent("cache-\(UUID().uuidString.prefix(6))").path, plugins: [pay, other],
            options: ["--env", "production"] + options)
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "\(host.output) \(host.errorOutput)")
        _ = await host.closeInput()
        return host.output
    }

    static func loaded(_ lines: [String], _ id: String) -> Bool {
        lines.contains { $0.contains("\"event\":\"loaded\"") && $0.contains("\"plugin\":\"\(id)\"") }
    }

    static func unapproved(_ lines: [String], _ id: String) -> String? {
        lines.first {
            $0.contains("\"event\":\"skipped\"") && $0.contains("\"plugin\":\"\(id)\"") && $0.contains("\"reason\":\"unapproved\"")
        }
    }

    @Test func twoSignedApprovalsEnableAPluginThatPinnedHostsLoad() async throws {
        let approved = try await Self.approved()
        let show = try await approved.sandbox.ok("change", "show", "1", "--json")
        let request = try #require(try show.json() as? [String: Any])
        #expect(request["state"] as? String == "applied", "\(request)")
        try await approved.sandbox.ok("audit", "verify")
        for options in [approved.pinned, []] {
            let file = try await Self.fileHost(approved.sandbox, options)
            #expect(Self.loaded(file, Self.pay), "\(file)")
            let served = try await Self.servedHost(approved, options)
            #expect(Self.loaded(served, Self.pay), "\(served)")
        }
        // The approver keys are listed, and revoking one is a stop: hosts that trust the board stop counting it.
        let list = try await approved.sandbox.ok("approver", "list")
        #expect(list.stdout.contains("bob") && list.stdout.contains("carol"), "\(list)")
        let bobID = SigningKeys.keyID(publicKey: try #require(Data(base64Encoded: approved.keys["bob"]!.publicKey)))
        try await approved.sandbox.ok("approver", "revoke", bobID, "--reason", "laptop lost")
        let afterRevoke = try await Self.fileHost(approved.sandbox)
        #expect(Self.unapproved(afterRevoke, Self.pay) != nil, "\(afterRevoke)")
        // A host pinned to bob's and carol's keys decides by its own anchor.
        let pinnedAfterRevoke = try await Self.fileHost(approved.sandbox, approved.pinned)
        #expect(Self.loaded(pinnedAfterRevoke, Self.pay), "\(pinnedAfterRevoke)")
        // Signed approvals enable once: disabled (a stop, at once) and enabled again as an emergency, pay lacks them.
        try await approved.sandbox.ok("plugin", "disable", Self.pay, "--env", "production")
        try await approved.sandbox.ok("plugin", "enable", Self.pay, "--env", "production", "--emergency", "--reason", "INC-8")
        let again = try await Self.fileHost(approved.sandbox, approved.pinned)
        #expect(Self.unapproved(again, Self.pay)?.contains("without signed approvals") == true, "\(again)")
        await approved.served.stop()
    }

    @Test func aChangeWithoutTheSignaturesIsRefusedEvenWhenTheBoardIsConsistent() async throws {
        let approved = try await Self.approved()
        let sandbox = approved.sandbox

        // A writer enables other by hand (taking in its release), with the board's own code recomputing the audit chain and
        // the state proof: `audit verify` holds, hosts prove the board, and the enablement carries no signature.
        try await Self.rewrite(
            sandbox,
            [
                "UPDATE plugin_environments SET enabled = 1, approved_version = '1.0.0' WHERE plugin_id = '\(Self.other)' AND environment = 'production'"
            ])
        try await sandbox.ok("audit", "verify")
        for options in [approved.pinned, []] {
            let file = try await Self.fileHost(sandbox, options)
            #expect(Self.loaded(file, Self.pay) && !Self.loaded(file, Self.other), "\(file)")
            let line = try #require(Self.unapproved(file, Self.other), "\(file)")
            #expect(line.contains("was enabled in production without signed approvals; production requires 2 signed approvals"), "\(line)")
            let served = try await Self.servedHost(approved, options)
            #expect(Self.loaded(served, Self.pay) && Self.unapproved(served, Self.other) != nil, "\(served)")
        }

        // A writer copies pay's signatures onto other's enablement, with the board's own code recomputing the audit chain
        // and the state proof: `audit verify` holds, and no host counts signatures over another change.
        let payRow = try #require(try await Self.enablementRow(sandbox, Self.pay))
        try await Self.rewrite(
            sandbox,
            [
                """
                INSERT INTO enablement_approvals (plugin_id, environment, change_id, opened_seq, operation, body, digest, signatures)
                VALUES ('\(Self.other)', 'production', 99, \(payRow.openedSeq), 'plugin.enable', '\(payRow.body)', '\(payRow.digest)', '\(payRow.signatures)')
                """
            ])
        try await sandbox.ok("audit", "verify")
        for options in [approved.pinned, []] {
            let file = try await Self.fileHost(sandbox, options)
            #expect(Self.unapproved(file, Self.other)?.contains("are for another change") == true, "\(file)")
        }
        // …or rewrites the body to name other, keeping the signatures: the digest a host recomputes is not the one signed.
        let otherBody = payRow.body.replacingOccurrences(of: Self.pay, with: Self.other)
        try await Self.rewrite(sandbox, ["UPDATE enablement_approvals SET body = '\(otherBody)' WHERE plugin_id = '\(Self.other)'"])
        try await sandbox.ok("audit", "verify")
        for options in [approved.pinned, []] {
            let file = try await Self.fileHost(sandbox, options)
            #expect(Self.unapproved(file, Self.other)?.contains("carries 0 valid signed approvals") == true, "\(file)")
        }

        // A writer registers a key of their own as a second approver and signs other's enablement with it and with a
        // key they registered for carol: a host that trusts the board's approver rows counts them (the audit log names
        // the writer); a host pinned to bob's and carol's keys does not.
        let mallory = try ApproverKey(file: approved.keys["mallory"]!.file)
        let second = ApproverKey()
        let digest = ApprovalStatement.changeDigest(operation: "plugin.enable", body: otherBody)
        let moment = ApprovalMoment(changeID: 99, openedSeq: Int64(payRow.openedSeq))
        let signatures =
            #"[{"key_id":"\#(mallory.keyID)","signature":"\#(try mallory.sign(digest, moment: moment))"},{"key_id":"\#(second.keyID)","signature":"\#(try second.sign(digest, moment: moment))"}]"#
        try await Self.rewrite(
            sandbox,
            [
                "INSERT INTO approvers (key_id, principal, public_key, added_at, added_by) VALUES ('\(mallory.keyID)', 'mallory', '\(mallory.publicKey)', '2026-01-01T00:00:00.000Z', 'root')",
                "INSERT INTO approvers (key_id, principal, public_key, added_at, added_by) VALUES ('\(second.keyID)', 'carol-2', '\(second.publicKey)', '2026-01-01T00:00:00.000Z', 'root')",
                "UPDATE enablement_approvals SET signatures = '\(signatures)', digest = '\(digest)' WHERE plugin_id = '\(Self.other)'",
            ])
        try await sandbox.ok("audit", "verify")
        let trusting = try await Self.fileHost(sandbox)
        #expect(Self.loaded(trusting, Self.other), "a host without an anchor trusts the board's approver rows: \(trusting)")
        let pinned = try await Self.fileHost(sandbox, approved.pinned)
        #expect(Self.loaded(pinned, Self.pay), "\(pinned)")
        let line = try #require(Self.unapproved(pinned, Self.other), "\(pinned)")
        #expect(
            line.contains("carries 0 valid signed approvals; production requires 2 signed approvals by approver keys this host trusts"),
            "\(line)")
        let served = try await Self.servedHost(approved, approved.pinned)
        #expect(Self.loaded(served, Self.pay) && Self.unapproved(served, Self.other) != nil, "\(served)")
        await approved.served.stop()
    }

    /// After a disable, the same enablement is asked for again and approved with bob's and carol's signatures kept from
    /// the first request (read from `change_approvals`), through the operations API: refused, since what they signed
    /// binds the first request and the moment it was opened. A writer who puts the first enablement back behind the log
    /// (audit chain and state proof recomputed) enables nothing either: it was opened before the last disable.
    @Test func signaturesKeptFromBeforeADisableEnableNothing() async throws {
        let approved = try await Self.approved()
        let sandbox = approved.sandbox
        let first = try #require(try await Self.enablementRow(sandbox, Self.pay))
        let kept = try await sandbox.boardFile.strings(
            "SELECT principal || ' ' || key_id || ' ' || signature FROM change_approvals WHERE change_id = 1 ORDER BY principal")
        #expect(kept.count == 2, "\(kept)")
        try await sandbox.ok("plugin", "disable", Self.pay, "--env", "production")

        let reopened = try await approved.served.run(
            ["plugin", "enable", Self.pay, "--env", "production", "--json"], token: approved.tokens["alice"])
        let id = try #require((try reopened.json() as? [String: Any])?["id"] as? Int, "\(reopened)")
        #expect(id == 2)
        for line in kept {
            let fields = line.split(separator: " ").map(String.init)
            let result = try await approved.served.run(
                ["change", "approve", String(id), "--key-id", fields[1], "--signature", fields[2]], token: approved.tokens[fields[0]])
            #expect(result.status == 1, "\(fields[0]): \(result)")
            #expect(
                result.stderr.contains("does not verify with the approver key \(fields[1]) over the approval of change request 2"),
                "\(fields[0]): \(result)")
        }
        #expect(try await sandbox.boardFile.int("SELECT count(*) FROM change_approvals WHERE change_id = 2") == 0)
        for options in [approved.pinned, []] {
            let file = try await Self.fileHost(sandbox, options)
            #expect(!Self.loaded(file, Self.pay), "\(file)")
            let served = try await Self.servedHost(approved, options)
            #expect(!Self.loaded(served, Self.pay), "\(served)")
        }

        // The first enablement written back, with pay enabled, by a writer who recomputes the chain and the proof.
        try await Self.rewrite(
            sandbox,
            [
                "UPDATE plugin_environments SET enabled = 1 WHERE plugin_id = '\(Self.pay)' AND environment = 'production'",
                """
                INSERT INTO enablement_approvals (plugin_id, environment, change_id, opened_seq, operation, body, digest, signatures)
                VALUES ('\(Self.pay)', 'production', 1, \(first.openedSeq), 'plugin.enable', '\(first.body)', '\(first.digest)', '\(first.signatures)')
                """,
            ])
        try await sandbox.ok("audit", "verify")
        for options in [approved.pinned, []] {
            let file = try await Self.fileHost(sandbox, options)
            #expect(!Self.loaded(file, Self.pay) && Self.unapproved(file, Self.pay) != nil, "\(file)")
        }
        await approved.served.stop()
    }

    /// One row of `enablement_approvals`, as text.
    static func enablementRow(_ sandbox: Sandbox, _ id: String) async throws
        -> (body: String, digest: String, signatures: String, openedSeq: Int)?
    {
        let file = sandbox.boardFile
        let query = "FROM enablement_approvals WHERE plugin_id = '\(id)'"
        guard let body = try await file.string("SELECT body \(query)"), let digest = try await file.string("SELECT digest \(query)"),
            let signatures = try await file.string("SELECT signatures \(query)"),
            let openedSeq = try await file.int("SELECT opened_seq \(query)")
        else { return nil }
        return (body, digest, signatures, openedSeq)
    }

    /// Writes `statements` in one change whose audit row and state proof Plugboard's own code computes, under an action
    /// name of the writer's choosing.
    static func rewrite(_ sandbox: Sandbox, _ statements: [String]) async throws {
        try ConsistentRewrite.apply(
            board: sandbox.board, statements, as: "root",
            audit: (action: .boardMigrate, targetType: "board", targetID: "board", environment: nil))
    }
}

/// An approver's key in the test: one the CLI wrote to a file, or a new one.
struct ApproverKey {
    let key: Curve25519.Signing.PrivateKey

    init() { key = Curve25519.Signing.PrivateKey() }

    /// The key of a file `plugboard signing-key generate` wrote (its second line is the base64 of the raw key).
    init(file: String) throws {
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        key = try Curve25519.Signing.PrivateKey(rawRepresentation: try #require(Data(base64Encoded: String(lines[1]))))
    }

    var publicKey: String { key.publicKey.rawRepresentation.base64EncodedString() }
    var keyID: String { SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation) }
    func sign(_ digest: String, moment: ApprovalMoment? = nil) throws -> String {
        try ApprovalStatement.sign(digest: digest, moment: moment, with: key)
    }
}
