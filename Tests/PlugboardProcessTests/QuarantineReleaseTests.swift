import Foundation
import PlugboardTestSupport
import Testing

/// `plugboard host release-quarantine` ends one host's quarantine of a release that crashed it: the host reads the
/// release with the board (the file, or a served board's signed snapshot) and loads the release again at its next
/// start. Real processes: a crash cannot be tested in the test's own.
@Suite("the board releases a host's quarantine (processes)", .timeLimit(.hangGuard), .serialized)
struct QuarantineReleaseTests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let alpha = CrashQuarantineTests.alpha
    static let beta = CrashQuarantineTests.beta
    static let environment = CrashQuarantineTests.environment

    /// Runs the host with `arguments` and `--crash-on-activate alpha` until it quarantines alpha: three crashing runs,
    /// then a start that records the third crash and skips alpha as quarantined (stopped cleanly).
    func crashIntoQuarantine(_ arguments: [String]) async throws {
        let crashing = arguments + ["--crash-on-activate", Self.alpha]
        for run in 1...3 {
            let host = try ChildProcess(Self.hostBinary, crashing, environment: Self.environment)
            #expect(await host.waitForExit(timeout: .eventDeadline) != nil, "run \(run): the host did not crash: \(host.output)")
        }
        let host = try ChildProcess(Self.hostBinary, crashing, environment: Self.environment)
        #expect(await host.waitForLine(Self.skippedAsQuarantined) != nil, "\(host.output) \(host.errorOutput)")
        #expect(await host.closeInput() == 0, "\(host.errorOutput)")
    }

    static func skippedAsQuarantined(_ line: String) -> Bool {
        CrashQuarantineTests.event("skipped", alpha)(line) && line.contains(#""reason":"quarantined""#)
    }

    /// Starts the host (no crash), waits until it decided on alpha, stops it; returns whether alpha loaded.
    func alphaLoads(_ arguments: [String]) async throws -> Bool {
        let host = try ChildProcess(Self.hostBinary, arguments, environment: Self.environment)
        let decided = await host.waitForLine { CrashQuarantineTests.event("loaded", Self.alpha)($0) || Self.skippedAsQuarantined($0) }
        #expect(decided != nil, "\(host.output) \(host.errorOutput)")
        #expect(await host.closeInput() == 0, "\(host.errorOutput)")
        return host.output.contains(where: CrashQuarantineTests.event("loaded", Self.alpha))
    }

    func count(_ sandbox: Sandbox, _ sql: String) async throws -> Int { try await sandbox.boardFile.int(sql) ?? -1 }

    @Test func aReleaseOfTheHostsOwnIdMakesItLoadTheReleaseAgainUntilItCrashesAgain() async throws {
        let sandbox = try await CrashQuarantineTests().makeBoard()
        let state = sandbox.root.appendingPathComponent("state").path
        let arguments = ["--db", sandbox.board, "--plugins", "\(Self.alpha),\(Self.beta)", "--state", state]
        try await crashIntoQuarantine(arguments)

        // Refused: an unknown plug-in, an unregistered version, a bad host id. No release is written.
        let unknown = try await sandbox.run(["host", "release-quarantine", "test-host", "com.example.nope", "1.0.0"])
        #expect(unknown.status == 1 && unknown.stderr.contains("not registered"), "\(unknown)")
        let version = try await sandbox.run(["host", "release-quarantine", "test-host", Self.alpha, "9.9.9"])
        #expect(version.status == 1 && version.stderr.contains("not registered"), "\(version)")
        let badHost = try await sandbox.run(["host", "release-quarantine", "bad\nhost", Self.alpha, "1.0.0"])
        #expect(badHost.status == 2, "\(badHost)")
        #expect(try await count(sandbox, "SELECT count(*) FROM quarantine_releases") == 0)

        // A release for another host changes nothing on this one.
        try await sandbox.ok("host", "release-quarantine", "other-host", Self.alpha, "1.0.0")
        #expect(try await !alphaLoads(arguments), "another host's release lifted this host's quarantine")

        let released = try await sandbox.ok(
            "host", "release-quarantine", "test-host", Self.alpha, "1.0.0", "--reason", "fixed in the config", "--json")
        #expect((try released.json() as? [String: Any])?["changed"] as? Bool == true, "\(released)")
        #expect(
            try await count(
                sandbox,
                "SELECT count(*) FROM audit_log WHERE action = 'host.release-quarantine' AND outcome = 'ok' AND target_id = 'com.example.alpha@1.0.0 on test-host' AND reason = 'fixed in the config'"
            ) == 1)
        #expect(try await sandbox.run(["audit", "verify"]).status == 0)

        #expect(try await alphaLoads(arguments), "the released quarantine still holds")
        let journal = try String(contentsOfFile: state + "/crashes", encoding: .utf8)
        #expect(journal.split(separator: "\n").contains { $0.hasPrefix("release\t") && $0.contains(Self.alpha) }, "\(journal)")
        // It holds across restarts, and new crashes quarantine the release again: the older release does not lift that.
        #expect(try await alphaLoads(arguments))
        try await crashIntoQuarantine(arguments)
        #expect(try await !alphaLoads(arguments), "an older release lifted a newer quarantine")
    }

    @Test func aReleaseMadeThroughTheServerReachesAHostOfTheServedBoard() async throws {
        let sandbox = try await CrashQuarantineTests().makeBoard()
        let served = try await OperationsAPITests.serve(sandbox)
        defer { Task { await served.stop() } }
        let hostsToken = try await sandbox.hostsToken()
        let boardKey = try await sandbox.boardKey()
        let arguments = [
            "--server", served.url, "--token", hostsToken, "--board-key", boardKey, "--cache",
            sandbox.root.appendingPathComponent("cache").path, "--host-id", "remote-1", "--plugins", "\(Self.alpha),\(Self.beta)",
        ]
        try await crashIntoQuarantine(arguments)

        // Someone who is neither an owner of alpha nor an admin is refused; nothing is written but the refusal.
        let other =
            try #require(
                try await sandbox.ok("access-token", "create", "--principal", "mallory", "--name", "laptop", "--json").json()
                    as? [String: Any])["token"] as? String
        let refused = try await served.run(["host", "release-quarantine", "remote-1", Self.alpha, "1.0.0"], token: other)
        #expect(refused.status == 1 && refused.stderr.contains("may not"), "\(refused)")
        #expect(try await count(sandbox, "SELECT count(*) FROM quarantine_releases") == 0)
        #expect(try await !alphaLoads(arguments))

        let released = try await served.run(["host", "release-quarantine", "remote-1", Self.alpha, "1.0.0", "--reason", "INC-9"])
        #expect(released.status == 0, "\(released)")
        #expect(
            try await count(
                sandbox, "SELECT count(*) FROM audit_log WHERE action = 'host.release-quarantine' AND outcome = 'ok' AND via IS NOT NULL")
                == 1)
        #expect(
            try await count(sandbox, "SELECT count(*) FROM audit_log WHERE action = 'host.release-quarantine' AND outcome = 'refused'") == 1
        )
        #expect(try await sandbox.run(["audit", "verify"]).status == 0)
        #expect(try await alphaLoads(arguments), "the remote host did not lift its quarantine")
    }
}
