import Foundation
import PlugboardTestSupport
import Testing

/// `plugboard advisory exposure` against running hosts: the hosts it names are the ones that run an affected release,
/// as their own reports say, and running the command it prints takes them off it.
@Suite("advisory exposure (processes)", .timeLimit(.hangGuard), .serialized)
struct AdvisoryExposureProcessTests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let alpha = "com.example.alpha"
    static let advisory = """
        {"schema_version":"1.7.0","id":"PBSA-2026-0100","modified":"2026-11-20T10:00:00Z","summary":"alpha leaks a token",
         "affected":[{"package":{"ecosystem":"Plugboard","name":"com.example.alpha"},
           "ranges":[{"type":"SEMVER","events":[{"introduced":"1.1.0"},{"fixed":"1.2.0"}]}]}],
         "database_specific":{"severity":"LOW"}}
        """

    /// The release `host` last reported loaded for alpha (nil: none).
    static func running(_ sandbox: Sandbox, _ host: String) async throws -> String? {
        let rows = try await sandbox.ok("plugin", "status", alpha, "--json").json() as? [[String: Any]] ?? []
        let row = rows.first { $0["host_id"] as? String == host && $0["state"] as? String == "loaded" }
        return row?["version"] as? String
    }

    static func host(_ sandbox: Sandbox, _ id: String, env: String) async throws -> ChildProcess {
        let host = try ChildProcess(
            hostBinary,
            [
                "--db", sandbox.board, "--plugins", alpha, "--versions", "1.0.0,1.1.0,1.2.0", "--host-id", id, "--env", env, "--poll-ms",
                "50",
            ])
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "\(id) did not start: \(host.errorOutput)")
        return host
    }

    @Test("exposure names the hosts that run the affected release, and its command moves them off it")
    func exposureMatchesTheRunningHosts() async throws {
        let sandbox = try await Sandbox.withBoard([
            manifest(Self.alpha, "1.0.0"), manifest(Self.alpha, "1.1.0"), manifest(Self.alpha, "1.2.0"),
        ])
        for (env, version) in [("default", "1.1.0"), ("staging", "1.0.0")] {
            try await sandbox.ok("plugin", "enable", Self.alpha, "--env", env)
            try await sandbox.ok("plugin", "pin", Self.alpha, version, "--env", env)
        }
        try await sandbox.ok("advisory", "import", try sandbox.write("PBSA-2026-0100.json", Self.advisory))
        let exposed = try await Self.host(sandbox, "host-a", env: "default")
        let clear = try await Self.host(sandbox, "host-b", env: "staging")
        defer {
            Task {
                _ = await exposed.closeInput()
                _ = await clear.closeInput()
            }
        }
        try await eventually("both hosts report what they run", poll: .milliseconds(250)) {
            let a = try await Self.running(sandbox, "host-a")
            let b = try await Self.running(sandbox, "host-b")
            return a == "1.1.0" && b == "1.0.0"
        }

        let json = try await sandbox.ok("advisory", "exposure", "--json")
        let exposures = try #require(try json.json() as? [[String: Any]], "\(json)")
        #expect(exposures.count == 1, "\(exposures)")
        let first = try #require(exposures.first)
        let hosts = first["hosts"] as? [[String: Any]] ?? []
        #expect(hosts.compactMap { $0["host_id"] as? String } == ["host-a"] && hosts.first?["version"] as? String == "1.1.0", "\(first)")
        #expect(first["environment"] as? String == "default" && first["fix"] as? String == "1.2.0", "\(first)")
        let command = try #require(first["command"] as? String)
        #expect(command == "plugboard plugin pin \(Self.alpha) 1.2.0 --env default", "\(command)")

        let text = try await sandbox.run(["advisory", "exposure", "PBSA-2026-0100"])
        #expect(text.status == 0 && text.stderr.isEmpty, "\(text)")
        #expect(text.stdout.contains("host-a") && !text.stdout.contains("host-b") && text.stdout.contains(command), "\(text)")
        let staging = try await sandbox.run(["advisory", "exposure", "--env", "staging"])
        #expect(staging.status == 0 && staging.stdout.contains("No host reported running"), "\(staging)")
        let unknown = try await sandbox.run(["advisory", "exposure", "PBSA-2026-0999"])
        #expect(unknown.status == 1 && unknown.stdout.isEmpty, "\(unknown)")
        #expect(unknown.stderr.contains("no advisory PBSA-2026-0999 is on the board") && unknown.stderr.split(separator: "\n").count == 1)

        // Through the operations API of a served board: the same answer, the same sentences and exit codes.
        let served = try await OperationsAPITests.serve(sandbox)
        let viaServer = try await served.run(["advisory", "exposure", "PBSA-2026-0100"])
        let viaServerUnknown = try await served.run(["advisory", "exposure", "PBSA-2026-0999"])
        await served.stop()
        #expect(viaServer.status == 0 && viaServer.stdout == text.stdout && viaServer.stderr.isEmpty, "\(viaServer)")
        #expect(viaServerUnknown.status == 1 && viaServerUnknown.stderr == unknown.stderr, "\(viaServerUnknown)")

        // The command it printed, run as printed: the host moves to the fix, and exposure follows its report.
        try await sandbox.ok(Array(command.split(separator: " ").dropFirst().map(String.init)))
        try await eventually("host-a reports the fix", poll: .milliseconds(250)) {
            try await Self.running(sandbox, "host-a") == "1.2.0"
        }
        let after = try await sandbox.ok("advisory", "exposure", "--json")
        #expect((try after.json() as? [[String: Any]])?.isEmpty == true, "\(after)")
        try await sandbox.ok("audit", "verify")
    }
}
