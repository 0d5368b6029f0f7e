import Foundation
import PlugboardTestSupport
import Testing

/// A new release in a protected environment: registering it changes nothing hosts there run until a change request
/// takes it in, while an unprotected environment runs it at once. Hosts of the board file, as processes.
@Suite(
    "a new release in a protected environment (processes)", .timeLimit(.hangGuard), .serialized,
    .enabled(if: canSwitchUser, "needs root and setpriv: the approver is an OS user of their own"))
struct ProtectedReleaseTests {
    static let notes = "com.example.notes"
    static let approver: UInt32 = 4_501
    /// Every release the tests register, compiled into their hosts.
    static let versions = "1.0.0,1.0.1,1.0.2,1.1.0,1.2.0,1.3.0"

    /// The release a host of the board file in `environment` loads (nil when it loads none); every release the tests
    /// register is compiled into it.
    static func loadedVersion(_ sandbox: Sandbox, environment: String) async throws -> String? {
        let host = try ChildProcess(
            OperationsAPITests.hostBinary,
            [
                "--db", sandbox.board, "--env", environment, "--plugins", notes, "--versions", versions,
            ])
        #expect(await host.waitForLine { $0.contains(#""event":"started""#) } != nil, "\(host.output) \(host.errorOutput)")
        _ = await host.closeInput()
        let loaded = host.output.first { $0.contains(#""event":"loaded""#) && $0.contains(#""plugin":"\#(notes)""#) }
        guard let loaded, let data = loaded.data(using: .utf8),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["version"] as? String
    }

    @Test func aNewReleaseRunsWhereProtectedOnlyOnceAChangeTakesItIn() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.notes, "1.0.0")])
        for environment in ["production", "staging"] { try await sandbox.ok("plugin", "enable", Self.notes, "--env", environment) }
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "1")
        let policySet = try await sandbox.boardFile.string(
            "SELECT after_json FROM audit_log WHERE action = 'policy.set' ORDER BY seq DESC LIMIT 1")
        #expect(policySet?.contains(#""approved_versions":{"\#(Self.notes)":"1.0.0"}"#) == true, "\(policySet ?? "-")")

        try await sandbox.ok("plugin", "register", sandbox.write("notes-1.0.1.json", manifest(Self.notes, "1.0.1")))
        #expect(try await Self.loadedVersion(sandbox, environment: "staging") == "1.0.1")
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == "1.0.0")

        // Enabling it again where it is enabled takes in the newest release: a change request there.
        let asked = try await sandbox.ok("plugin", "enable", Self.notes, "--env", "production", "--json")
        let id = try #require((try asked.json() as? [String: Any])?["id"] as? Int, "\(asked)")
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == "1.0.0")

        // A newer release registered before the approval: applying would take in another release than the one shown.
        try await sandbox.ok("plugin", "register", sandbox.write("notes-1.0.2.json", manifest(Self.notes, "1.0.2")))
        try await sandbox.ok("admin", "add", "uid:\(Self.approver)")
        sandbox.openToOtherUsers()
        let stale = try await sandbox.run(["change", "approve", String(id)], prefix: Sandbox.asUser(Self.approver))
        sandbox.closeToOtherUsers()
        #expect(
            stale.status == 0 && stale.stdout.contains("would now take in \(Self.notes)@1.0.2 in production, not \(Self.notes)@1.0.1"),
            "\(stale)")
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == "1.0.0")
        try await sandbox.ok("change", "cancel", String(id))

        // Asked again and approved by another person, an admin who is an OS user of their own on the board's machine.
        let again = try await sandbox.ok("plugin", "enable", Self.notes, "--env", "production", "--json")
        let second = try #require((try again.json() as? [String: Any])?["id"] as? Int, "\(again)")
        sandbox.openToOtherUsers()
        let approved = try await sandbox.run(["change", "approve", String(second)], prefix: Sandbox.asUser(Self.approver))
        sandbox.closeToOtherUsers()
        #expect(approved.status == 0 && approved.stdout.contains("applied"), "\(approved)")
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == "1.0.2")
        // Nothing newer waits: enabling it again changes nothing.
        let nothing = try await sandbox.ok("plugin", "enable", Self.notes, "--env", "production")
        #expect(nothing.stdout.contains("already enabled"), "\(nothing)")
        try await sandbox.ok("audit", "verify")
    }

    @Test func aReleaseTakenInByAPinOrUnpinIsTheOneHostsRun() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.notes, "1.0.0"), manifest(Self.notes, "1.1.0")])
        try await sandbox.ok("plugin", "enable", Self.notes, "--env", "production")
        try await sandbox.ok("plugin", "pin", Self.notes, "1.0.0", "--env", "production")
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "1")
        try await sandbox.ok("plugin", "register", sandbox.write("notes-1.2.0.json", manifest(Self.notes, "1.2.0")))
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == "1.0.0")
        // An unpin is a change request; applied, hosts run the newest release as of then, 1.2.0, and no later one.
        let asked = try await sandbox.ok("plugin", "unpin", Self.notes, "--env", "production", "--json")
        let id = try #require((try asked.json() as? [String: Any])?["id"] as? Int, "\(asked)")
        try await sandbox.ok("admin", "add", "uid:\(Self.approver)")
        sandbox.openToOtherUsers()
        let approved = try await sandbox.run(["change", "approve", String(id)], prefix: Sandbox.asUser(Self.approver))
        sandbox.closeToOtherUsers()
        #expect(approved.status == 0, "\(approved)")
        try await sandbox.ok("plugin", "register", sandbox.write("notes-1.3.0.json", manifest(Self.notes, "1.3.0")))
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == "1.2.0")
        try await sandbox.ok("audit", "verify")
    }
}

