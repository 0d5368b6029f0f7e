import Foundation
import PlugboardTestSupport
import Testing

/// `plugboard token`, `plugboard clients` and the usage views of `flag show` and `flag list --unused`, end to end.
@Suite("token and clients CLI", .timeLimit(.hangGuard))
struct TokenCLITests {
    @Test func aTokenIsPrintedOnceAndOnlyItsHashIsStored() async throws {
        let sandbox = try await Sandbox.withBoard()
        let created = try await sandbox.ok("token", "create", "--env", "default", "--name", "checkout", "--expires", "90d", "--json")
        let object = try #require(try created.json() as? [String: Any])
        let secret = try #require(object["token"] as? String)
        #expect(object["name"] as? String == "checkout" && object["environment"] as? String == "default")
        #expect(secret.hasPrefix("*:default.pb_") && secret.count == "*:default.pb_".count + 43)

        let dump = try await sandbox.boardFile.dump()
        #expect(!dump.contains(secret) && !dump.contains(String(secret.suffix(43))), "the board holds the secret")
        let boardBytes = try Data(contentsOf: URL(fileURLWithPath: sandbox.board))
        #expect(boardBytes.range(of: Data(secret.suffix(43).utf8)) == nil)

        let list = try await sandbox.ok("token", "list")
        #expect(list.stdout.contains("checkout") && list.stdout.contains("active") && !list.stdout.contains(secret))
        let again = try await sandbox.run(["token", "create", "--env", "default", "--name", "checkout"])
        #expect(again.status == 1 && again.stderr.contains("already exists"))
        let nowhere = try await sandbox.run(["token", "create", "--env", "nowhere", "--name", "x"])
        #expect(nowhere.status == 1 && nowhere.stderr.contains("does not exist"))
        let badAge = try await sandbox.run(["token", "create", "--env", "default", "--name", "y", "--expires", "soon"])
        #expect(badAge.status == 1 && badAge.stderr.contains("--expires"))

        try await sandbox.ok("token", "revoke", "checkout", "--reason", "rotated")
        #expect(try await sandbox.ok("token", "list", "--json").stdout.contains(#""state" : "revoked""#))
        let audit = try await sandbox.ok("audit", "--json")
        #expect(audit.stdout.contains("token.create") && audit.stdout.contains("token.revoke") && !audit.stdout.contains(secret))
        try await sandbox.ok("audit", "verify")
    }

    @Test func aTokenIsForSDKsUnlessMadeForHosts() async throws {
        let sandbox = try await Sandbox.withBoard()
        let sdk = try await sandbox.ok("token", "create", "--name", "shop", "--json").json() as? [String: Any]
        #expect(sdk?["kind"] as? String == "sdk")
        let hosts = try await sandbox.ok("token", "create", "--name", "fleet", "--for", "hosts", "--json").json() as? [String: Any]
        #expect(hosts?["kind"] as? String == "hosts")
        let human = try await sandbox.run(["token", "create", "--name", "fleet-2", "--for", "hosts"])
        #expect(human.status == 0 && human.stderr.contains("reads the host routes of default"), "\(human)")
        let wrong = try await sandbox.run(["token", "create", "--name", "x", "--for", "admins"])
        #expect(wrong.status == 2 && wrong.stderr.contains("--for"), "\(wrong)")

        let list = try await sandbox.ok("token", "list", "--json").json() as? [[String: Any]] ?? []
        let kinds = Dictionary(
            uniqueKeysWithValues: list.compactMap { row in (row["name"] as? String).map { ($0, row["kind"] as? String) } })
        #expect(kinds == ["shop": "sdk", "fleet": "hosts", "fleet-2": "hosts"])
        let table = try await sandbox.ok("token", "list").stdout
        #expect(table.contains("FOR") && table.contains("hosts"), "\(table)")
        try await sandbox.ok("audit", "verify")
    }

    @Test func clientsAndUsageAreEmptyBeforeAnySDKReports() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "quiet.flag")
        #expect(try await sandbox.ok("clients").stdout.contains("No client"))
        #expect((try await sandbox.ok("clients", "--json").json() as? [Any])?.isEmpty == true)
        let show = try await sandbox.ok("flag", "show", "quiet.flag")
        #expect(show.stdout.contains("usage: no client"))
        #expect(try await sandbox.ok("flag", "list", "--unused", "7").stdout.contains("quiet.flag"))
        let tooLong = try await sandbox.run(["flag", "list", "--unused", "90"])
        #expect(tooLong.status == 1 && tooLong.stderr.contains("30 days"))
    }
}
