import Foundation
import PlugboardModel
import PlugboardTestSupport
import Synchronization
import Testing

/// Staged rollouts with real processes: the CLI through `plugboard serve --admin` answers as on the board file, the
/// guard of `plugboard serve` aborts a release that crashes hosts with nobody watching, and serve's schedule takes a
/// healthy release to every host in steps.
@Suite("staged rollouts (processes)", .timeLimit(.hangGuard), .serialized)
struct RolloutProcessTests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let plugin = "com.example.release"

    /// The first of `prefix-0`, `prefix-1`, … that is in (or outside) the cohort of a 50% step, as hosts compute it.
    static func hostID(_ prefix: String, inCohort: Bool) -> String {
        (0..<1_000).lazy.map { "\(prefix)-\($0)" }.first { id in
            (RolloutCohort.bucket(hostID: id, pluginID: plugin) < 50 * 100) == inCohort
        }!
    }

    /// A board with release 1.0.0 of ``plugin``, enabled and released by rollouts (a rollout of one step of 100%).
    static func releasedBoard() async throws -> Sandbox {
        let sandbox = try await Sandbox.withBoard([manifest(plugin, "1.0.0")])
        try await sandbox.ok("plugin", "enable", plugin)
        try await sandbox.ok("rollout", "start", plugin, "1.0.0", "--steps", "100", "--every", "1s")
        return sandbox
    }

    /// Registers release 1.1.0 of ``plugin``.
    static func registerNext(_ sandbox: Sandbox) async throws {
        try await sandbox.ok("plugin", "register", try sandbox.write("release-1.1.0.json", manifest(plugin, "1.1.0")))
    }

    /// Whether `line` is the host's event that it loaded `version` of ``plugin``.
    static func loaded(_ version: String) -> (String) -> Bool {
        { line in
            line.contains(#""event":"loaded""#) && line.contains(#""plugin":"\#(plugin)""#) && line.contains(#""version":"\#(version)""#)
        }
    }

    /// The first rollout of ``plugin`` in `rollout status --json`.
    static func status(_ sandbox: Sandbox) async throws -> [String: Any] {
        let statuses = try await sandbox.ok("rollout", "status", plugin, "--json").json() as? [[String: Any]]
        return try #require(statuses?.first, "\(String(describing: statuses))")
    }

    static func state(_ status: [String: Any]) -> String? {
        (status["rollout"] as? [String: Any])?["state"] as? String
    }

    /// The rows of `audit --json` with `arguments`, parsed.
    static func audit(_ sandbox: Sandbox, _ arguments: String...) async throws -> [[String: Any]] {
        try await sandbox.ok(["audit", "--json"] + arguments).stdout.split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func theRolloutCommandsAnswerThroughTheAdminAPIAsOnTheBoardFile() async throws {
        let local = try await Sandbox.withBoard()
        let remote = try await Sandbox.withBoard()
        let served = try await OperationsAPITests.serve(remote)
        defer { Task { await served.stop() } }
        try await local.ok("access-token", "create", "--name", "tests")
        let files = try Sandbox()
        let first = try files.write("release-1.0.0.json", manifest(Self.plugin, "1.0.0"))
        let next = try files.write("release-1.1.0.json", manifest(Self.plugin, "1.1.0"))
        let id = Self.plugin
        // Steps of 10 minutes: neither side's schedule (serve's, every second, on the served board) moves them.
        let story: [[String]] = [
            ["plugin", "register", first], ["plugin", "enable", id], ["rollout", "start", id, "1.0.0", "--steps", "100", "--every", "1m"],
            ["plugin", "register", next],
            [
                "rollout", "start", id, "1.1.0", "--steps", "50,100", "--every", "10m", "--max-failure-rate", "10", "--min-hosts", "2",
                "--reason", "CHG-7",
            ],
            ["rollout", "start", id, "1.1.0", "--steps", "100", "--every", "1m"], ["rollout", "status", id, "--json"],
            ["rollout", "status", id], ["rollout", "pause", id, "--reason", "a look at the graphs"], ["rollout", "pause", id],
            ["rollout", "status", id, "--json"], ["rollout", "resume", id], ["rollout", "resume", id], ["rollout", "tick"],
            ["rollout", "tick", "--json"], ["rollout", "abort", id, "--reason", "INC-3"], ["rollout", "abort", id],
            ["rollout", "resume", id], ["rollout", "status", id, "--json"], ["rollout", "status", id],
            ["rollout", "status", "com.example.missing"],
        ]
        let roots = [local.root, remote.root, files.root]
        let results = try await OperationsAPITests.runBothWays(story, local: local, served: served, roots: roots)
        // The refusal of a second rollout while one runs: exit 1, one sentence, on both sides.
        let refused = try #require(results["plugboard rollout start \(id) 1.1.0 --steps 100 --every 1m"])
        #expect(refused.served.status == 1 && refused.served.stdout.isEmpty, "\(refused.served)")
        #expect(refused.served.stderr.contains("is running at 50% of hosts; abort it first"), "\(refused.served)")
        #expect(refused.file.stderr == refused.served.stderr)
        let ended = try await Self.status(remote)
        #expect(Self.state(ended) == "aborted" && ended["end_reason"] as? String == "INC-3", "\(ended)")

        // Each change made through the API is the person's, with how it arrived; on the file, without. (Refusals of a
        // conflict and answers that change nothing leave no row.)
        let rows = try await Self.audit(remote).filter { ($0["action"] as? String)?.hasPrefix("rollout.") == true }
        #expect(
            rows.compactMap { $0["action"] as? String }
                == ["rollout.start", "rollout.start", "rollout.pause", "rollout.resume", "rollout.abort"],
            "\(rows)")
        #expect(rows.allSatisfy { $0["via"] as? String == "token tests from 127.0.0.1" }, "\(rows)")
        let actor = try #require(rows.first?["actor"] as? String)
        let byActor = try await remote.ok("audit", "--actor", actor).stdout
        for action in ["rollout.start", "rollout.pause", "rollout.resume", "rollout.abort"] {
            #expect(
                byActor.split(separator: "\n").contains { $0.contains(action) && $0.contains("via token tests from 127.0.0.1") },
                "\(action): \(byActor)")
        }
        let localRows = try await Self.audit(local).filter { ($0["action"] as? String)?.hasPrefix("rollout.") == true }
        #expect(localRows.count == rows.count && localRows.allSatisfy { $0["via"] == nil }, "\(localRows)")
        for sandbox in [local, remote] {
            let verified = try await sandbox.run(["audit", "verify"])
            #expect(verified.status == 0, "\(verified)")
        }
    }

    @Test func aHealthyRolloutReachesEveryHostThroughServesSchedule() async throws {
        let sandbox = try await Self.releasedBoard()
        let (server, _, _) = try await RemoteHostTests().serve(sandbox)
        defer { Task { _ = await server.stop() } }
        let inside = [Self.hostID("cohort-a", inCohort: true), Self.hostID("cohort-b", inCohort: true)]
        let outside = [Self.hostID("cohort-a", inCohort: false), Self.hostID("cohort-b", inCohort: false)]
        var hosts: [String: ChildProcess] = [:]
        for hostID in inside + outside {
            hosts[hostID] = try ChildProcess(
                Self.hostBinary,
                [
                    "--db", sandbox.board, "--host-id", hostID, "--poll-ms", "50", "--plugins", Self.plugin, "--versions",
                    "1.0.0,1.1.0",
                ])
        }
        for (hostID, host) in hosts {
            #expect(await host.waitForLine(Self.loaded("1.0.0")) != nil, "\(hostID): \(host.output) \(host.errorOutput)")
        }
        try await Self.registerNext(sandbox)
        try await sandbox.ok("rollout", "start", Self.plugin, "1.1.0", "--steps", "50,100", "--every", "2s")

        var last: [String: Any] = [:]
        try await eventually("the rollout to complete (\(last))", poll: .milliseconds(100)) {
            last = try await Self.status(sandbox)
            return Self.state(last) == "completed"
        }
        for (hostID, host) in hosts {
            #expect(await host.waitForLine(Self.loaded("1.1.0")) != nil, "\(hostID): \(host.output) \(host.errorOutput)")
        }
        // The schedule's step is the one to 100%, by the schedule via serve.
        let steps = try await Self.audit(sandbox, "--actor", "plugboard/rollout-schedule")
        #expect(steps.count == 1, "\(steps)")
        let step = try #require(steps.first)
        #expect(step["action"] as? String == "rollout.step" && step["via"] as? String == "plugboard serve", "\(step)")
        let steppedAt = try #require((step["at"] as? String).flatMap(Timestamp.parse), "\(step)")
        // The cohort moved before the step, the others after it; each in its own process, which never restarted.
        for (hostID, host) in hosts {
            let output = host.stampedOutput
            let movedAt = try #require(output.first { Self.loaded("1.1.0")($0.line) }?.at, "\(hostID)")
            if inside.contains(hostID) {
                #expect(movedAt < steppedAt, "\(hostID) (in the cohort) moved at \(movedAt), after the step at \(steppedAt)")
            } else {
                #expect(movedAt > steppedAt, "\(hostID) (outside the cohort) moved at \(movedAt), before the step at \(steppedAt)")
            }
            #expect(output.filter { $0.line.contains(#""event":"started""#) }.count == 1, "\(hostID): \(host.output)")
            #expect(host.isRunning, "\(hostID): \(host.errorOutput)")
            #expect(await host.closeInput() == 0, "\(hostID): \(host.errorOutput)")
        }
        let verified = try await sandbox.run(["audit", "verify"])
        #expect(verified.status == 0, "\(verified)")
    }

    @Test func theGuardOfServeAbortsAReleaseThatCrashesHostsAndEveryHostReturns() async throws {
        let sandbox = try await Self.releasedBoard()
        let id = Self.plugin
        let (server, url, _) = try await RemoteHostTests().serve(sandbox)
        defer { Task { _ = await server.stop() } }
        let token = try await sandbox.hostsToken()
        let key = try await sandbox.boardKey()

        // Two hosts of the board file, two of the served board; one of each in the cohort of 50%.
        let cohort = [Self.hostID("local", inCohort: true), Self.hostID("served", inCohort: true)]
        let others = [Self.hostID("local", inCohort: false), Self.hostID("served", inCohort: false)]
        let common = ["--plugins", id, "--versions", "1.0.0,1.1.0", "--crash-on-activate", "\(id)@1.1.0"]
        var hosts: [SupervisedHost] = []
        defer { for host in hosts { Task { _ = await host.stop() } } }
        for hostID in cohort + others {
            let folder = sandbox.root.appendingPathComponent(hostID).path
            let arguments =
                hostID.hasPrefix("local")
                ? ["--db", sandbox.board, "--state", folder, "--poll-ms", "50"]
                : ["--server", url, "--token", token, "--board-key", key, "--cache", folder]
            hosts.append(
                try SupervisedHost(
                    hostID, Self.hostBinary, arguments + ["--host-id", hostID] + common, environment: CrashQuarantineTests.environment))
        }
        for host in hosts {
            #expect(await host.waitFor(Self.loaded("1.0.0")), "\(host.hostID): \(host.events) \(host.errorOutput)")
        }
        try await Self.registerNext(sandbox)
        let plugins = try await sandbox.ok("plugin", "list", "--json").stdout
        let lastSeq = try #require(try await sandbox.boardFile.int("SELECT max(seq) FROM audit_log"))
        try await sandbox.ok(
            "rollout", "start", id, "1.1.0", "--steps", "50,100", "--every", "10m", "--max-failure-rate", "10")

        // Nobody acts: the cohort's hosts crash, their supervisor restarts them, they report it, and the guard aborts.
        var status: [String: Any] = [:]
        try await eventually("the guard to abort the rollout (\(status))", poll: .milliseconds(300)) {
            status = try await Self.status(sandbox)
            return Self.state(status) == "aborted"
        }
        #expect(status["ended_by"] as? String == "plugboard/rollout-guard", "\(status)")
        let reason = status["end_reason"] as? String ?? ""
        #expect(reason.contains("the guard aborted at 50% of hosts"), "\(reason)")
        #expect(
            reason.range(of: #"has [1-9]\d* of \d+ hosts? failing .* [1-9]\d* crashed"#, options: .regularExpression) != nil, "\(reason)")
        let guardRows = try await Self.audit(sandbox, "--actor", "plugboard/rollout-guard")
        #expect(guardRows.compactMap { $0["action"] as? String } == ["rollout.abort"], "\(guardRows)")
        #expect(guardRows.first?["via"] as? String == "plugboard serve", "\(guardRows)")
        let abortedAt = try #require((status["ended_at"] as? String).flatMap(Timestamp.parse), "\(status)")

        // Every host runs 1.0.0 again in a live process, and stays so: no crash once all are back.
        for host in hosts {
            try await eventually("\(host.hostID) back on 1.0.0 (\(host.events.suffix(6)) \(host.errorOutput.suffix(2_000)))") {
                let last = host.current.output.last { $0.contains(#""event":"loaded""#) }
                return host.current.isRunning && last.map(Self.loaded("1.0.0")) == true
            }
        }
        let crashes = hosts.map(\.crashes.count)
        // The point is what does not happen (no crash once every host is back): a fixed wait.
        try await Task.sleep(for: .seconds(3))
        #expect(hosts.map(\.crashes.count) == crashes, "hosts crashed after the abort: \(hosts.map(\.crashes))")
        for host in hosts {
            #expect(host.current.isRunning, "\(host.hostID): \(host.errorOutput.suffix(2_000))")
            #expect(host.crashes.allSatisfy { $0.at < abortedAt + 10 }, "\(host.hostID) crashed long after the abort")
        }
        // The cohort's hosts crashed, by a signal; the others never ran 1.1.0 nor crashed.
        for host in hosts where cohort.contains(host.hostID) {
            #expect(!host.crashes.isEmpty && host.crashes.allSatisfy(\.bySignal), "\(host.hostID): \(host.crashes)")
        }
        for host in hosts where others.contains(host.hostID) {
            #expect(host.crashes.isEmpty, "\(host.hostID) crashed: \(host.errorOutput.suffix(2_000))")
            #expect(!host.events.contains { Self.loaded("1.1.0")($0.line) }, "\(host.hostID): \(host.events)")
        }

        // The guard changed the rollout and nothing else.
        let since = try await sandbox.boardFile.strings(
            "SELECT action || ' by ' || actor FROM audit_log WHERE seq > ? ORDER BY seq", .integer(Int64(lastSeq)))
        #expect(
            since.count == 2 && since.first?.hasPrefix("rollout.start by ") == true
                && since.last == "rollout.abort by plugboard/rollout-guard", "\(since)")
        #expect(try await sandbox.ok("plugin", "list", "--json").stdout == plugins)
        let verified = try await sandbox.run(["audit", "verify"])
        #expect(verified.status == 0, "\(verified)")
        for host in hosts { #expect(await host.stop() == 0, "\(host.hostID): \(host.errorOutput.suffix(2_000))") }
    }
}

/// A test host restarted whenever its process dies, as a supervisor (systemd) would, with what every one of its
/// processes printed, each line stamped with the time it was read.
final class SupervisedHost: Sendable {
    /// One death of the host's process.
    struct Crash: Sendable {
        let at: Date
        let bySignal: Bool
    }

    private struct State: Sendable {
        var processes: [ChildProcess] = []
        var crashes: [Crash] = []
        var stopping = false
    }

    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    let hostID: String
    private let shared: Shared
    private let supervisor: Task<Void, Never>

    /// Starts the host `binary` with `arguments`, with `environment`, and supervises it.
    init(_ hostID: String, _ binary: String, _ arguments: [String], environment: [String: String]) throws {
        self.hostID = hostID
        let shared = Shared()
        self.shared = shared
        let first = try ChildProcess(binary, arguments, environment: environment)
        shared.state.withLock { $0.processes.append(first) }
        supervisor = Task.detached {
            while true {
                let current = shared.state.withLock { $0.processes[$0.processes.count - 1] }
                while await current.waitForExit(timeout: .seconds(3_600)) == nil, !Task.isCancelled {}
                let stopping = shared.state.withLock { state in
                    if !state.stopping { state.crashes.append(Crash(at: Date(), bySignal: current.exitedBySignal)) }
                    return state.stopping
                }
                if stopping { return }
                // A supervisor's restart delay (systemd's RestartSec), part of what is simulated.
                try? await Task.sleep(for: .milliseconds(200))
                let started = shared.state.withLock { state -> Bool in
                    guard !state.stopping, let next = try? ChildProcess(binary, arguments, environment: environment) else { return false }
                    state.processes.append(next)
                    return true
                }
                if !started { return }
            }
        }
    }

    /// Every line every process of the host printed, in order, with the time it was read.
    var events: [(at: Date, line: String)] { shared.state.withLock { $0.processes }.flatMap(\.stampedOutput) }

    /// The host's current process.
    var current: ChildProcess { shared.state.withLock { $0.processes[$0.processes.count - 1] } }

    /// The deaths of its processes so far.
    var crashes: [Crash] { shared.state.withLock { $0.crashes } }

    /// What its processes printed on stderr (complete for those that exited).
    var errorOutput: String { shared.state.withLock { $0.processes }.map(\.errorOutput).joined(separator: "\n--- restarted ---\n") }

    /// Waits until a line of any of its processes satisfies `match`: a guard against hanging, not a measurement.
    func waitFor(timeout: Duration = .eventDeadline, _ match: (String) -> Bool) async -> Bool {
        (try? await eventually("a line of \(hostID)", timeout: timeout, poll: .milliseconds(50)) { events.contains { match($0.line) } })
            != nil
    }

    /// Stops supervising, and stops the current process (closing its input); returns its exit status.
    func stop() async -> Int32? {
        let current = shared.state.withLock { state in
            state.stopping = true
            return state.processes[state.processes.count - 1]
        }
        let status = await current.closeInput(timeout: .seconds(60))
        await supervisor.value
        return status
    }
}
