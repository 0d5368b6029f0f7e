import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `plugboard access-token`: people's tokens, each acting as one principal, created, listed and revoked as a user
/// would (the binary, its output, its exit code, the board afterwards).
@Suite("access tokens", .timeLimit(.hangGuard))
struct AccessTokenCLITests {
    @Test func aTokenIsShownOnceAndTheBoardKeepsOnlyItsHash() async throws {
        let sandbox = try await Sandbox.withBoard()
        let created = try await sandbox.ok("access-token", "create", "--principal", "alice", "--name", "laptop", "--json")
        let json = try #require(try created.json() as? [String: String])
        #expect(Set(json.keys) == ["name", "principal", "token"])
        #expect(json["principal"] == "alice" && json["name"] == "laptop")
        let secret = try #require(json["token"])
        #expect(secret.hasPrefix("pba_") && secret.count == 47, "\(secret)")

        let text = try await sandbox.ok("access-token", "create", "--name", "ci", "--read-only", "--expires", "30d")
        let other = text.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(other.hasPrefix("pba_") && other != secret)
        #expect(text.stderr.contains("this is the only time the access token"), "\(text)")

        // Neither secret is anywhere in the board, its WAL or the audit log; the hash of each is.
        let bytes = try await sandbox.snapshot()
        for value in [secret, other] {
            #expect(!bytes.dump.contains(value))
            #expect(bytes.bytes.range(of: Data(value.utf8)) == nil)
        }
        let hashes = try await sandbox.boardFile.strings("SELECT token_hash FROM access_tokens ORDER BY name")
        #expect(hashes.count == 2 && hashes.allSatisfy { $0.count == 64 })

        let list = try #require(try await sandbox.ok("access-token", "list", "--json").json() as? [[String: Any]])
        #expect(list.compactMap { $0["name"] as? String } == ["laptop", "ci"])  // by principal: alice, then root
        let me = try #require(list.first { $0["name"] as? String == "ci" })
        #expect(me["read_only"] as? Bool == true && me["state"] as? String == "active" && me["expires_at"] is String)
        #expect(list.allSatisfy { $0["token"] == nil && $0["token_hash"] == nil })
        try await sandbox.ok("audit", "verify")
    }

    @Test func revokingIsAuditedAndFinal() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("access-token", "create", "--principal", "alice", "--name", "laptop")
        let revoked = try await sandbox.ok("access-token", "revoke", "laptop", "--principal", "alice", "--reason", "lost it")
        #expect(revoked.stdout.contains("Revoked the access token 'alice/laptop'"))
        let again = try await sandbox.ok("access-token", "revoke", "laptop", "--principal", "alice")
        #expect(again.stdout.contains("already revoked"))
        let missing = try await sandbox.run(["access-token", "revoke", "desktop", "--principal", "alice"])
        #expect(
            missing.status == 1 && missing.stderr == "error: alice has no access token named 'desktop'; see plugboard access-token list\n")
        let state = try await sandbox.boardFile.string("SELECT state FROM access_token_status WHERE principal = 'alice'")
        #expect(state == "revoked")
        let actions = try await sandbox.boardFile.strings(
            "SELECT action || ' ' || outcome || ' ' || target_id FROM audit_log WHERE target_type = 'access_token' ORDER BY seq")
        #expect(
            actions == [
                "access-token.create ok alice/laptop", "access-token.revoke ok alice/laptop", "access-token.revoke refused alice/desktop",
            ], "\(actions)")
        try await sandbox.ok("audit", "verify")
    }

    @Test func badInputChangesNothing() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("access-token", "create", "--name", "laptop")
        let before = try await sandbox.snapshot()
        for (arguments, status, words) in [
            (["access-token", "create", "--principal", "bad name", "--name", "x"], Int32(2), "principal 'bad name' is not valid"),
            (["access-token", "create", "--name", ""], 2, "token name"),
            (["access-token", "create", "--name", "ok", "--expires", "yesterday"], 1, "--expires 'yesterday' is not an age or a time"),
            (["access-token", "create", "--name", "ok", "--expires", "2001-01-01"], 1, "is in the past"),
            (["access-token", "create", "--name", "laptop"], 1, "already has an access token named 'laptop'"),
        ] {
            let result = try await sandbox.run(arguments)
            #expect(result.status == status && result.stderr.contains(words), "\(arguments): \(result)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result)")
        }
        #expect(try await sandbox.snapshot() == before)
    }

    @Test(.enabled(if: canSwitchUser, "needs root and setpriv to act as another OS user"))
    func anyoneManagesTheirOwnTokensAndOnlyAdminsOthers() async throws {
        let sandbox = try await Sandbox.withBoard()
        chown(sandbox.root.path, 65534, 65534)
        chown(sandbox.board, 65534, 65534)
        let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        let own = try await sandbox.run(["access-token", "create", "--name", "laptop"], prefix: asNobody)
        #expect(own.status == 0, "\(own)")
        let forAlice = try await sandbox.run(["access-token", "create", "--principal", "alice", "--name", "x"], prefix: asNobody)
        #expect(forAlice.status == 1 && forAlice.stderr.contains("nobody may not create access tokens for alice"), "\(forAlice)")
        try await sandbox.ok("access-token", "create", "--principal", "alice", "--name", "x")  // an admin may
        let revokeAlice = try await sandbox.run(["access-token", "revoke", "x", "--principal", "alice"], prefix: asNobody)
        #expect(revokeAlice.status == 1 && revokeAlice.stderr.contains("only a board admin may"), "\(revokeAlice)")
        let revokeOwn = try await sandbox.run(["access-token", "revoke", "laptop"], prefix: asNobody)
        #expect(revokeOwn.status == 0, "\(revokeOwn)")
        let states = try await sandbox.boardFile.strings("SELECT principal || '/' || name || ' ' || state FROM access_token_status")
        #expect(states == ["alice/x active", "nobody/laptop revoked"], "\(states)")
        let refusals = try await sandbox.boardFile.strings(
            "SELECT actor || ' ' || action FROM audit_log WHERE outcome = 'refused' ORDER BY seq")
        #expect(refusals == ["nobody access-token.create", "nobody access-token.revoke"], "\(refusals)")
    }
}
