import Foundation
import PlugboardTestSupport
import Testing

/// An access token of a principal Plugboard itself acts as (one made before those names were reserved, or brought back
/// with an old board) acts as nobody through the operations API.
@Suite("a token of Plugboard's own principal (processes)", .timeLimit(.hangGuard))
struct ReservedPrincipalTokenTests {
    static let alpha = "com.example.alpha"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func aTokenOfAReservedPrincipalActsAsNobody() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await OperationsAPITests.serve(sandbox)
        let made = try await sandbox.ok("access-token", "create", "--principal", "guard-bot", "--name", "old", "--json")
        let token = try #require((try made.json() as? [String: Any])?["token"] as? String)
        // As an older board could hold it: the token's principal is one Plugboard acts as.
        try await sandbox.boardFile.execute("UPDATE access_tokens SET principal = 'plugboard/rollout-guard' WHERE name = 'old'")
        let before = try await sandbox.boardFile.string("SELECT 'n=' || count(*) FROM kill_switches")
        let kill = try await OperationsAPITests.curl([
            "-X", "POST", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
            "-d", #"{"id":"\#(Self.alpha)","reason":"as the guard"}"#, "\(served.url)/api/admin/plugin.kill",
        ])
        #expect(kill.status == 403 && kill.body.contains("a principal Plugboard itself acts as"), "\(kill)")
        let whoami = try await OperationsAPITests.curl(["-H", "Authorization: Bearer \(token)", "\(served.url)/api/admin/whoami"])
        #expect(whoami.status == 403, "\(whoami)")
        #expect(try await sandbox.boardFile.string("SELECT 'n=' || count(*) FROM kill_switches") == before)
        await served.stop()
    }
}
