import Foundation
import PlugboardTestSupport
import Testing

/// Hosts on other machines read the board through `plugboard serve`: the server, the hosts and the CLI are separate
/// processes here, as they are in a fleet, and the server goes away and comes back while the hosts run.
@Suite("hosts against a served board (processes)", .timeLimit(.hangGuard), .serialized)
struct RemoteHostTests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let alpha = "com.example.alpha"
    static let beta = "com.example.beta"

    /// A board with alpha and beta enabled, an API token of `default`, and the board's public key (which hosts pin).
    func makeBoard() async throws -> (Sandbox, String, String) {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        try await sandbox.ok(
            "plugin", "register", sandbox.write("alpha.json", manifest(Self.alpha)), sandbox.write("beta.json", manifest(Self.beta)))
        try await sandbox.ok("plugin", "enable", Self.alpha)
        try await sandbox.ok("plugin", "enable", Self.beta)
        return (sandbox, try await sandbox.hostsToken(), try await sandbox.boardKey())
    }

    /// Starts `plugboard serve` (on `port`, or a free one) and returns it with its base URL.
    func serve(_ sandbox: Sandbox, port: Int = 0) async throws -> (ChildProcess, String, Int) {
        let server = try ChildProcess(
            Sandbox.binary, ["serve", "--db", sandbox.board, "--listen", "127.0.0.1:\(port)", "--log-level", "warning"])
        let bound = try await server.servedPort()
        return (server, "http://127.0.0.1:\(bound)", bound)
    }

    func host(
        _ url: String, _ token: String, key: String, cache: String, id: String = "remote-1", plugins: [String] = [alpha, beta],
        options: [String] = []
    ) throws -> ChildProcess {
        try ChildProcess(
            Self.hostBinary,
            [
                "--server", url, "--token", token, "--board-key", key, "--cache", cache, "--host-id", id, "--plugins",
                plugins.joined(separator: ","),
            ]
                + options)
    }

    static func event(_ name: String, _ plugin: String) -> (String) -> Bool {
        { line in line.contains("\"event\":\"\(name)\"") && line.contains("\"plugin\":\"\(plugin)\"") }
    }

    /// The host's row for `plugin` in `plugboard plugin status --json`.
    func reported(_ sandbox: Sandbox, _ plugin: String, host: String = "remote-1") async throws -> [String: Any]? {
        let rows = try await sandbox.ok("plugin", "status", plugin, "--json").json() as? [[String: Any]] ?? []
        return rows.first { $0["host_id"] as? String == host }
    }

    /// Waits (a guard against hanging, not a measurement) until the host's report matches.
    func waitForReport(_ sandbox: Sandbox, _ plugin: String, host: String = "remote-1", _ match: ([String: Any]) -> Bool) async throws
        -> [String: Any]?
    {
        let row: [String: Any] = try await eventually(
            "\(host)'s report of \(plugin) the test waits for", timeout: .eventDeadline, poll: .milliseconds(50)
        ) {
            try await reported(sandbox, plugin, host: host).flatMap { match($0) ? $0 : nil }
        }
        return row
    }

    @Test func aRemoteHostFollowsKillSwitchesAndRestartsFromItsCacheWhileTheServerIsDown() async throws {
        let (sandbox, token, key) = try await makeBoard()
        var (server, url, port) = try await serve(sandbox)
        let cache = sandbox.root.appendingPathComponent("host-cache").path
        var host = try host(url, token, key: key, cache: cache)
        for plugin in [Self.alpha, Self.beta] {
            #expect(
                await host.waitForLine(Self.event("loaded", plugin)) != nil, "\(plugin) did not load: \(host.output) \(host.errorOutput)")
        }
        // Its report reaches the board through the server, and says where the host read the board.
        let loaded = try await waitForReport(sandbox, Self.alpha) { $0["state"] as? String == "loaded" }
        #expect((loaded?["source"] as? String)?.hasPrefix("served (token hosts)") == true, "\(String(describing: loaded))")
        let table = try await sandbox.ok("plugin", "status", Self.alpha).stdout
        #expect(table.contains("READS") && table.contains("served (token hosts)"), "\(table)")

        // A kill switch thrown with the CLI is pushed to the host.
        var seen = host.output.count
        try await sandbox.ok("plugin", "kill", Self.alpha, "--reason", "INC-9")
        let deactivated = await host.waitForLine(after: seen) { Self.event("deactivated", Self.alpha)($0) && $0.contains("killed") }
        #expect(deactivated != nil, "the kill switch did not reach the remote host: \(host.output.suffix(5))")
        let killed = try await waitForReport(sandbox, Self.alpha) { $0["state"] as? String == "deactivated" }
        #expect(killed?["reason_code"] as? String == "killed")

        // The server stops; the host restarts from its cache, says so, and keeps the killed plug-in off.
        #expect(await server.stop() == 0, "serve did not stop cleanly: \(server.errorOutput)")
        #expect(await host.closeInput() == 0, "the host did not stop cleanly: \(host.errorOutput)")
        let mode = sandbox.mode(cache) & 0o777
        #expect(mode == 0o700, "the cache folder is \(String(mode, radix: 8))")
        #expect(sandbox.mode(cache + "/snapshot.json") & 0o777 == 0o600)
        host = try self.host(url, token, key: key, cache: cache)
        let cached = await host.waitForLine { $0.contains("\"warning\"") && $0.contains("runs from a cached snapshot of") }
        #expect(cached != nil, "the host did not say it runs from its cache: \(host.output)")
        #expect(await host.waitForLine(Self.event("loaded", Self.beta)) != nil, "beta did not load from the cache: \(host.output)")
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil)
        #expect(!host.output.contains(where: Self.event("loaded", Self.alpha)), "the killed plug-in loaded from the cache: \(host.output)")

        // The server comes back: the host reconnects and reports as served again.
        seen = host.output.count
        (server, url, port) = try await serve(sandbox, port: port)
        let back = try await waitForReport(sandbox, Self.alpha) {
            $0["state"] as? String == "skipped" && ($0["source"] as? String)?.hasPrefix("served") == true
        }
        #expect(back != nil, "the host did not report after the server came back: \(host.output.suffix(5))")
        // And the next change is pushed again.
        try await sandbox.ok("plugin", "revive", Self.alpha, "--reason", "fixed")
        #expect(await host.waitForLine(after: seen, Self.event("loaded", Self.alpha)) != nil, "the revive did not reach the host")
        #expect(await host.closeInput() == 0)
        #expect(await server.stop() == 0)
    }

    @Test func withNeitherServerNorCacheAHostLoadsNothingUntilTheServerAnswers() async throws {
        let (sandbox, token, key) = try await makeBoard()
        // A port nobody listens on yet: start a server to learn a free one, then stop it.
        var (server, url, port) = try await serve(sandbox)
        #expect(await server.stop() == 0)
        let host = try host(url, token, key: key, cache: sandbox.root.appendingPathComponent("empty-cache").path)
        let warned = await host.waitForLine { $0.contains("\"warning\"") && $0.contains("holds no snapshot yet") }
        #expect(warned != nil, "no warning without server and cache: \(host.output)")
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil)
        #expect(!host.output.contains { $0.contains("\"loaded\"") })
        (server, url, port) = try await serve(sandbox, port: port)
        #expect(await host.waitForLine(Self.event("loaded", Self.alpha)) != nil, "the host did not load once the server answered")
        #expect(await host.closeInput() == 0)
        #expect(await server.stop() == 0)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func artifactsAreFetchedCheckedAndTheHostAPIRefusesBadInput() async throws {
        let (sandbox, token, key) = try await makeBoard()
        let library = try sandbox.write("liblib.so", String(repeating: "not an ELF file ", count: 64))
        try await sandbox.ok("plugin", "register", sandbox.write("lib.json", manifest("com.example.lib")), "--artifact", library)
        try await sandbox.ok("plugin", "enable", "com.example.lib")
        let (server, url, _) = try await serve(sandbox)
        let sha = try #require(
            (try await sandbox.ok("plugin", "show", "com.example.lib", "--json").stdout).firstMatch(of: /[0-9a-f]{64}/).map { String($0.0) }
        )

        // The host fetches the artifact into its cache, checks it, and dlopen refuses it (it is not a library).
        let cache = sandbox.root.appendingPathComponent("cache-1").path
        let first = try host(url, token, key: key, cache: cache, plugins: [Self.alpha])
        #expect(await first.waitForLine { $0.contains("\"failed\"") && $0.contains("com.example.lib") } != nil, "\(first.output)")
        #expect(FileManager.default.contents(atPath: cache + "/artifacts/" + sha) == FileManager.default.contents(atPath: library))
        #expect(await first.closeInput() == 0)

        // The file in the server's store is swapped: a host fetching it refuses it and keeps nothing.
        let stored = sandbox.board + ".artifacts/sha256/" + sha
        try? FileManager.default.removeItem(atPath: stored)
        #expect(FileManager.default.createFile(atPath: stored, contents: Data("tampered".utf8)))
        let second = try host(
            url, token, key: key, cache: sandbox.root.appendingPathComponent("cache-2").path, id: "remote-2", plugins: [Self.alpha])
        #expect(await second.waitForLine { $0.contains("\"started\"") } != nil)
        let row = try await waitForReport(sandbox, "com.example.lib", host: "remote-2") { $0["reason"] != nil }
        #expect((row?["reason"] as? String)?.contains("was not kept") == true, "\(String(describing: row))")
        #expect(FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("cache-2/artifacts/" + sha).path) == false)
        #expect(await second.closeInput() == 0)

        // The host API: tokens, ETags, bounds and shapes.
        let auth = ["-H", "Authorization: \(token)"]
        #expect(try await ServeProcessTests.curl(["\(url)/api/host/snapshot"]).0 == 401)
        let headers = try await ServeProcessTests.curl(auth + ["-D", "-", "-o", "/dev/null", "\(url)/api/host/snapshot"]).1
        let etag = try #require(headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("etag:") }).dropFirst(5)
            .trimmingCharacters(in: .whitespaces)
        #expect(try await ServeProcessTests.curl(auth + ["-H", "If-None-Match: \(etag)", "\(url)/api/host/snapshot"]).0 == 304)
        let many = (0..<2001).map { "plugin=p\($0)" }.joined(separator: "&")
        #expect(try await ServeProcessTests.curl(auth + ["\(url)/api/host/snapshot?\(many)"]).0 == 400)
        #expect(try await ServeProcessTests.curl(auth + ["\(url)/api/host/artifacts/\(String(repeating: "0", count: 64))"]).0 == 404)
        #expect(try await ServeProcessTests.curl(auth + ["\(url)/api/host/artifacts/..%2F..%2Fboard.sqlite"]).0 == 404)
        for body in [
            "not json", #"{"hostId":"h","hostVersion":"1","entries":[{"pluginID":"x","state":"loaded","reasonCode":"killed"}]}"#,
            #"{"hostId":"","hostVersion":"1","entries":[]}"#, #"{"hostId":"h\u0001","hostVersion":"1","entries":[]}"#,
        ] {
            let (status, answer) = try await ServeProcessTests.curl(
                auth + ["-X", "POST", "-H", "Content-Type: application/json", "--data-binary", body, "\(url)/api/host/report"])
            #expect(status == 400 && answer.contains("\"message\""), "\(body): \(status) \(answer)")
        }
        // A host id that reports from another environment is not taken over by a token of this one.
        try await sandbox.ok("plugin", "enable", Self.beta, "--env", "staging")
        let staging =
            try await sandbox.ok("token", "create", "--name", "staging", "--env", "staging", "--for", "hosts", "--json").json()
            as? [String: Any]
        let stagingToken = try #require(staging?["token"] as? String)
        // The server learns new tokens at its next look at the board.
        let takeover = try await eventually("the server to know the staging token", poll: .milliseconds(50)) {
            let answer = try await ServeProcessTests.curl([
                "-H", "Authorization: \(stagingToken)", "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
                #"{"hostId":"remote-1","hostVersion":"1","entries":[]}"#, "\(url)/api/host/report",
            ])
            return answer.0 == 401 ? nil : answer
        }
        #expect(takeover.0 == 403, "\(takeover)")
        // … and the refused report changed nothing: remote-1 still reports from default, with its rows.
        let rows = (try await sandbox.ok("plugin", "status", "--json").json() as? [[String: Any]] ?? []).filter {
            $0["host_id"] as? String == "remote-1"
        }
        #expect(!rows.isEmpty && rows.allSatisfy { $0["environment"] as? String == "default" }, "\(rows)")
        #expect(await server.stop() == 0)
    }
}
