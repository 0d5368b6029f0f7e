import Foundation
import PlugboardTestSupport
import Testing

/// `plugboard rollout …` end to end: an operator's story, usage errors (exit 2), refusals (exit 1) and the schedule's
/// steps run by `rollout tick`, all in the audit log.
@Suite("rollouts from the command line", .timeLimit(.hangGuard))
struct RolloutCLITests {
    static let plugin = "com.example.a"

    /// A board with releases 1.0.0 and 1.1.0 of ``plugin``, enabled, released by rollouts from 1.0.0 on.
    static func board() async throws -> Sandbox {
        let sandbox = try await Sandbox.withBoard([manifest(plugin, "1.0.0"), manifest(plugin, "1.1.0")])
        try await sandbox.ok("plugin", "enable", plugin)
        return sandbox
    }

    /// The lines of stderr that begin with `error:`.
    static func errors(_ result: CLIResult) -> [Substring] {
        result.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
    }

    @Test func anOperatorStartsWatchesPausesResumesAndAbortsARollout() async throws {
        let sandbox = try await Self.board()
        let started = try await sandbox.ok(
            "rollout", "start", Self.plugin, "1.1.0", "--steps", "1,10,50,100", "--every", "10m", "--max-failure-rate", "2.5",
            "--min-hosts", "3", "--reason", "CHG-12")
        #expect(
            started.stdout.contains("Started the rollout of com.example.a@1.1.0 in default: step 1 of 4, 1% of hosts run 1.1.0")
                && started.stdout.contains("the others stay on 1.0.0"), "\(started)")
        #expect(started.stdout.contains("above 2.5% failing of at least 3 hosts"), "\(started)")

        let status = try await sandbox.ok("rollout", "status", Self.plugin).stdout
        #expect(status.contains("com.example.a@1.1.0 in default: running, step 1 of 4 (1% of hosts); previous 1.0.0"), "\(status)")
        #expect(status.contains("steps 1%, 10%, 50%, 100% every 10m; the guard aborts above 2.5% failing of at least 3 hosts"), "\(status)")
        #expect(status.contains("next step due at "), "\(status)")
        let table = try #require(status.split(separator: "\n").first { $0.contains("STEP") }, "\(status)")
        #expect(table.contains("HOSTS") && table.contains("CRASHED") && table.contains("QUARANTINED") && table.contains("PREVIOUS RATE"))
        #expect(status.split(separator: "\n").contains { $0.contains("1 (now)") && $0.contains("1%") }, "\(status)")
        #expect(status.contains("hosts running it now: none reported"), "\(status)")

        let json = try await sandbox.ok("rollout", "status", Self.plugin, "--json").json() as? [[String: Any]]
        let first = try #require(json?.first, "\(String(describing: json))")
        let rollout = try #require(first["rollout"] as? [String: Any], "\(first)")
        #expect(rollout["state"] as? String == "running" && rollout["version"] as? String == "1.1.0", "\(rollout)")
        #expect(rollout["previous"] as? String == "1.0.0" && rollout["steps"] as? [Int] == [1, 10, 50, 100], "\(rollout)")

        let paused = try await sandbox.ok("rollout", "pause", Self.plugin, "--reason", "a look at the graphs")
        #expect(paused.stdout.contains("Paused the rollout of com.example.a@1.1.0 in default at 1% of hosts"), "\(paused)")
        #expect(try await sandbox.ok("rollout", "status", Self.plugin).stdout.contains(": paused, step 1 of 4"))
        let pausedAgain = try await sandbox.ok("rollout", "pause", Self.plugin)
        #expect(pausedAgain.stdout.contains("already paused; nothing changed"), "\(pausedAgain)")
        let resumed = try await sandbox.ok("rollout", "resume", Self.plugin)
        #expect(resumed.stdout.contains("Resumed the rollout of com.example.a@1.1.0 in default at 1% of hosts"), "\(resumed)")

