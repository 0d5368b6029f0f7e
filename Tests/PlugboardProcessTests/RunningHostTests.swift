import Foundation
import PlugboardTestSupport
import Testing

/// A running host and the CLI are separate processes in every real deployment; these tests run them so.
///
/// The defect they guard against: opening a board used to `open()` and `close()` the board file before SQLite
/// opened it. On Linux that drops every POSIX lock the process holds on the file, SQLite's included, so the next
/// CLI process to exit believed it was the last connection, checkpointed and deleted the WAL under the running
/// host, which from then on read a private, deleted WAL: it never saw another kill switch, and its load reports
/// never reached the board.
@Suite("a running host and other processes", .timeLimit(.hangGuard), .serialized)
struct RunningHostTests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let alpha = "com.example.alpha"
    static let beta = "com.example.beta"

    /// A board with two enabled plug-ins (alpha keeps a secret, beta is gated by a flag), made with the CLI.
    func makeBoard() async throws -> Sandbox {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        try await sandbox.ok(
            "plugin", "register", sandbox.write("alpha.json", manifest(Self.alpha, "1.0.0", #""capabilities":["secure-storage","flags"]"#)))
        try await sandbox.ok("plugin", "register", sandbox.write("beta.json", manifest(Self.beta, "1.0.0", #""gate":"beta.gate""#)))
        try await sandbox.ok("plugin", "enable", Self.alpha)
        try await sandbox.ok("plugin", "enable", Self.beta)
        try await sandbox.ok("flag", "create", "beta.gate")
        try await sandbox.ok("flag", "rollout", "beta.gate", "100")
        try await sandbox.ok("flag", "enable", "beta.gate")
        let secret = try await sandbox.run(["secret", "set", "--plugin", Self.alpha, "activations", "--from-file", "-"], stdin: "0")
        #expect(secret.status == 0, "\(secret)")
        return sandbox
    }

    /// What the host last reported for `plugin`, as `plugboard plugin status --json` shows it.
    func reportedState(_ sandbox: Sandbox, _ plugin: String) async throws -> String? {
        let rows = try await sandbox.ok("plugin", "status", plugin, "--json").json() as? [[String: Any]] ?? []
        return rows.first { $0["host_id"] as? String == "test-host" }?["state"] as? String
    }

    /// Waits (a guard against hanging, not a measurement) until the host's report for `plugin` reaches the board.
    func waitForReport(_ sandbox: Sandbox, _ plugin: String, _ state: String) async throws -> Bool {
        try await eventually("test-host's report of \(plugin) as \(state)") {
            try await reportedState(sandbox, plugin) == state
        }
        return true
    }

    func expectHostHoldsTheBoard(
        _ host: ChildProcess, _ sandbox: Sandbox, _ when: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let deleted = BoardFileHold.deletedBoardFiles(pid: host.pid, board: sandbox.board)
        #expect(deleted.isEmpty, "after \(when) the host holds deleted board files: \(deleted)", sourceLocation: sourceLocation)
        #expect(
            BoardFileHold.holdsLock(pid: host.pid, on: sandbox.board), "after \(when) the host holds no lock on the board file",
            sourceLocation: sourceLocation)
    }

    static func event(_ name: String, _ plugin: String) -> (String) -> Bool {
        { line in line.contains("\"event\":\"\(name)\"") && line.contains("\"plugin\":\"\(plugin)\"") }
    }

    @Test("every kill switch and gate change reaches the host; its reports reach the board", arguments: [false, true])
    func everyChangeReachesARunningHost(boardPerService: Bool) async throws {
        let sandbox = try await makeBoard()
        let host = try ChildProcess(
            Self.hostBinary,
            ["--db", sandbox.board, "--plugins", "\(Self.alpha),\(Self.beta)", "--counting", Self.alpha, "--poll-ms", "50"]
                + (boardPerService ? ["--board-per-service"] : []))
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "the host did not start: \(host.errorOutput)")
        // The host prints its events from a task of their own, so "started" may come before them: wait for each.
        for plugin in [Self.alpha, Self.beta] {
            #expect(await host.waitForLine(Self.event("loaded", plugin)) != nil, "\(plugin) did not load: \(host.output)")
        }
        expectHostHoldsTheBoard(host, sandbox, "start")

        // Other processes open and close the board between changes: reads of every kind, then a change.
        let reads: [[String]] = [
            ["plugin", "list"], ["flag", "list"], ["audit", "verify"], ["secret", "list", "--plugin", Self.alpha], ["plugin", "status"],
        ]
        var latencies: [Duration] = []
        for round in 0..<4 {
            for plugin in [Self.alpha, Self.beta] {
                try await sandbox.ok(reads[round % reads.count])
                try await sandbox.ok(reads[(round + 2) % reads.count])
                var seen = host.output.count
                try await sandbox.ok("plugin", "kill", plugin, "--reason", "round \(round)")
                let killed = ContinuousClock.now
                let deactivated = await host.waitForLine(after: seen, Self.event("deactivated", plugin))
                #expect(
                    deactivated != nil,
                    "round \(round): the host never deactivated \(plugin) after its kill switch: \(host.output.suffix(5))")
                latencies.append(ContinuousClock.now - killed)
                #expect(
                    try await waitForReport(sandbox, plugin, "deactivated"),
                    "round \(round): the host's report for \(plugin) never reached the board")
                expectHostHoldsTheBoard(host, sandbox, "killing \(plugin) in round \(round)")

                try await sandbox.ok(reads[(round + 1) % reads.count])
                seen = host.output.count
                try await sandbox.ok("plugin", "revive", plugin, "--reason", "round \(round) over")
                #expect(
                    await host.waitForLine(after: seen, Self.event("loaded", plugin)) != nil,
                    "round \(round): \(plugin) was not loaded again after its revive")
                #expect(
                    try await waitForReport(sandbox, plugin, "loaded"),
                    "round \(round): the host's report of \(plugin) loaded never reached the board")
                expectHostHoldsTheBoard(host, sandbox, "reviving \(plugin) in round \(round)")
            }
            // A flag change reaches the host's board-backed flags: the gate turns beta off, then on.
            var seen = host.output.count
            try await sandbox.ok("flag", "disable", "beta.gate")
            #expect(
                await host.waitForLine(after: seen) { Self.event("deactivated", Self.beta)($0) && $0.contains("gate_off") } != nil,
                "round \(round): the gate turned off never reached the host")
            seen = host.output.count
            try await sandbox.ok("flag", "enable", "beta.gate")
            #expect(
                await host.waitForLine(after: seen, Self.event("loaded", Self.beta)) != nil,
                "round \(round): the gate turned on never reached the host")
            expectHostHoldsTheBoard(host, sandbox, "the gate changes of round \(round)")
        }
        #expect(await host.closeInput() == 0, "the host did not stop cleanly: \(host.errorOutput)")
        print(
            "kill switch to deactivation, from the CLI's exit (poll 50 ms): max \(latencies.max() ?? .zero) over \(latencies.count) kills")

        // Alpha counted each activation in its secure storage through the shared board: 1 at start + 4 revives.
        let activations = try await sandbox.ok("secret", "get", "--plugin", Self.alpha, "activations").stdout
        #expect(activations == "5", "alpha's activation count in its secure storage: \(activations)")

        // After all this the board is intact and its audit log verifies.
        let integrity = try await sandbox.boardFile.strings("PRAGMA integrity_check")
        #expect(integrity == ["ok"])
        try await sandbox.ok("audit", "verify")
    }
}
