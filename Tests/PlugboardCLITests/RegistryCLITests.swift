import Foundation
import PlugboardTestSupport
import Synchronization
import Testing

/// End-to-end tests of the registry commands: each runs the real `plugboard` binary and checks its exit
/// status, stdout, stderr and the board afterwards.
@Suite("plugboard registry commands", .timeLimit(.hangGuard))
struct RegistryCLITests {
    @Test func initCreatesAPrivateBoardAndRefusesToOverwriteIt() async throws {
        let sandbox = try Sandbox()
        let created = try await sandbox.ok("init")
        #expect(created.stdout.contains("is its admin"))
        #expect(sandbox.mode(sandbox.board) == 0o600)
        let before = try await sandbox.snapshot()
        let again = try await sandbox.run(["init"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists"))
        #expect(try await sandbox.snapshot() == before)
        let status = try await sandbox.ok("migrate", "--status", "--json")
        let json = try #require(try status.json() as? [String: Any])
        #expect((json["pending"] as? [Any])?.isEmpty == true)
        #expect((json["applied"] as? [Any])?.isEmpty == false)
        #expect(try await sandbox.ok("migrate").stdout.contains("up to date"))
    }

    @Test func registerNewPluginNewVersionAndDuplicate() async throws {
        let sandbox = try await Sandbox.withBoard()
        let first = try await sandbox.run(["plugin", "register", try sandbox.write("m1.json", manifest("com.example.calendar", "1.0.0"))])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("new plug-in com.example.calendar"))
        let second = try await sandbox.run([
            "plugin", "register", try sandbox.write("m2.json", manifest("com.example.calendar", "1.1.0", "\"host\":\">=2.0.0 <3.0.0\"")),
        ])
        #expect(second.status == 0, "\(second)")
        let before = try await sandbox.snapshot()
        let duplicate = try await sandbox.run([
            "plugin", "register", try sandbox.write("m3.json", manifest("com.example.calendar", "1.1.0")),
        ])
        #expect(duplicate.status == 1)
        #expect(duplicate.stderr.contains("already registered"))
        #expect(duplicate.stdout.isEmpty)
        #expect(try await sandbox.snapshot() == before)

        let list = try await sandbox.ok("plugin", "list", "--json")
        let plugins = try #require(try list.json() as? [[String: Any]])
        #expect(plugins.count == 1)
        #expect(plugins.first?["latest_version"] as? String == "1.1.0")
        #expect(plugins.first?["version_count"] as? Int == 2)
        #expect(plugins.first?["enabled"] as? Bool == false)

        let show = try await sandbox.ok("plugin", "show", "com.example.calendar", "--json")
        let detail = try #require(try show.json() as? [String: Any])
        let versions = try #require(detail["versions"] as? [[String: Any]])
        #expect(versions.map { $0["version"] as? String } == ["1.1.0", "1.0.0"])
        #expect(versions.first?["host_range"] as? String == ">=2.0.0 <3.0.0")
        let text = try await sandbox.ok("plugin", "show", "com.example.calendar").stdout
        #expect(text.contains("1.1.0") && text.contains("Owners:"))
    }

    @Test func manyManifestsRegisterInOneChangeOrNotAtAll() async throws {
        let sandbox = try await Sandbox.withBoard()
        let folder = sandbox.root.appendingPathComponent("manifests").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, text) in [("a.json", manifest("com.example.a")), ("b.json", manifest("com.example.b")), ("notes.txt", "not a manifest")]
        {
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        let extra = try sandbox.write("c.json", manifest("com.example.a", "2.0.0"))
        let registered = try await sandbox.ok("plugin", "register", folder, extra)
        #expect(registered.stdout.contains("Registered 3 versions in one change (2 new plug-ins"), "\(registered)")
        let rows = try await sandbox.boardFile.rows(
            "SELECT action, target_id FROM audit_log WHERE action = 'plugin.register' ORDER BY seq")
        #expect(rows.map { $0["target_id"]?.string } == ["com.example.a@1.0.0", "com.example.b@1.0.0", "com.example.a@2.0.0"])

        // One refused manifest (a version that exists) refuses them all, and names it.
        let before = try await sandbox.snapshot()
        let fresh = try sandbox.write("d.json", manifest("com.example.d"))
        let refused = try await sandbox.run(["plugin", "register", fresh, extra])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("com.example.a@2.0.0: com.example.a@2.0.0 is already registered"), "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was registered"))
        #expect(try await sandbox.snapshot() == before)
        let invalid = try sandbox.write("bad.json", "{\"id\": \"com.example.bad\"}")
        let unparsable = try await sandbox.run(["plugin", "register", fresh, invalid])
        #expect(unparsable.status == 1 && unparsable.stderr.contains("\(invalid): "), "\(unparsable)")
        #expect(try await sandbox.snapshot() == before)
        let withArtifact = try await sandbox.run(["plugin", "register", fresh, extra, "--artifact", fresh])
        #expect(
            withArtifact.status == 2 && withArtifact.stderr.contains("--artifact and --signature register one manifest"), "\(withArtifact)")
    }

    @Test func versionsSortBySemVerPrecedenceNotText() async throws {
        let sandbox = try await Sandbox.withBoard([
            manifest("com.example.sort", "1.9.0"), manifest("com.example.sort", "1.10.0"),
            manifest("com.example.sort", "1.10.0-rc.2"), manifest("com.example.sort", "1.10.0-rc.10"),
        ])
        let detail = try #require(try await sandbox.ok("plugin", "show", "com.example.sort", "--json").json() as? [String: Any])
        let versions = (detail["versions"] as? [[String: Any]] ?? []).compactMap { $0["version"] as? String }
        #expect(versions == ["1.10.0", "1.10.0-rc.10", "1.10.0-rc.2", "1.9.0"])
        let list = try #require(try await sandbox.ok("plugin", "list", "--json").json() as? [[String: Any]])
        #expect(list.first?["latest_version"] as? String == "1.10.0")
    }

    @Test func artifactIsStoredPrivatelyUnderItsDigest() async throws {
        let sandbox = try await Sandbox.withBoard()
        let artifact = try sandbox.write("libcalendar.so", "not really a shared library")
        try await sandbox.ok("plugin", "register", try sandbox.write("m.json", manifest()), "--artifact", artifact)
        let detail = try #require(try await sandbox.ok("plugin", "show", "com.example.calendar", "--json").json() as? [String: Any])
        let sha = try #require((detail["versions"] as? [[String: Any]])?.first?["artifact_sha256"] as? String)
        // Checked against coreutils' own digest of the same file.
        let expected = try await Spawned.run("/usr/bin/env", ["sha256sum", artifact]).text.stdout.prefix(64)
        #expect(sha == String(expected))
        let stored = sandbox.board + ".artifacts/sha256/" + sha
        #expect(try String(contentsOfFile: stored, encoding: .utf8) == "not really a shared library")
        #expect(sandbox.mode(stored) & 0o077 == 0)
        #expect(sandbox.mode(sandbox.board + ".artifacts") == 0o700)
        #expect(sandbox.mode(sandbox.board + ".artifacts/sha256") == 0o700)
        #expect(sandbox.mode(sandbox.board) & 0o077 == 0)
    }

    @Test func enableAndDisableArePerEnvironment() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        let enabled = try await sandbox.ok("plugin", "enable", "com.example.calendar", "--env", "production")
        #expect(enabled.stdout.contains("Enabled com.example.calendar in production"))
        func isEnabled(_ env: String) async throws -> Bool? {
            let list = try #require(try await sandbox.ok("plugin", "list", "--env", env, "--json").json() as? [[String: Any]])
            return list.first?["enabled"] as? Bool
        }
        await #expect(try isEnabled("production") == true)
        await #expect(try isEnabled("default") == false)
        let again = try await sandbox.ok("plugin", "enable", "com.example.calendar", "--env", "production")
        #expect(again.stdout.contains("already enabled"))
        try await sandbox.ok("plugin", "disable", "com.example.calendar", "--env", "production")
        await #expect(try isEnabled("production") == false)
        // The environment variable is the default for --env.
        let viaEnv = try await sandbox.run(["plugin", "enable", "com.example.calendar"], environment: ["PLUGBOARD_ENV": "staging"])
        #expect(viaEnv.status == 0 && viaEnv.stdout.contains("in staging"), "\(viaEnv)")
        await #expect(try isEnabled("staging") == true)
        let unknown = try await sandbox.run(["plugin", "list", "--env", "nowhere"])
        #expect(unknown.status == 1 && unknown.stderr.contains("environment 'nowhere' does not exist"))
    }

    @Test func killAndReviveAPluginAVersionAndAll() async throws {
        let sandbox = try await Sandbox.withBoard([
            manifest("com.example.calendar", "1.0.0"), manifest("com.example.calendar", "1.1.0"), manifest("com.example.mail", "2.0.0"),
        ])
        func state() async throws -> [String: [String: Any]] {
            let list = try #require(try await sandbox.ok("plugin", "list", "--json").json() as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as! String, $0) })
        }
        let noReason = try await sandbox.run(["plugin", "kill", "com.example.calendar"])
        #expect(noReason.status == 2)

        try await sandbox.ok("plugin", "kill", "com.example.calendar", "--version", "1.1.0", "--reason", "crashes on start")
        await #expect(try state()["com.example.calendar"]?["latest_version"] as? String == "1.0.0")
        await #expect(try state()["com.example.calendar"]?["killed"] as? Bool == false)

        try await sandbox.ok("plugin", "kill", "com.example.calendar", "--reason", "INC-42")
        await #expect(try state()["com.example.calendar"]?["killed"] as? Bool == true)
        await #expect(try state()["com.example.mail"]?["killed"] as? Bool == false)
        #expect(try await sandbox.ok("plugin", "kill", "com.example.calendar", "--reason", "again").stdout.contains("already killed"))

        try await sandbox.ok("plugin", "kill", "--all", "--reason", "stop everything")
        await #expect(try state()["com.example.mail"]?["killed"] as? Bool == true)
        try await sandbox.ok("plugin", "revive", "--all", "--reason", "resolved")
        await #expect(try state()["com.example.mail"]?["killed"] as? Bool == false)
        await #expect(try state()["com.example.calendar"]?["killed"] as? Bool == true)

        let revived = try await sandbox.ok("plugin", "revive", "com.example.calendar")
        #expect(revived.stdout.contains("Revived com.example.calendar"))
        await #expect(try state()["com.example.calendar"]?["killed"] as? Bool == false)
        try await sandbox.ok("plugin", "revive", "com.example.calendar", "--version", "1.1.0", "--reason", "fixed")
        await #expect(try state()["com.example.calendar"]?["latest_version"] as? String == "1.1.0")

        let missing = try await sandbox.run(["plugin", "kill", "com.example.calendar", "--version", "9.9.9", "--reason", "x"])
        #expect(missing.status == 1 && missing.stderr.contains("9.9.9 is not registered"))
        let both = try await sandbox.run(["plugin", "kill", "com.example.calendar", "--all", "--reason", "x"])
        #expect(both.status == 2)

        // Revived kill switches stay in the board for auditors.
        let rows = try await sandbox.boardFile.int("SELECT count(*) FROM kill_switches WHERE revived_at IS NOT NULL")
        #expect(rows == 3)
    }

    @Test func yankPinAndUnpin() async throws {
        let sandbox = try await Sandbox.withBoard([manifest("com.example.calendar", "1.0.0"), manifest("com.example.calendar", "1.1.0")])
        func active() async throws -> String? {
            let list = try #require(try await sandbox.ok("plugin", "list", "--json").json() as? [[String: Any]])
            return list.first?["active_version"] as? String
        }
        await #expect(try active() == "1.1.0")
        #expect(try await sandbox.run(["plugin", "yank", "com.example.calendar", "1.1.0"]).status == 2)
        try await sandbox.ok("plugin", "yank", "com.example.calendar", "1.1.0", "--reason", "data loss bug")
        await #expect(try active() == "1.0.0")
        let pinYanked = try await sandbox.run(["plugin", "pin", "com.example.calendar", "1.1.0"])
        #expect(pinYanked.status == 1 && pinYanked.stderr.contains("yanked"))
        try await sandbox.ok("plugin", "unyank", "com.example.calendar", "1.1.0")
        try await sandbox.ok("plugin", "pin", "com.example.calendar", "1.0.0")
        await #expect(try active() == "1.0.0")
        let list = try #require(try await sandbox.ok("plugin", "list", "--json").json() as? [[String: Any]])
        #expect(list.first?["pinned_version"] as? String == "1.0.0")
        let yankPinned = try await sandbox.ok("plugin", "yank", "com.example.calendar", "1.0.0", "--reason", "old")
        #expect(yankPinned.stdout.contains("still pinned"))
        try await sandbox.ok("plugin", "unpin", "com.example.calendar")
        await #expect(try active() == "1.1.0")
        let badVersion = try await sandbox.run(["plugin", "pin", "com.example.calendar", "1.01.0"])
        #expect(badVersion.status == 2 && badVersion.stderr.hasPrefix("error: ") && badVersion.stderr.contains("leading zero"))
        let unknown = try await sandbox.run(["plugin", "pin", "com.example.calendar", "3.0.0"])
        #expect(unknown.status == 1 && unknown.stderr.contains("not registered"))
    }

    @Test func ownersAndTheLastOwnerRule() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        let owners = try #require(try await sandbox.ok("owner", "list", "com.example.calendar", "--json").json() as? [[String: Any]])
        #expect(owners.count == 1 && owners.first?["role"] as? String == "owner")
        let me = try #require(owners.first?["principal"] as? String)
        try await sandbox.ok("owner", "add", "com.example.calendar", "alice", "--role", "maintainer")
        try await sandbox.ok("owner", "add", "com.example.calendar", "bob")
        let text = try await sandbox.ok("owner", "list", "com.example.calendar").stdout
        #expect(text.contains("alice") && text.contains("maintainer") && text.contains("bob"))
        try await sandbox.ok("owner", "remove", "com.example.calendar", "bob")
        let last = try await sandbox.run(["owner", "remove", "com.example.calendar", me])
        #expect(last.status == 1 && last.stderr.contains("last owner"))
        let badRole = try await sandbox.run(["owner", "add", "com.example.calendar", "carol", "--role", "boss"])
        #expect(badRole.status == 2)
        let notThere = try await sandbox.run(["owner", "remove", "com.example.calendar", "zed"])
        #expect(notThere.status == 1 && notThere.stderr.contains("zed is not an owner"))
    }

    @Test func adminsCanBeAddedButNotTheLastRemoved() async throws {
        let sandbox = try await Sandbox.withBoard()
        let admins = try #require(try await sandbox.ok("admin", "list", "--json").json() as? [[String: Any]])
        let me = try #require(admins.first?["principal"] as? String)
        try await sandbox.ok("admin", "add", "alice")
        try await sandbox.ok("admin", "remove", "alice")
        let last = try await sandbox.run(["admin", "remove", me])
        #expect(last.status == 1 && last.stderr.contains("last board admin"))
    }

    @Test func declaredPrincipalIsRecordedBesideTheOSUser() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        try await sandbox.ok("plugin", "enable", "com.example.calendar", "--as", "ci-bot@example.com")
        let row = try await sandbox.boardFile.rows("SELECT actor, on_behalf_of FROM audit_log WHERE action = 'plugin.enable'").first
        #expect(row?["on_behalf_of"]?.string == "ci-bot@example.com")
        #expect(row?["actor"]?.string?.isEmpty == false)
        #expect(row?["actor"]?.string != "ci-bot@example.com")
        let audit = try await sandbox.ok("audit", "--actor", "ci-bot@example.com").stdout
        #expect(audit.contains("(for ci-bot@example.com)"))
    }

    @Test(.enabled(if: canSwitchUser, "needs root and setpriv to act as another OS user"))
    func aNonOwnerIsRefusedAndTheRefusalIsAudited() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        // Let the user 'nobody' open the board, as a second operator would.
        chown(sandbox.root.path, 65534, 65534)
        chown(sandbox.board, 65534, 65534)
        let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        let before = try await sandbox.ok("plugin", "list", "--json").stdout
        let refused = try await sandbox.run(["plugin", "disable", "com.example.calendar"], prefix: asNobody)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("nobody may not disable com.example.calendar"))
        #expect(try await sandbox.ok("plugin", "list", "--json").stdout == before)
        let kill = try await sandbox.run(["plugin", "kill", "--all", "--reason", "x"], prefix: asNobody)
        #expect(kill.status == 1 && kill.stderr.contains("only a board admin"))
        let register = try await sandbox.run(
            ["plugin", "register", try sandbox.write("v2.json", manifest("com.example.calendar", "2.0.0"))], prefix: asNobody)
        #expect(register.status == 1 && register.stderr.contains("may not register a new version"))

        let refusals = try await sandbox.boardFile.rows(
            "SELECT actor, action, outcome FROM audit_log WHERE outcome = 'refused' ORDER BY seq")
        #expect(refusals.map { $0["action"]?.string } == ["plugin.disable", "plugin.kill", "plugin.register"])
        #expect(refusals.allSatisfy { $0["actor"]?.string == "nobody" })

        // Once a maintainer, the same user may.
        try await sandbox.ok("owner", "add", "com.example.calendar", "nobody", "--role", "maintainer")
        let allowed = try await sandbox.run(["plugin", "enable", "com.example.calendar"], prefix: asNobody)
        #expect(allowed.status == 0, "\(allowed)")
        // A maintainer may not manage owners.
        let manage = try await sandbox.run(["owner", "add", "com.example.calendar", "mallory"], prefix: asNobody)
        #expect(manage.status == 1 && manage.stderr.contains("only its owners or a board admin"))
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }

    @Test func concurrentProcessesWaitForTheWriterInsteadOfFailing() async throws {
        let sandbox = try await Sandbox.withBoard()
        let paths = try (0..<8).map { try sandbox.write("c\($0).json", manifest("com.example.p\($0)", "1.0.0")) }
        let results = Mutex<[CLIResult]>([])
        // Off the shared pool: concurrentPerform blocks its calling thread until every process has exited.
        try await Sandbox.offPool {
            DispatchQueue.concurrentPerform(iterations: paths.count) { index in
                let result = try? sandbox.runBlocking(["plugin", "register", paths[index]])
                results.withLock { $0.append(result ?? CLIResult(status: -1, stdout: "", stderr: "did not run")) }
            }
        }
        for result in results.withLock({ $0 }) { #expect(result.status == 0, "\(result)") }
        let list = try #require(try await sandbox.ok("plugin", "list", "--json").json() as? [Any])
        #expect(list.count == 8)
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }

    @Test func theBinaryAloneInAnotherFolderCanInitABoard() async throws {
        let sandbox = try Sandbox()
        let copy = sandbox.root.appendingPathComponent("bin/plugboard").path
        try FileManager.default.createDirectory(atPath: sandbox.root.appendingPathComponent("bin").path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Sandbox.binary, toPath: copy)
        let result = try await sandbox.run(["init"], executable: copy)
        #expect(result.status == 0, "\(result)")
        let status = try await sandbox.run(["migrate", "--status"], executable: copy)
        #expect(status.stdout.contains("0001_registry.sql") && status.stdout.contains("applied"))
    }
}