        let aborted = try await sandbox.ok("rollout", "abort", Self.plugin, "--reason", "INC-4")
        #expect(aborted.stdout.contains("every host returns to com.example.a@1.0.0"), "\(aborted)")
        let abortedAgain = try await sandbox.ok("rollout", "abort", Self.plugin)
        #expect(abortedAgain.stdout.contains("already aborted; nothing changed") && abortedAgain.stderr.isEmpty, "\(abortedAgain)")
        let ended = try await sandbox.ok("rollout", "status", Self.plugin).stdout
        #expect(ended.contains(": aborted; previous 1.0.0") && ended.contains("INC-4"), "\(ended)")
        #expect(!ended.contains("next step due"), "\(ended)")

        let actions = try await sandbox.boardFile.strings(
            "SELECT action || ' ' || coalesce(reason, '') FROM audit_log WHERE action LIKE 'rollout.%' ORDER BY seq")
        #expect(
            actions == ["rollout.start CHG-12", "rollout.pause a look at the graphs", "rollout.resume ", "rollout.abort INC-4"],
            "\(actions)")
        let verify = try await sandbox.run(["audit", "verify"])
        #expect(verify.status == 0, "\(verify)")
    }

    @Test(
        arguments: [
            (["--steps", "1,50", "--every", "10m"], "--steps must be"),
            (["--steps", "1,,100", "--every", "10m"], "--steps '1,,100' is not a list of percentages"),
            (["--steps", "50,10,100", "--every", "10m"], "--steps must be"),
            (["--steps", "1,100", "--every", "0s"], "--every '0s' is not a duration"),
            (["--steps", "1,100", "--every", "10"], "--every '10' is not a duration"),
            (["--steps", "1,100", "--every", "366d"], "--every '366d' is not a duration"),
            (["--steps", "1,100", "--every", "1m", "--max-failure-rate", "101"], "--max-failure-rate '101' is not a percentage"),
            (["--steps", "1,100", "--every", "1m", "--max-failure-rate", "2.555"], "--max-failure-rate '2.555' is not a percentage"),
            (["--steps", "1,100", "--every", "1m", "--min-hosts", "0"], "--min-hosts must be"),
        ])
    func malformedOptionsAreUsageErrors(_ options: [String], _ says: String) async throws {
        let sandbox = try await Self.board()
        let before = try await sandbox.snapshot()
        let result = try await sandbox.run(["rollout", "start", Self.plugin, "1.1.0"] + options)
        #expect(result.status == 2 && result.stdout.isEmpty, "\(options): \(result)")
        let errors = Self.errors(result)
        #expect(errors.count == 1 && errors.first?.contains(says) == true, "\(options): \(result.stderr)")
        #expect(try await sandbox.snapshot() == before, "\(options)")
    }

    @Test func refusalsExitOneWithOneSentence() async throws {
        let sandbox = try await Self.board()
        let refusals: [([String], String)] = [
            (["rollout", "start", "com.example.zzz", "1.0.0", "--steps", "100", "--every", "1m"], "com.example.zzz"),
            (["rollout", "start", Self.plugin, "9.9.9", "--steps", "100", "--every", "1m"], "com.example.a@9.9.9 is not registered"),
            (["rollout", "start", Self.plugin, "1.0.0", "--steps", "100", "--every", "1m"], "1.1.0, a later release, is live"),
            (["rollout", "pause", Self.plugin], "com.example.a has no rollout in default"),
            (["rollout", "status", "com.example.zzz"], "com.example.zzz"),
        ]
        for (arguments, says) in refusals {
            let result = try await sandbox.run(arguments)
            #expect(result.status == 1 && result.stdout.isEmpty, "\(arguments): \(result)")
            #expect(Self.errors(result).count == 1 && result.stderr.contains(says), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        let none = try await sandbox.ok("rollout", "status", Self.plugin)
        #expect(none.stdout.contains("com.example.a has no rollout; start one with plugboard rollout start."), "\(none)")

        try await sandbox.ok("rollout", "start", Self.plugin, "1.1.0", "--steps", "1,100", "--every", "1h")
        let twice = try await sandbox.run(["rollout", "start", Self.plugin, "1.1.0", "--steps", "100", "--every", "1m"])
        #expect(twice.status == 1 && twice.stderr.contains("is running at 1% of hosts; abort it first"), "\(twice)")

        try await sandbox.ok("plugin", "register", try sandbox.write("b.json", manifest("com.example.b", "1.0.0")))
        let completed = try await sandbox.ok("rollout", "start", "com.example.b", "1.0.0", "--steps", "100", "--every", "1m")
        #expect(completed.stdout.contains("Rolled out com.example.b@1.0.0 in default to every host at once"), "\(completed)")
        let abort = try await sandbox.run(["rollout", "abort", "com.example.b"])
        #expect(abort.status == 1 && abort.stderr.contains("completed, so there is nothing to abort"), "\(abort)")
        #expect(abort.stderr.contains("plugboard plugin kill com.example.b --version 1.0.0"), "\(abort)")
    }

    @Test func tickStepsADueRolloutAsTheSchedule() async throws {
        let sandbox = try await Self.board()
        let idle = try await sandbox.ok("rollout", "tick")
        #expect(idle.stdout.contains("Nothing to do"), "\(idle)")
        try await sandbox.ok("rollout", "start", Self.plugin, "1.1.0", "--steps", "1,50,100", "--every", "1s")
        // The next step is due a second after the start: `tick` runs until it is (a tick with nothing due changes nothing).
        let tick: CLIResult = try await eventually("the rollout's second step to be due", poll: .milliseconds(100)) {
            let tick = try await sandbox.ok("rollout", "tick")
            return tick.stdout.contains("Nothing to do") ? nil : tick
        }
        #expect(
            tick.stdout.contains("The rollout of com.example.a@1.1.0 in default moved to step 2 of 3: 50% of hosts"), "\(tick)")
        let status = try await sandbox.ok("rollout", "status", Self.plugin).stdout
        #expect(status.contains("running, step 2 of 3 (50% of hosts)"), "\(status)")
        #expect(status.split(separator: "\n").contains { $0.contains("plugboard/rollout-schedule") && $0.contains("(now)") }, "\(status)")

        let audit = try await sandbox.ok("audit", "--actor", "plugboard/rollout-schedule", "--json").stdout
        let rows = audit.split(separator: "\n").filter { !$0.isEmpty }
        #expect(rows.count == 1 && rows.first?.contains("rollout.step") == true, "\(audit)")

        let json: [[String: Any]] = try await eventually("the rollout's last step to be due", poll: .milliseconds(100)) {
            let ticks = try await sandbox.ok("rollout", "tick", "--json").json() as? [[String: Any]]
            return ticks?.isEmpty == false ? ticks : nil
        }
        #expect(json.first?["action"] as? String == "completed", "\(json)")
        #expect(try await sandbox.ok("rollout", "status", Self.plugin).stdout.contains(": completed; previous 1.0.0"))
        let verify = try await sandbox.run(["audit", "verify"])
        #expect(verify.status == 0, "\(verify)")
    }

    @Test(
        arguments: [
            ("UPDATE rollouts SET step = 2", "rollouts: row com.example.a in default was changed outside the log"),
            ("DELETE FROM rollouts", "rollouts: row com.example.a in default was removed outside the log"),
        ])
    func anEditOfARolloutBehindTheLogIsNamed(_ sql: String, _ named: String) async throws {
        let sandbox = try await Self.board()
        try await sandbox.ok("rollout", "start", Self.plugin, "1.1.0", "--steps", "1,10,100", "--every", "1h")
        try await sandbox.boardFile.execute(sql)
        let result = try await sandbox.run(["audit", "verify"])
        #expect(result.status == 1, "\(sql): \(result)")
        let line = try #require(result.stderr.split(separator: "\n").first { $0.contains(named) }, "\(sql): \(result.stderr)")
        #expect(line.contains("com.example.a in default"), "\(line)")
    }
}