extension ProtectedReleaseTests {
    @Test func aReleaseRaisedBehindTheLogLoadsNothingAndAnEnvironmentBecomingProtectedKeepsWhatRuns() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.notes, "1.0.0")])
        try await sandbox.ok("plugin", "enable", Self.notes, "--env", "production")
        try await sandbox.ok("plugin", "register", sandbox.write("notes-1.0.1.json", manifest(Self.notes, "1.0.1")))
        // Unprotected, production runs the newest release; becoming protected, it keeps running it, and no later one.
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == "1.0.1")
        // A token for production's hosts of the served board, made while production is not protected yet.
        let created = try await sandbox.ok("token", "create", "--name", "hosts", "--for", "hosts", "--env", "production", "--json")
        let hostsToken = try #require((try created.json() as? [String: Any])?["token"] as? String)
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "2")
        try await sandbox.ok("plugin", "register", sandbox.write("notes-1.1.0.json", manifest(Self.notes, "1.1.0")))
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == "1.0.1")
        // A host of the served board decides from the signed snapshot, the same way.
        let (server, url, _) = try await RemoteHostTests().serve(sandbox)
        let remote = try RemoteHostTests().host(
            url, hostsToken, key: try await sandbox.boardKey(), cache: sandbox.root.appendingPathComponent("cache").path,
            plugins: [Self.notes], options: ["--env", "production", "--versions", Self.versions])
        let loaded = await remote.waitForLine(RemoteHostTests.event("loaded", Self.notes))
        #expect(loaded.map { remote.output[$0].contains(#""version":"1.0.1""#) } == true, "\(remote.output) \(remote.errorOutput)")
        _ = await remote.closeInput()
        _ = await server.stop()
        // Tightening the policy again takes in nothing.
        try await sandbox.ok("policy", "set", "--env", "production", "--approvals", "3")
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == "1.0.1")

        // A writer of the board file raises the release taken in: the state proof names the row and hosts load nothing.
        try await sandbox.boardFile.execute("UPDATE plugin_environments SET approved_version = '1.1.0' WHERE environment = 'production'")
        #expect(try await Self.loadedVersion(sandbox, environment: "production") == nil)
        let verify = try await sandbox.run(["audit", "verify"])
        #expect(
            verify.status != 0 && verify.stderr.contains("row \(Self.notes)/production was changed outside the log"), "\(verify)")
    }
}
