import Foundation
import PlugboardTestSupport
import Testing

/// What an access token may not do, with processes: `plugboard serve --admin` in one, the CLI and curl in others. A
/// token with no rights cannot grow the audit log without bound; a read-only token's refused write and a non-admin's
/// refused backup leave their audit rows; a token never outlives the token that made it, and revoking a token revokes
/// what it made at once; no one acts as Plugboard itself.
/// How long a burst of refusals lasts (the store's `RefusalBursts.window`, which the tests cannot see).
enum RefusalWindow {
    static let length = Duration.seconds(60)
}

@Suite(
    "access tokens' limits against a served board (processes)", .timeLimit(.hangGuard), .serialized,
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
struct AccessTokenLimitsTests {
    static let alpha = "com.example.alpha"

    /// A served board with alpha registered, and a token of `principal`, who has no rights on it.
    func serveWithNobody(_ principal: String = "mallory") async throws -> (OperationsAPITests.Served, String) {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await OperationsAPITests.serve(sandbox)
        let created = try await sandbox.ok("access-token", "create", "--principal", principal, "--name", "probe", "--json")
        return (served, try #require((try created.json() as? [String: Any])?["token"] as? String))
    }

    /// The refused rows of `principal`'s `action`: how many attempts each stands for (its `count`, else one).
    func refusedAttempts(_ sandbox: Sandbox, _ principal: String, _ action: String) async throws -> [Int] {
        try await sandbox.boardFile.strings(
            "SELECT CAST(coalesce(json_extract(after_json, '$.count'), 1) AS TEXT) FROM audit_log WHERE outcome = 'refused' AND actor = ? AND action = ? ORDER BY seq",
            .text(principal), .text(action)
        ).compactMap { Int($0) }
    }

    @Test func refusalsOfATokenWithNoRightsAreCountedNotWrittenOneByOne() async throws {
        let (served, probe) = try await serveWithNobody()
        // 1,000 attempts to become an admin, one curl process, one connection after another.
        let attempts = 1000
        let url = "\(served.url)/api/admin/admin.add"
        let curl = try ChildProcess(
            "/usr/bin/curl",
            [
                "-s", "-w", "%{http_code}\\n", "-X", "POST", "-H", "Authorization: Bearer \(probe)", "-H",
                "Content-Type: application/json", "-d", #"{"principal":"mallory"}"#,
            ] + Array(repeating: ["-o", "/dev/null", url], count: attempts).flatMap { $0 })
        let started = ContinuousClock.now
        #expect(await curl.waitForExit(timeout: .eventDeadline) != nil)
        print("\(attempts) refused attempts answered in \(ContinuousClock.now - started)")
        #expect(curl.output.count == attempts && curl.output.allSatisfy { $0 == "403" }, "\(Set(curl.output))")

        // The design's bound, whatever the machine's speed: a burst lasts a window from its first refusal, and writes at
        // most two rows (its first refusal at once, then the count of the rest), so the attempts can leave at most two
        // rows per window that passed while they came. On a fast machine that is one window: two rows for 1,000.
        func bound() -> Int { 2 * (Int((ContinuousClock.now - started) / RefusalWindow.length) + 1) }

        // While the server runs, the first refusal is written at once, the rest are counted.
        let whileServing = try await refusedAttempts(served.sandbox, "mallory", "admin.add")
        let boundWhileServing = bound()
        #expect(whileServing.first == 1 && whileServing.count <= boundWhileServing, "\(whileServing), at most \(boundWhileServing) rows")
        #expect(await served.server.stop() == 0, "\(served.server.errorOutput)")

        // At shutdown every count is written: a few rows stand for every attempt, and every attempt is counted.
        let rows = try await refusedAttempts(served.sandbox, "mallory", "admin.add")
        let boundAtShutdown = bound()
        print("\(attempts) refused attempts left \(rows.count) audit rows (at most \(boundAtShutdown)): \(rows)")
        #expect(rows.count <= boundAtShutdown && rows.reduce(0, +) == attempts, "\(rows), at most \(boundAtShutdown) rows")
        // Each burst's first refusal is a row of its own, followed by the count of the rest of its burst.
        #expect(stride(from: 0, to: rows.count, by: 2).allSatisfy { rows[$0] == 1 }, "\(rows)")
        let summary = try #require(
            try await served.sandbox.boardFile.string(
                "SELECT after_json FROM audit_log WHERE json_extract(after_json, '$.count') IS NOT NULL ORDER BY seq DESC LIMIT 1"))
        #expect(summary.contains("\"first_at\"") && summary.contains("\"last_at\"") && summary.contains("\"targets\":[\"mallory\"]"))
        #expect(try await served.sandbox.ok("admin", "list").stdout.contains("mallory") == false)
        try await served.sandbox.ok("audit", "verify")
    }

    @Test func aReadOnlyTokensRefusedWriteAndANonAdminsRefusedBackupAreAudited() async throws {
        let (served, probe) = try await serveWithNobody("bob")
        defer { Task { await served.stop() } }
        let sandbox = served.sandbox
        let viewer = try #require(
            (try await sandbox.ok("access-token", "create", "--name", "viewer", "--read-only", "--json").json() as? [String: Any])?[
                "token"] as? String)

        let kill = try await served.run(["plugin", "kill", Self.alpha, "--reason", "x"], token: viewer)
        #expect(kill.status == 1 && kill.stderr.contains("is read-only"), "\(kill)")
        let backup = try await served.run(["backup", "--to", sandbox.root.appendingPathComponent("copy.sqlite").path], token: probe)
        #expect(backup.status == 1 && backup.stderr.contains("bob may not download a backup"), "\(backup)")

        let refusals = try await sandbox.boardFile.strings(
            "SELECT actor || ' ' || action || ' ' || coalesce(target_id, '-') || ' ' || coalesce(via, '-') FROM audit_log WHERE outcome = 'refused' ORDER BY seq"
        )
        #expect(refusals.count == 2, "\(refusals)")
        #expect(refusals.first?.hasPrefix("root plugin.kill POST /api/admin/plugin.kill token viewer from ") == true, "\(refusals)")
        #expect(refusals.last?.hasPrefix("bob board.backup - token probe from ") == true, "\(refusals)")
        #expect(try await sandbox.ok("plugin", "show", Self.alpha, "--json").stdout.contains("\"killed\" : false"))
        try await sandbox.ok("audit", "verify")
    }

    @Test func aTokenNeverOutlivesTheTokenThatMadeItAndFallsWithIt() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await OperationsAPITests.serve(sandbox)
        defer { Task { await served.stop() } }
        func create(_ name: String, with token: String, _ more: [String] = []) async throws -> CLIResult {
            try await served.run(["access-token", "create", "--name", name, "--json"] + more, token: token)
        }
        func secret(_ result: CLIResult) throws -> String {
            try #require((try result.json() as? [String: Any])?["token"] as? String, "\(result)")
        }
        let parent = try secret(try await sandbox.ok("access-token", "create", "--name", "hour", "--expires", "1h", "--json"))

        // Without an expiry, or with a later one, the request is refused with a sentence; nothing is made.
        for more in [[], ["--expires", "2h"]] {
            let refused = try await create("forever", with: parent, more)
            #expect(refused.status == 1 && refused.stderr.contains("may not outlive it: pass --expires"), "\(more): \(refused)")
        }
        let child = try secret(try await create("child", with: parent, ["--expires", "30m"]))
        let grandchild = try secret(try await create("grandchild", with: child, ["--expires", "10m"]))
        let bystander = try secret(try await sandbox.ok("access-token", "create", "--name", "other", "--json"))
        let parents = try await sandbox.boardFile.strings(
            "SELECT name || ' ' || coalesce(parent_principal || '/' || parent_name, '-') FROM access_tokens ORDER BY created_at, name")
        #expect(parents == ["tests -", "hour -", "child root/hour", "grandchild root/child", "other -"], "\(parents)")
        #expect(try await served.run(["plugin", "list"], token: grandchild).status == 0)

        // Revoking the parent on the board file revokes what it made, at once, for the running server too.
        let revoked = try await sandbox.ok("access-token", "revoke", "hour", "--reason", "laptop lost")
        #expect(revoked.stdout.contains("and the 2 tokens made with it ('root/child', 'root/grandchild')"), "\(revoked)")
        let after = ContinuousClock.now
        for token in [child, grandchild] {
            let refused = try await served.run(["plugin", "list"], token: token)
            #expect(refused.status == 1 && refused.stderr.contains("was revoked"), "\(refused)")
        }
        print("the tokens made with a revoked token were refused \(ContinuousClock.now - after) after the revocation")
        #expect(try await served.run(["plugin", "list"], token: bystander).status == 0)
        let rows = try await sandbox.boardFile.strings(
            "SELECT target_id || ' ' || coalesce(reason, '-') FROM audit_log WHERE action = 'access-token.revoke' ORDER BY seq")
        #expect(
            rows == [
                "root/hour laptop lost", "root/child revoked with the access token 'root/hour' it was made with",
                "root/grandchild revoked with the access token 'root/hour' it was made with",
            ], "\(rows)")
        try await sandbox.ok("audit", "verify")
    }

    @Test func revokingATokenReachesTheEndOfAChainOfAnyLength() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await OperationsAPITests.serve(sandbox)
        defer { Task { await served.stop() } }
        func secret(_ result: CLIResult) throws -> String {
            try #require((try result.json() as? [String: Any])?["token"] as? String, "\(result)")
        }
        // A chain of 66 tokens through the operations API, each made with the one before.
        var chain = [try secret(try await sandbox.ok("access-token", "create", "--name", "link-0", "--json"))]
        for index in 1...65 {
            let made = try await served.run(["access-token", "create", "--name", "link-\(index)", "--json"], token: chain[index - 1])
            chain.append(try secret(made))
        }
        #expect(try await served.run(["plugin", "list"], token: chain[65]).status == 0)

        let revoked = try await sandbox.ok("access-token", "revoke", "link-0", "--reason", "laptop lost")
        #expect(revoked.stdout.contains("and the 65 tokens made with it"), "\(revoked.stdout.prefix(200))")
        let refused = try await served.run(["plugin", "list"], token: chain[65])
        #expect(refused.status == 1 && refused.stderr.contains("was revoked"), "\(refused)")
        let unrevoked = try await sandbox.boardFile.strings("SELECT name FROM access_tokens WHERE revoked_at IS NULL ORDER BY name")
        #expect(unrevoked == ["tests"], "\(unrevoked)")
        try await sandbox.ok("audit", "verify")
    }

    @Test func noOneActsAsPlugboardItself() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await OperationsAPITests.serve(sandbox)
        defer { Task { await served.stop() } }
        // The server notes tokens' use in the file: the audit log and the roles are what must not move.
        let state = "SELECT (SELECT count(*) FROM audit_log) || ' ' || (SELECT group_concat(principal) FROM admins)"
        let before = try await sandbox.boardFile.string(state)
        for (arguments, status) in [
            (["access-token", "create", "--principal", "plugboard/rollout-guard", "--name", "x"], Int32(2)),
            (["admin", "add", "plugboard/rollout-schedule"], 2), (["owner", "add", Self.alpha, "Plugboard/anything"], 2),
            (["--as", "plugboard/rollout-guard", "plugin", "kill", Self.alpha, "--reason", "x"], 2),
        ] {
            for (place, result) in [("file", try await sandbox.run(arguments)), ("served", try await served.run(arguments))] {
                #expect(result.status == status && result.stderr.contains("is reserved"), "\(place) \(arguments): \(result)")
            }
        }
        // The header a client sends for --as is refused by the server too.
        let header = try await OperationsAPITests.curl([
            "-X", "POST", "-H", "Authorization: Bearer \(served.token)", "-H", "Plugboard-On-Behalf-Of: plugboard/rollout-guard", "-H",
            "Content-Type: application/json", "-d", #"{"id":"\#(Self.alpha)","reason":"x"}"#, "\(served.url)/api/admin/plugin.kill",
        ])
        #expect(header.status == 400 && header.body.contains("is reserved"), "\(header)")
        #expect(try await sandbox.boardFile.string(state) == before)
        #expect(try await sandbox.boardFile.strings("SELECT principal FROM plugin_owners WHERE principal LIKE 'plugboard/%'").isEmpty)
    }
}
