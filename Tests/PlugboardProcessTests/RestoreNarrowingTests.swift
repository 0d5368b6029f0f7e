import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A restore never widens what runs or who may act compared with the board it replaces: it needs an admin of that
/// board, and carries every narrowing made there since the backup.
@Suite("a restore never widens the board it replaces", .timeLimit(.hangGuard), .serialized)
struct RestoreNarrowingTests {
    static let alpha = "com.example.alpha"
    static let beta = "com.example.beta"
    static let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    func path(_ sandbox: Sandbox, _ name: String) -> String { sandbox.root.appendingPathComponent(name).path }

    func carried(_ result: CLIResult, _ key: String = "carried") throws -> [String] {
        let report = try #require(try result.json() as? [String: Any])
        return (report[key] as? [[String: Any]] ?? []).map {
            "\($0["kind"] ?? "") \($0["target"] ?? "")\(($0["environment"] as? String).map { " in \($0)" } ?? "")"
        }
    }

    /// Lets the OS user nobody write the board and its folder, as a member of a board's group may.
    func shareWithNobody(_ sandbox: Sandbox) throws {
        chown(sandbox.root.path, 65534, 65534)
        for name in try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path) {
            chown(path(sandbox, name), 65534, 65534)
        }
    }

    @Test(
        "a writer of the board who is not its admin cannot replace it with a board of their own; the refusal is audited there",
        .enabled(if: canSwitchUser, "needs root and setpriv to act as another OS user"))
    func restoreNeedsAnAdminOfTheReplacedBoard() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        try await sandbox.ok("plugin", "kill", Self.alpha, "--reason", "incident")
        try shareWithNobody(sandbox)
        let own = path(sandbox, "own.sqlite")
        #expect(try await sandbox.run(["init", "--db", own], db: false, prefix: Self.asNobody).status == 0)
        let ownBackup = path(sandbox, "own-backup.sqlite")
        #expect(try await sandbox.run(["backup", "--db", own, "--to", ownBackup], db: false, prefix: Self.asNobody).status == 0)
        let before = try await sandbox.ok("plugin", "list", "--json").stdout
        let admins = try await sandbox.ok("admin", "list").stdout

        let refused = try await sandbox.run(["restore", "--from", ownBackup], prefix: Self.asNobody)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("nobody may not restore the board at \(sandbox.board): only a board admin may"), "\(refused)")
        #expect(refused.stderr.split(separator: "\n").count == 1 && refused.stdout.isEmpty, "\(refused)")
        #expect(try await sandbox.ok("plugin", "list", "--json").stdout == before)
        #expect(try await sandbox.ok("admin", "list").stdout == admins)
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path)
        #expect(!files.contains { $0.contains(".restore-") || $0.contains(".replaced-") }, "\(files)")
        let rows = try await sandbox.boardFile.rows("SELECT actor, action, outcome FROM audit_log ORDER BY seq DESC LIMIT 1")
        #expect(rows.first?["actor"]?.string == "nobody" && rows.first?["action"]?.string == "board.restore", "\(rows)")
        #expect(rows.first?["outcome"]?.string == "refused", "\(rows)")
        try await sandbox.ok("audit", "verify")
    }

    @Test(
        "an admin removed since the backup may not restore it, and an admin's restore does not re-admit them",
        .enabled(if: canSwitchUser, "needs root and setpriv to act as another OS user"))
    func removedAdminIsNotReadmitted() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        try await sandbox.ok("admin", "add", "nobody")
        let backup = path(sandbox, "backup.sqlite")
        try await sandbox.ok("backup", "--to", backup)
        try await sandbox.ok("admin", "remove", "nobody")
        try shareWithNobody(sandbox)

        let refused = try await sandbox.run(["restore", "--from", backup], prefix: Self.asNobody)
        #expect(refused.status == 1 && refused.stderr.contains("nobody may not restore the board"), "\(refused)")

        let restored = try await sandbox.ok("restore", "--from", backup, "--json")
        #expect(try carried(restored) == ["admin removal nobody"], "\(restored)")
        let admins = try await sandbox.ok("admin", "list").stdout
        #expect(!admins.contains("nobody"), "\(admins)")
        let again = try await sandbox.run(["plugin", "kill", Self.alpha, "--reason", "x"], prefix: Self.asNobody)
        #expect(again.status == 1, "the removed admin acts again: \(again)")
        try await sandbox.ok("audit", "verify")
    }

    @Test(
        "a file at the board's path that is not a board may be replaced only by the file's owner",
        .enabled(if: canSwitchUser, "needs root and setpriv to act as another OS user"))
    func unreadableBoardNeedsItsFilesOwner() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let backup = path(sandbox, "backup.sqlite")
        try await sandbox.ok("backup", "--to", backup)
        try shareWithNobody(sandbox)
        let own = path(sandbox, "own.sqlite")
        #expect(try await sandbox.run(["init", "--db", own], db: false, prefix: Self.asNobody).status == 0)
        let ownBackup = path(sandbox, "own-backup.sqlite")
        #expect(try await sandbox.run(["backup", "--db", own, "--to", ownBackup], db: false, prefix: Self.asNobody).status == 0)
        for suffix in ["-wal", "-shm"] { unlink(sandbox.board + suffix) }
        try Data(String(repeating: "damaged ", count: 4096).utf8).write(to: URL(fileURLWithPath: sandbox.board))
        chown(sandbox.board, 0, 0)
        chmod(sandbox.board, 0o666)

        let refused = try await sandbox.run(["restore", "--from", ownBackup], prefix: Self.asNobody)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("cannot be read as a board") && refused.stderr.contains("only the owner of its file"), "\(refused)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.board)).starts(with: Data("damaged".utf8)))

        let restored = try await sandbox.ok("restore", "--from", backup)
        #expect(restored.stdout.contains("could not be read"), "\(restored.stdout)")
        try await sandbox.ok("audit", "verify")
    }

    @Test("disables, a raised signature policy, removed admins and owners, gate flags switched off and aborted rollouts stay narrowed")
    func narrowingsAreCarriedForward() async throws {
        let sandbox = try await Sandbox.withBoard([
            manifest(Self.alpha), manifest(Self.alpha, "1.1.0"), manifest(Self.beta, "1.0.0", #""gate":"beta.gate""#),
        ])
        try await sandbox.ok("plugin", "enable", Self.alpha)
        try await sandbox.ok("rollout", "start", Self.alpha, "1.1.0", "--steps", "10,100", "--every", "1h")
        try await sandbox.ok("plugin", "enable", Self.beta)
        try await sandbox.ok("flag", "create", "beta.gate")
        try await sandbox.ok("flag", "enable", "beta.gate")
        try await sandbox.ok("policy", "set", "--env", "production", "--signatures", "warn")
        try await sandbox.ok("admin", "add", "carol")
        try await sandbox.ok("owner", "add", Self.alpha, "bob")
        try await sandbox.ok("owner", "add", Self.alpha, "dave")
        let backup = path(sandbox, "backup.sqlite")
        try await sandbox.ok("backup", "--to", backup)

        try await sandbox.ok("plugin", "disable", Self.alpha)
        try await sandbox.ok("policy", "set", "--env", "production", "--signatures", "require")
        try await sandbox.ok("admin", "remove", "carol")
        try await sandbox.ok("owner", "remove", Self.alpha, "bob")
        try await sandbox.ok("owner", "add", Self.alpha, "dave", "--role", "maintainer")
        try await sandbox.ok("flag", "disable", "beta.gate")
        try await sandbox.ok("rollout", "abort", Self.alpha)

        let restored = try await sandbox.ok("restore", "--from", backup, "--json")
        #expect(
            try carried(restored) == [
                "disable \(Self.alpha) in default", "signature policy production in production", "admin removal carol",
                "owner removal \(Self.alpha)/bob", "owner demotion \(Self.alpha)/dave", "gate flag off beta.gate in default",
                "rollout abort \(Self.alpha)@1.1.0 in default",
            ], "\(restored)")
        let report = try #require(try restored.json() as? [String: Any])
        let first = try #require((report["carried"] as? [[String: Any]])?.first)
        #expect(
            first["made_by"] as? String == getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } && first["made_at"] is String,
            "\(first)")

        let list = try await sandbox.ok("plugin", "list", "--json").json() as? [[String: Any]] ?? []
        #expect(list.first { $0["id"] as? String == Self.alpha }?["enabled"] as? Bool == false, "\(list)")
        #expect(try await sandbox.ok("policy", "show").stdout.contains("require"))
        #expect(!(try await sandbox.ok("admin", "list").stdout.contains("carol")))
        let owners = try await sandbox.ok("owner", "list", Self.alpha).stdout
        #expect(!owners.contains("bob") && owners.contains("maintainer"), "\(owners)")
        let flags = try await sandbox.ok("flag", "list", "--json").json() as? [[String: Any]] ?? []
        #expect(flags.first { $0["name"] as? String == "beta.gate" }?["enabled"] as? Bool == false, "\(flags)")
        let rows = try await sandbox.ok("audit", "--json").stdout
        #expect(rows.components(separatedBy: "restore.carried-forward").count - 1 == 7, "\(rows)")
        let rollout = try await sandbox.ok("rollout", "status", Self.alpha).stdout
        #expect(rollout.contains("aborted"), "\(rollout)")
        try await sandbox.ok("audit", "verify")

        let human = try await sandbox.ok("restore", "--from", backup)
        #expect(human.stdout.contains("disable") && human.stdout.contains("\(Self.alpha) in default"), "\(human.stdout)")

        let host = try ChildProcess(
            Sandbox.builtExecutable("plugboard-test-host"),
            ["--db", sandbox.board, "--plugins", "\(Self.alpha),\(Self.beta)", "--poll-ms", "50"])
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "the host did not start: \(host.errorOutput)")
        #expect(await host.waitForLine { $0.contains("\"skipped\"") && $0.contains(Self.alpha) } != nil, "\(host.output)")
        #expect(await host.waitForLine { $0.contains("\"skipped\"") && $0.contains(Self.beta) } != nil, "\(host.output)")
        #expect(!host.output.contains { $0.contains("\"loaded\"") }, "\(host.output)")
        #expect(await host.closeInput() == 0)
    }

    @Test("without carrying forward, the stops not carried are named, and the narrowings are carried all the same")
    func withoutCarryForwardNamesWhatWasNotCarried() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        try await sandbox.ok("plugin", "enable", Self.alpha)
        let backup = path(sandbox, "backup.sqlite")
        try await sandbox.ok("backup", "--to", backup)
        try await sandbox.ok("plugin", "kill", Self.alpha, "--reason", "incident")
        try await sandbox.ok("plugin", "disable", Self.alpha)
        let restored = try await sandbox.ok("restore", "--from", backup, "--without-carry-forward", "--json")
        #expect(try carried(restored) == ["disable \(Self.alpha) in default"], "\(restored)")
        #expect(try carried(restored, "not_carried") == ["kill switch \(Self.alpha)"], "\(restored)")
        try await sandbox.ok("plugin", "enable", Self.alpha)
        try await sandbox.ok("plugin", "kill", Self.alpha, "--reason", "again")
        let human = try await sandbox.ok("restore", "--from", backup, "--without-carry-forward")
        #expect(human.stdout.contains("Not carried forward (--without-carry-forward)"), "\(human.stdout)")
        #expect(human.stdout.contains("kill switch") && human.stdout.contains("again"), "\(human.stdout)")
    }

    @Test("a gate flag cut to 0% since the backup stays at 0%: its strategies on the replaced board are carried")
    func gateFlagDefinitionIsCarriedForward() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.beta, "1.0.0", #""gate":"beta.gate""#)])
        try await sandbox.ok("plugin", "enable", Self.beta)
        try await sandbox.ok("flag", "create", "beta.gate")
        try await sandbox.ok("flag", "enable", "beta.gate")
        try await sandbox.ok("flag", "create", "other")
        try await sandbox.ok("flag", "enable", "other")
        let backup = path(sandbox, "backup.sqlite")
        try await sandbox.ok("backup", "--to", backup)
        try await sandbox.ok("flag", "rollout", "beta.gate", "0")
        try await sandbox.ok("flag", "rollout", "other", "0")
        let query = "SELECT flag_name, enabled, strategies_json, variants_json FROM flag_environments ORDER BY flag_name"
        let before = try await sandbox.boardFile.rows(query)

        let restored = try await sandbox.ok("restore", "--from", backup, "--json")
        #expect(try carried(restored) == ["gate flag definition beta.gate in default"], "\(restored)")
        let first = try #require((try restored.json() as? [String: Any])?["carried"] as? [[String: Any]]).first
        #expect(first?["made_at"] is String && first?["made_by"] is String, "\(String(describing: first))")
        let after = try await sandbox.boardFile.rows(query)
        func row(_ rows: [BoardSQL.Row], _ name: String) -> BoardSQL.Row? { rows.first { $0["flag_name"]?.string == name } }
        #expect(row(after, "beta.gate") == row(before, "beta.gate"), "\(after)")
        // A flag that gates nothing is the backup's.
        #expect(row(after, "other") != row(before, "other"), "\(after)")
        try await sandbox.ok("audit", "verify")
    }
    @Test("a restore keeps the replaced board's approvals and never brings back a request that ended there")
    func changeRequestsThatEndedStayEnded() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "1")
        let opened = try await sandbox.ok("plugin", "enable", Self.alpha, "--env", "production", "--at", "2030-01-01T00:00:00Z")
        #expect(
            opened.stdout.hasPrefix("change request 1 opened: plugin enable \(Self.alpha) in production; needs 1 approval"), "\(opened)")
        let backup = path(sandbox, "backup.sqlite")
        try await sandbox.ok("backup", "--to", backup)
        try await sandbox.ok("change", "cancel", "1")
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "3")

        let restored = try await sandbox.ok("restore", "--from", backup, "--json")
        let kinds = try carried(restored)
        #expect(
            kinds.contains("approval policy production in production") && kinds.contains("change request closed 1 in production"),
            "\(kinds)")
        let request = try #require(try await sandbox.ok("change", "show", "1", "--json").json() as? [String: Any])
        #expect(request["state"] as? String == "cancelled", "\(request)")
        #expect((request["close_reason"] as? String)?.contains("cancelled on the replaced board") == true, "\(request)")
        let policies = try await sandbox.ok("policy", "approvals").stdout
        #expect(policies.contains("production   3"), "\(policies)")
        try await sandbox.ok("audit", "verify")
    }

    @Test("a restore keeps who approves as narrow as on the replaced board: its approvers, and no member it removed")
    func whoApprovesStaysNarrowed() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        try await sandbox.ok("plugin", "enable", Self.alpha, "--env", "production")
        for name in ["alice", "bob"] { try await sandbox.ok("group", "add", "release", name) }
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "1")
        let backup = path(sandbox, "backup.sqlite")
        try await sandbox.ok("backup", "--to", backup)
        // Narrowed since: bob left the group, and only the group approves.
        try await sandbox.ok("group", "remove", "release", "bob")
        try await sandbox.ok("policy", "set", "--env", "production", "--approvers", "release")

        let restored = try await sandbox.ok("restore", "--from", backup, "--json")
        let kinds = try carried(restored)
        #expect(
            kinds.contains("group member removal release/bob") && kinds.contains("approvers production in production"), "\(kinds)")
        let approvers = try await sandbox.boardFile.string("SELECT approvers FROM approval_policies WHERE environment = 'production'")
        #expect(approvers == "release")
        #expect(try await sandbox.boardFile.strings("SELECT principal FROM principal_groups ORDER BY 1") == ["alice"])
        try await sandbox.ok("audit", "verify")
    }
}

