import Foundation
import PlugboardTestSupport
import Testing

/// The edges of a run, with real processes: a host that stops right after it started reports that it stopped and
/// loads nothing after, a token works as soon as `token create` returns, and a port in use is said in words.
@Suite("stopping and starting (processes)", .timeLimit(.hangGuard))
struct StoppingAndStartingTests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let notes = "com.example.notes"

    /// A board with notes enabled.
    func makeBoard() async throws -> Sandbox {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        try await sandbox.ok("plugin", "register", sandbox.write("notes.json", manifest(Self.notes)))
        try await sandbox.ok("plugin", "enable", Self.notes)
        return sandbox
    }

    /// Starts `plugboard serve` on a free port (polling the board at most once a second, so that nothing the test sees
    /// comes from the server's own board check) and returns it with its base URL.
    func serve(_ sandbox: Sandbox, port: Int = 0, poll: Int = 20) async throws -> (ChildProcess, String) {
        let server = try ChildProcess(
            Sandbox.binary,
            ["serve", "--db", sandbox.board, "--listen", "127.0.0.1:\(port)", "--log-level", "warning", "--poll-ms", String(poll)])
        let bound = try await server.servedPort()
        return (server, "http://127.0.0.1:\(bound)")
    }

    /// The events a test host printed, as (event, plugin, reason).
    static func events(_ host: ChildProcess) -> [(event: String, plugin: String?, reason: String?)] {
        host.output.compactMap { line in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: String], let event = object["event"]
            else { return nil }
            return (event, object["plugin"], object["reason"])
        }
    }

    /// Waits until the lines the host printed before it exited are read (a guard against hanging, not a measurement).
    static func waitForStopped(_ host: ChildProcess) async throws {
        try await eventually("the host's last line, \"stopped\" (\(host.output))", poll: .milliseconds(10)) {
            host.output.contains { $0.contains(#""event":"stopped""#) }
        }
    }

    /// Checks a run of a test host whose stdin was closed at once: it loaded notes, deactivated it because it stops,
    /// loaded nothing after, and ended with "stopped".
    func expectCleanStop(_ host: ChildProcess, sourceLocation: SourceLocation = #_sourceLocation) {
        let events = Self.events(host)
        let names = events.map(\.event).filter { $0 != "changed" && $0 != "warning" }
        #expect(names.last == "stopped", "\(host.output) \(host.errorOutput)", sourceLocation: sourceLocation)
        guard let deactivated = events.firstIndex(where: { $0.event == "deactivated" }) else {
            Issue.record("no deactivation: \(host.output) \(host.errorOutput)", sourceLocation: sourceLocation)
            return
        }
        #expect(events[deactivated].reason == "host_stopping", "\(host.output)", sourceLocation: sourceLocation)
        #expect(
            !events[deactivated...].contains { $0.event == "loaded" }, "a plug-in loaded after the host stopped it: \(host.output)",
            sourceLocation: sourceLocation)
    }

    /// Whether the host's first read of the server failed (`cannot read the server … unreachable`), so that it never had
    /// a snapshot to load from.
    static func missedTheServer(_ host: ChildProcess) -> Bool {
        host.output.contains { $0.contains(#""event":"warning""#) && $0.contains("unreachable") && $0.contains("holds no snapshot yet") }
    }

    /// The host's state for notes in `plugboard plugin status --json`, once the board has a report from it.
    func reportedState(_ sandbox: Sandbox, host: String) async throws -> (state: String?, reason: String?) {
        try await eventually("\(host)'s report of notes, not as loaded", poll: .milliseconds(50)) {
            let rows = try await sandbox.ok("plugin", "status", Self.notes, "--json").json() as? [[String: Any]] ?? []
            guard let row = rows.first(where: { $0["host_id"] as? String == host }), row["state"] as? String != "loaded" else { return nil }
            return (row["state"] as? String, row["reason_code"] as? String)
        }
    }

    @Test func aServedHostWhoseStdinIsClosedStopsCleanlyAndIsNotListedAsLoaded() async throws {
        let sandbox = try await makeBoard()
        let token = try await sandbox.hostsToken()
        let key = try await sandbox.boardKey()
        let (server, url) = try await serve(sandbox)
        // As the issue ran it: several times, since the bug was a race with the first reconciliation. On a busy machine
        // a host's first read can miss its 1 s connect timeout: it then loads nothing and stops with nothing to
        // deactivate, which must leave no row of it as loaded; such a run does not count, and another is made.
        var raced = 0
        for run in 1...8 where raced < 3 {
            let host = try ChildProcess(
                Self.hostBinary,
                [
                    "--server", url, "--token", token, "--board-key", key,
                    "--cache", sandbox.root.appendingPathComponent("cache-\(run)").path,
                    "--host-id", "served-\(run)", "--plugins", Self.notes,
                ])
            let status = await host.closeInput()
            #expect(status == 0, "\(host.errorOutput)")
            try await Self.waitForStopped(host)
            guard Self.events(host).contains(where: { $0.event == "loaded" }) || !Self.missedTheServer(host) else {
                #expect(Self.events(host).last?.event == "stopped", "\(host.output)")
                let rows = try await sandbox.ok("plugin", "status", Self.notes, "--json").json() as? [[String: Any]] ?? []
                #expect(!rows.contains { $0["host_id"] as? String == "served-\(run)" && $0["state"] as? String == "loaded" }, "\(rows)")
                continue
            }
            raced += 1
            expectCleanStop(host)
            let reported = try await reportedState(sandbox, host: "served-\(run)")
            #expect(reported.state == "deactivated" && reported.reason == "host_stopping", "\(reported)")
        }
        #expect(raced == 3, "the host reached the server in \(raced) of 8 runs")
        #expect(await server.stop() == 0)
    }

    @Test func aHostOnTheBoardFileWhoseStdinIsClosedStopsCleanly() async throws {
        let sandbox = try await makeBoard()
        let host = try ChildProcess(Self.hostBinary, ["--db", sandbox.board, "--host-id", "local", "--plugins", Self.notes])
        #expect(await host.closeInput() == 0, "\(host.errorOutput)")
        try await Self.waitForStopped(host)
        expectCleanStop(host)
        let reported = try await reportedState(sandbox, host: "local")
        #expect(reported.state == "deactivated" && reported.reason == "host_stopping", "\(reported)")
    }

    @Test func theTestHostSaysHowItRuns() async throws {
        let sandbox = try Sandbox()
        let help = try await sandbox.run(["--help"], db: false, executable: Self.hostBinary)
        #expect(help.status == 0)
        #expect(help.stdout.contains("It runs while its standard input is open") && help.stdout.contains("--until-signal"), "\(help)")
    }

    @Test func withUntilSignalTheTestHostOutlivesItsStdinAndStopsOnSIGTERM() async throws {
        let sandbox = try await makeBoard()
        let host = try ChildProcess(
            Self.hostBinary, ["--db", sandbox.board, "--host-id", "signalled", "--plugins", Self.notes, "--until-signal"])
        #expect(await host.waitForLine { $0.contains(#""event":"started""#) } != nil, "\(host.errorOutput)")
        // Its stdin closes and it keeps running (nil: it had not exited after 2 s, and was sent SIGTERM).
        #expect(await host.closeInput(timeout: .seconds(2)) == nil, "\(host.output)")
        try await Self.waitForStopped(host)
        expectCleanStop(host)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func aNewTokenWorksAsSoonAsTokenCreateReturns() async throws {
        let sandbox = try await makeBoard()
        // The server checks the board once a second: a token that works at once did not wait for that check.
        let (server, url) = try await serve(sandbox, poll: 1000)
        for name in ["first", "second", "third"] {
            let created = try await sandbox.ok("token", "create", "--name", name, "--json").json() as? [String: Any]
            let token = try #require(created?["token"] as? String)
            let (status, body) = try await ServeProcessTests.curl(["-H", "Authorization: \(token)", "\(url)/api/client/features"])
            #expect(status == 200, "\(name): \(status) \(body)")
        }
        #expect(try await ServeProcessTests.curl(["-H", "Authorization: *:default.pb_wrong", "\(url)/api/client/features"]).0 == 401)
        #expect(await server.stop() == 0)
    }

    @Test func aPortInUseIsSaidInWords() async throws {
        let sandbox = try await makeBoard()
        let (server, url) = try await serve(sandbox)
        let port = try #require(url.split(separator: ":").last.map(String.init))
        let second = try await sandbox.run(["serve", "--listen", "127.0.0.1:\(port)"])
        #expect(second.status == 1, "\(second)")
        #expect(second.stderr.hasPrefix("error: cannot serve on 127.0.0.1:\(port): the port is already in use"), "\(second.stderr)")
        #expect(!second.stderr.contains("bind(") && !second.stderr.contains("errno"), "no library text: \(second.stderr)")
        #expect(await server.stop() == 0)
    }
}
