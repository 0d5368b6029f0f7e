import Foundation
import PlugboardTestSupport
import Testing

/// A plug-in that crashes its host is noticed by the host's next process, and quarantined on that host after three
/// crashes; a host in safe mode loads nothing. Real processes: a crash cannot be tested in the test's own.
@Suite("hosts notice crashes (processes)", .timeLimit(.hangGuard), .serialized)
struct CrashQuarantineTests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let alpha = "com.example.alpha"
    static let beta = "com.example.beta"
    /// No crash report from the Swift runtime's backtracer: it only slows a crashing test host down.
    static let environment = ["SWIFT_BACKTRACE": "enable=no"]

    /// A board with alpha and beta enabled.
    func makeBoard() async throws -> Sandbox {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        try await sandbox.ok(
            "plugin", "register", sandbox.write("alpha.json", manifest(Self.alpha)), sandbox.write("beta.json", manifest(Self.beta)))
        try await sandbox.ok("plugin", "enable", Self.alpha)
        try await sandbox.ok("plugin", "enable", Self.beta)
        return sandbox
    }

    static func event(_ name: String, _ plugin: String) -> (String) -> Bool {
        { line in line.contains("\"event\":\"\(name)\"") && line.contains("\"plugin\":\"\(plugin)\"") }
    }

    /// The host's row for `plugin` in `plugboard plugin status --json`, once it has one whose state is `state`
    /// (waiting is a guard against hanging, not a measurement).
    func reported(_ sandbox: Sandbox, _ plugin: String, _ state: String) async throws -> [String: Any]? {
        let row: [String: Any] = try await eventually(
            "test-host's report of \(plugin) as \(state)", timeout: .eventDeadline, poll: .milliseconds(50)
        ) {
            let rows = try await sandbox.ok("plugin", "status", plugin, "--json").json() as? [[String: Any]] ?? []
            return rows.first { $0["host_id"] as? String == "test-host" && $0["state"] as? String == state }
        }
        return row
    }

    static func mode(_ path: String) -> Int? {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue
    }

    @Test func aReleaseThatCrashesTheHostThreeTimesIsReportedEachTimeAndThenQuarantined() async throws {
        let sandbox = try await makeBoard()
        let state = sandbox.root.appendingPathComponent("state").path
        let arguments = [
            "--db", sandbox.board, "--plugins", "\(Self.alpha),\(Self.beta)", "--state", state, "--crash-on-activate", Self.alpha,
        ]
        // Alpha activates first (dependency order, ties by id) and kills the process: three runs, each restarted.
        for run in 1...3 {
            let host = try ChildProcess(Self.hostBinary, arguments, environment: Self.environment)
            #expect(await host.waitForExit(timeout: .eventDeadline) != nil, "run \(run): the host did not crash: \(host.output)")
            #expect(!host.output.contains { $0.contains(#""event":"started""#) }, "run \(run): \(host.output)")
            // The report of the previous run's crash is logged (stderr, written at once) before alpha is entered again.
            let said = "died in the code of \(Self.alpha)@1.0.0 (activate"
            if run == 1 {
                #expect(!host.errorOutput.contains(said), "run 1 has no previous crash: \(host.errorOutput)")
            } else {
                #expect(
                    host.errorOutput.contains(said) && host.errorOutput.contains("\(run - 1) crash"),
                    "run \(run) did not report the crash of run \(run - 1): \(host.errorOutput)")
                #expect(!host.errorOutput.contains("quarantines"), "run \(run): \(host.errorOutput)")
            }
            #expect(host.errorOutput.contains("crashes in its activation"), "run \(run): \(host.errorOutput)")
        }
        #expect(Self.mode(state) == 0o700)
        #expect(Self.mode(state + "/crashes") == 0o600)

        // The fourth start reports the third crash and quarantines alpha@1.0.0; beta loads.
        let host = try ChildProcess(Self.hostBinary, arguments, environment: Self.environment)
        #expect(await host.waitForLine { $0.contains(#""event":"started""#) } != nil, "\(host.output) \(host.errorOutput)")
        #expect(
            await host.waitForLine { $0.contains(#""event":"warning""#) && $0.contains("3 crashes") && $0.contains("quarantines") } != nil,
            "\(host.output)")
        #expect(
            await host.waitForLine { Self.event("skipped", Self.alpha)($0) && $0.contains(#""reason":"quarantined""#) } != nil,
            "\(host.output)")
        #expect(await host.waitForLine(Self.event("loaded", Self.beta)) != nil, "\(host.output)")
        #expect(!host.output.contains(where: Self.event("loaded", Self.alpha)), "\(host.output)")

        let alpha = try await reported(sandbox, Self.alpha, "skipped")
        #expect(alpha?["reason_code"] as? String == "quarantined", "\(String(describing: alpha))")
        #expect((alpha?["reason"] as? String)?.contains("crashed this host 3 times") == true, "\(String(describing: alpha))")
        #expect(try await reported(sandbox, Self.beta, "loaded") != nil)
        #expect(await host.closeInput() == 0, "\(host.errorOutput)")

        // It stays quarantined on this host after a clean restart, without a new crash.
        let again = try ChildProcess(Self.hostBinary, arguments, environment: Self.environment)
        #expect(await again.waitForLine { Self.event("skipped", Self.alpha)($0) && $0.contains("quarantined") } != nil, "\(again.output)")
        #expect(await again.waitForLine(Self.event("loaded", Self.beta)) != nil, "\(again.output)")
        #expect(await again.closeInput() == 0, "\(again.errorOutput)")
        #expect(!again.errorOutput.contains("died in the code"), "a clean stop is not a crash: \(again.errorOutput)")
    }

    @Test func aHostInSafeModeLoadsNoPlugInAndSaysSo() async throws {
        let sandbox = try await makeBoard()
        let state = sandbox.root.appendingPathComponent("state").path
        let host = try ChildProcess(
            Self.hostBinary,
            [
                "--db", sandbox.board, "--plugins", "\(Self.alpha),\(Self.beta)", "--state", state, "--safe-mode", "--crash-on-activate",
                Self.alpha,
            ],
            environment: Self.environment)
        #expect(await host.waitForLine { $0.contains(#""event":"started""#) } != nil, "\(host.output) \(host.errorOutput)")
        #expect(await host.waitForLine { $0.contains(#""event":"warning""#) && $0.contains("safe mode") } != nil, "\(host.output)")
        for plugin in [Self.alpha, Self.beta] {
            #expect(
                await host.waitForLine { Self.event("skipped", plugin)($0) && $0.contains(#""reason":"safe_mode""#) } != nil,
                "\(host.output)")
            let row = try await reported(sandbox, plugin, "skipped")
            #expect(row?["reason_code"] as? String == "safe_mode", "\(String(describing: row))")
        }
        #expect(await host.closeInput() == 0, "\(host.errorOutput)")
        #expect(!host.output.contains { $0.contains(#""event":"loaded""#) }, "\(host.output)")
    }

    @Test func aHostSwitchesCompiledInVersionsAndReportsTheCrashOfOneBeforeItsCodeRunsAgain() async throws {
        let sandbox = try await makeBoard()
        let state = sandbox.root.appendingPathComponent("state").path
        let arguments = [
            "--db", sandbox.board, "--plugins", "\(Self.alpha),\(Self.beta)", "--versions", "1.0.0,1.1.0", "--state", state,
            "--crash-on-activate", "\(Self.alpha)@1.1.0",
        ]
        let loadedAlpha = { (version: String) in
            { (line: String) in Self.event("loaded", Self.alpha)(line) && line.contains(#""version":"\#(version)""#) }
        }
        // Only alpha@1.1.0 crashes: 1.0.0 loads.
        let first = try ChildProcess(Self.hostBinary, arguments, environment: Self.environment)
        #expect(await first.waitForLine(loadedAlpha("1.0.0")) != nil, "\(first.output) \(first.errorOutput)")
        // The board selects 1.1.0: the host switches to it in-process, and its activation kills the process.
        try await sandbox.ok("plugin", "register", sandbox.write("alpha-1.1.json", manifest(Self.alpha, "1.1.0")))
        #expect(await first.waitForExit(timeout: .eventDeadline) != nil, "the host did not crash: \(first.output)")
        // Said on stderr (the JSON event may not be printed before the process dies).
        #expect(first.errorOutput.contains("\(Self.alpha) moves from 1.0.0 to 1.1.0"), "\(first.errorOutput)")
        #expect(first.errorOutput.contains("crashes in its activation"), "\(first.errorOutput)")

        // Each start reports the crash, with its count, before it enters alpha@1.1.0 again and dies there again.
        for run in 1...2 {
            let host = try ChildProcess(Self.hostBinary, arguments, environment: Self.environment)
            #expect(await host.waitForExit(timeout: .eventDeadline) != nil, "run \(run): the host did not crash: \(host.output)")
            let row = try await reported(sandbox, Self.alpha, "failed")
            #expect(row?["reason_code"] as? String == "crashed", "run \(run): \(String(describing: row))")
            #expect(row?["version"] as? String == "1.1.0", "run \(run): \(String(describing: row))")
            #expect((row?["reason"] as? String)?.contains("\(run) crash") == true, "run \(run): \(String(describing: row))")
        }

        // Killed: the next start is back on 1.0.0.
        try await sandbox.ok("plugin", "kill", Self.alpha, "--version", "1.1.0", "--reason", "crashes hosts")
        let last = try ChildProcess(Self.hostBinary, arguments, environment: Self.environment)
        #expect(await last.waitForLine(loadedAlpha("1.0.0")) != nil, "\(last.output) \(last.errorOutput)")
        #expect(await last.closeInput() == 0, "\(last.errorOutput)")
    }
}