extension RestoreNarrowingTests {
    @Test("a restore never lets an account unlinked since the backup sign in again, nor brings back a group's mapping to a role")
    func identitiesStayNarrowed() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let issuer = "https://id.example.com"
        try await sandbox.ok("principal", "link", "alice", "--issuer", issuer, "--subject", "s-1")
        try await sandbox.ok("principal", "link", "bob", "--issuer", issuer, "--subject", "s-2")
        try await sandbox.ok("sso", "map-group", "ops", "--issuer", issuer, "--role", "admin")
        try await sandbox.ok("sso", "map-group", "dev", "--issuer", issuer, "--role", "maintainer", "--plugin", Self.alpha)
        let backup = path(sandbox, "backup.sqlite")
        try await sandbox.ok("backup", "--to", backup)
        // Narrowed since: alice's account unlinked, and ops no longer makes admins.
        try await sandbox.ok("principal", "unlink", "--issuer", issuer, "--subject", "s-1")
        try await sandbox.ok("sso", "unmap-group", "ops", "--issuer", issuer, "--role", "admin")

        let restored = try await sandbox.ok("restore", "--from", backup, "--json")
        let kinds = try carried(restored)
        #expect(
            kinds.contains("identity unlink s-1 at \(issuer)") && kinds.contains("group mapping removal group ops of \(issuer) → admin"),
            "\(kinds)")
        #expect(try await sandbox.boardFile.strings("SELECT subject || ' ' || principal FROM identities ORDER BY 1") == ["s-2 bob"])
        #expect(
            try await sandbox.boardFile.strings("SELECT group_name || ' ' || role FROM sso_group_roles ORDER BY 1") == ["dev maintainer"])
        let rows = try await sandbox.boardFile.rows(
            "SELECT target_id, after_json FROM audit_log WHERE action = 'restore.carried-forward' AND target_type = 'identity'")
        #expect(rows.count == 1 && rows.first?["after_json"]?.string?.contains("\"made_by\"") == true, "\(rows)")
        try await sandbox.ok("audit", "verify")
    }
}
