import Foundation
import PlugboardTestSupport
import Testing

/// The documented relay (Examples/nginx/plugboard-relay.conf): nginx with Nchan between many hosts' event streams and
/// one `plugboard serve --relay-publish`. The server keeps one upstream stream per environment whatever the number of
/// hosts, a kill switch reaches a host behind the relay, and what someone who reaches the publisher forges or replays
/// is refused by the host.
@Suite("plugboard serve behind an Nchan relay (processes)", .timeLimit(.hangGuard), .serialized)
struct RelayTests {
    static let module = "/usr/lib/nginx/modules/ngx_nchan_module.so"
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: ReverseProxyTests.nginx) && FileManager.default.fileExists(atPath: module)
    }

    /// The repository's relay configuration with the upstream and the port of this test, in an nginx of its own.
    static func configuration(upstream: Int, listen: Int, folder: String) throws -> String {
        try ReverseProxyTests.nginxConfiguration(
            "Examples/nginx/plugboard-relay.conf", folder: folder,
            replacing: [("server 127.0.0.1:4242;", "server 127.0.0.1:\(upstream);"), ("listen 8080;", "listen 127.0.0.1:\(listen);")],
            modules: [module], connections: 1024)
    }

    @Test func aRelayPublisherThatIsNotAnHTTPURLIsAUsageError() async throws {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        for bad in ["ftp://127.0.0.1/plugboard-publish/", "not a url", "https://127.0.0.1/plugboard-publish/"] {
            let result = try await sandbox.run(["serve", "--relay-publish", bad])
            #expect(result.status != 0 && result.stdout.isEmpty, "\(result)")
            #expect(result.stderr.contains("--relay-publish '\(bad)' is not an http:// URL"), "\(result.stderr)")
        }
    }

    @Test(
        .enabled(
            if: available || ReverseProxyTests.isCI,
            "needs nginx with Nchan (apt-get install libnginx-mod-nchan); with CI set, its absence fails"))
    func manyStreamsShareOneUpstreamStreamAndHostsVerifyWhatTheRelayCarries() async throws {
        try #require(Self.available, "nginx with Nchan is not installed (apt-get install libnginx-mod-nchan)")
        let (sandbox, token, key) = try await RemoteHostTests().makeBoard()
        let upstream = try ReverseProxyTests.freePort()
        let port = try ReverseProxyTests.freePort()
        let relay = "http://127.0.0.1:\(port)"
        let server = try ChildProcess(
            Sandbox.binary,
            [
                "serve", "--db", sandbox.board, "--listen", "127.0.0.1:\(upstream)", "--log-level", "warning",
                "--relay-publish", "\(relay)/plugboard-publish/",
            ])
        #expect(await server.waitForLine { $0.hasPrefix("Serving the board at") } != nil, "\(server.errorOutput)")
        let folder = sandbox.root.appendingPathComponent("nginx").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let conf = try sandbox.write("nginx/nginx.conf", try Self.configuration(upstream: upstream, listen: port, folder: folder))
        let check = try sandbox.runBlocking(["-t", "-c", conf, "-p", folder], db: false, executable: ReverseProxyTests.nginx)
        #expect(check.status == 0, "nginx refused the configuration: \(check)")
        let proxy = try ChildProcess(ReverseProxyTests.nginx, ["-c", conf, "-p", folder])
        try await eventually(
            "nginx to come up (\(String(describing: try? String(contentsOfFile: folder + "/error.log", encoding: .utf8))))",
            poll: .milliseconds(50)
        ) { (try? await ServeProcessTests.curl(["\(relay)/health"]).0) == 200 }

        // A token that is not a hosts token gets no relayed stream.
        let stream = "\(relay)/api/host/relay-stream"
        #expect(try await ServeProcessTests.curl(["-H", "Authorization: wrong", "-H", "Accept: text/event-stream", stream]).0 == 401)

        // Many streams through the relay, and a real host: the server keeps one upstream stream for the environment.
        let streams = try (0..<20).map { _ in
            try ChildProcess("/usr/bin/curl", ["-sN", "-H", "Authorization: \(token)", "-H", "Accept: text/event-stream", stream])
        }
        for each in streams { #expect(await each.waitForLine { $0.hasPrefix(": hi") } != nil, "\(each.output) \(each.errorOutput)") }
        let host = try RemoteHostTests().host(
            "http://127.0.0.1:\(upstream)", token, key: key, cache: sandbox.root.appendingPathComponent("cache").path,
            options: ["--relay-stream", stream])
        #expect(await host.waitForLine(RemoteHostTests.event("loaded", RemoteHostTests.alpha)) != nil, "\(host.output)")
        let metrics = try await ServeProcessTests.curl(["-H", "Authorization: \(token)", "http://127.0.0.1:\(upstream)/metrics"]).1
        #expect(metrics.contains("plugboard_relay_channels 1\n"), "\(metrics)")
        #expect(metrics.contains("plugboard_streams_connected 0\n"), "the server holds a stream per host: \(metrics)")

        // A change: every relayed stream carries the same signed snapshot, and the host acts on it.
        var seen = host.output.count
        try await sandbox.ok("plugin", "kill", RemoteHostTests.beta, "--reason", "through the relay")
        var pushed: Set<String> = []
        for each in streams {
            let line = await each.waitForLine { $0.hasPrefix("data: {\"revision\":") && $0.contains("\"snapshot\":") }
            pushed.insert(line.map { each.output[$0] } ?? "none: \(each.output)")
        }
        #expect(pushed.count == 1, "the relayed streams carried different events: \(pushed.map { $0.prefix(80) })")
        let earlier = String(try #require(pushed.first).dropFirst("data: ".count))
        #expect(
            await host.waitForLine(after: seen, RemoteHostTests.event("deactivated", RemoteHostTests.beta)) != nil,
            "the kill switch did not reach the host through the relay: \(host.output.suffix(4))")
        seen = host.output.count
        try await sandbox.ok("plugin", "kill", RemoteHostTests.alpha, "--reason", "through the relay")
        #expect(
            await host.waitForLine(after: seen, RemoteHostTests.event("deactivated", RemoteHostTests.alpha)) != nil,
            "the kill switch did not reach the host through the relay: \(host.output.suffix(4))")
        for each in streams { _ = await each.stop(signal: SIGKILL) }

        // Someone who reaches the publisher replays the older snapshot (alpha still enabled) under a newer revision,
        // and forges one (its statement changed under the signature): the host hears both, refuses both (said on
        // standard error, read once it exits) and keeps alpha stopped.
        seen = host.output.count
        func revision(_ revision: Int, _ data: String) -> String {
            data.replacingOccurrences(of: #"^\{"revision":[0-9]+"#, with: "{\"revision\":\(revision)", options: .regularExpression)
        }
        let forged = revision(9_999_999_999_998, earlier.replacingOccurrences(of: "environment=default", with: "environment=default "))
        #expect(!forged.contains("environment=default\\n"))
        for (number, body) in [(9_999_999_999_999, revision(9_999_999_999_999, earlier)), (9_999_999_999_998, forged)] {
            let published = try await ServeProcessTests.curl([
                "-X", "POST", "-H", "X-EventSource-Event: changed", "--data-binary", body, "\(relay)/plugboard-publish/default",
            ])
            #expect((200..<300).contains(published.0), "the relay did not take the publication: \(published)")
            #expect(
                await host.waitForLine(after: seen) { $0.contains("\"data_version\":\"\(number)\"") } != nil,
                "the host did not hear the message published to the relay: \(host.output.suffix(4))")
        }
        // A real change after them: once the host acts on it, it has dealt with the two before.
        try await sandbox.ok("plugin", "revive", RemoteHostTests.beta)
        #expect(
            await host.waitForLine(after: seen) { $0.contains(RemoteHostTests.beta) && !$0.contains("deactivated") }
                != nil,
            "the revive did not reach the host through the relay: \(host.output.suffix(4))")
        #expect(await host.closeInput() == 0)
        #expect(
            !host.output.dropFirst(seen).contains { $0.contains(RemoteHostTests.alpha) && !$0.contains("deactivated") },
            "the host loaded what the board stopped: \(host.output.suffix(6))")
        #expect(
            host.errorOutput.components(separatedBy: "ignored a snapshot pushed").count == 3,
            "the host did not refuse both messages aloud: \(host.errorOutput.suffix(1200))")
        _ = await proxy.stop(signal: SIGKILL)  // nginx without a master process does not stop on SIGTERM
        #expect(await server.stop() == 0)
    }
}
