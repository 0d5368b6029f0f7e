import Foundation
import PlugboardTestSupport
import Testing

/// A revoked host token's stream through the documented relay (Examples/nginx/plugboard-relay.conf) ends within the
/// documented bound also on a quiet board, where the server's `fresh` notices would keep Nchan's subscriber timeout
/// from ever passing: the server ends the environment's relayed streams, and the token's next subscription is refused.
@Suite("a revoked token's relayed stream (processes)", .timeLimit(.hangGuard), .serialized)
struct RelayRevocationTests {
    /// A board with a hosts token `leaked` beside the hosts token, `plugboard serve --relay-publish` on it (with the
    /// documented freshness: a signed `fresh` notice every 15 s on every relayed stream) and the documented relay.
    struct Relayed {
        let sandbox: Sandbox
        let token: String
        let leaked: String
        let upstream: Int
        let relay: String
        let proxy: ChildProcess
        var stream: String { "\(relay)/api/host/relay-stream" }

        static func start() async throws -> (Relayed, ChildProcess) {
            let (sandbox, token, _) = try await RemoteHostTests().makeBoard()
            let leaked = try await sandbox.hostsToken(name: "leaked")
            let upstream = try ReverseProxyTests.freePort()
            let port = try ReverseProxyTests.freePort()
            let relay = "http://127.0.0.1:\(port)"
            let folder = sandbox.root.appendingPathComponent("nginx").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let conf = try sandbox.write(
                "nginx/nginx.conf", try RelayTests.configuration(upstream: upstream, listen: port, folder: folder))
            let proxy = try ChildProcess(ReverseProxyTests.nginx, ["-c", conf, "-p", folder])
            try await eventually(
                "nginx to come up (\(String(describing: try? String(contentsOfFile: folder + "/error.log", encoding: .utf8))))",
                poll: .milliseconds(50)
            ) { (try? await ServeProcessTests.curl(["\(relay)/plugboard-publish/probe"]).0).map { $0 != 0 } == true }
            let relayed = Relayed(sandbox: sandbox, token: token, leaked: leaked, upstream: upstream, relay: relay, proxy: proxy)
            return (relayed, try await relayed.serve())
        }

        func serve() async throws -> ChildProcess {
            let server = try ChildProcess(
                Sandbox.binary,
                [
                    "serve", "--db", sandbox.board, "--listen", "127.0.0.1:\(upstream)", "--log-level", "warning",
                    "--relay-publish", "\(relay)/plugboard-publish/",
                ])
            #expect(await server.waitForLine { $0.hasPrefix("Serving the board at") } != nil, "\(server.errorOutput)")
            try await eventually("the relay to reach the server", poll: .milliseconds(50)) {
                (try? await ServeProcessTests.curl(["\(relay)/health"]).0) == 200
            }
            return server
        }

        func subscribe(_ token: String) throws -> ChildProcess {
            try ChildProcess("/usr/bin/curl", ["-sN", "-H", "Authorization: \(token)", "-H", "Accept: text/event-stream", stream])
        }
    }

    @Test(
        .enabled(
            if: RelayTests.available || ReverseProxyTests.isCI,
            "needs nginx with Nchan (apt-get install libnginx-mod-nchan); with CI set, its absence fails"))
    func aRevokedTokensRelayedStreamEndsWithinTheDocumentedBoundOnAQuietBoard() async throws {
        try #require(RelayTests.available, "nginx with Nchan is not installed (apt-get install libnginx-mod-nchan)")
        let (relayed, server) = try await Relayed.start()
        let (sandbox, token, leaked, stream, proxy) = (relayed.sandbox, relayed.token, relayed.leaked, relayed.stream, relayed.proxy)
        func subscribe(_ token: String) throws -> ChildProcess { try relayed.subscribe(token) }
        let stolen = try subscribe(leaked)
        let honest = try subscribe(token)
        for each in [stolen, honest] { #expect(await each.waitForLine { $0.hasPrefix(": hi") } != nil, "\(each.output)") }
        // The board stays quiet: the streams hear only the freshness notices, each of which resets Nchan's timeout.
        #expect(
            await stolen.waitForLine { $0 == "event: fresh" } != nil,
            "no freshness notice through the relay: \(stolen.output.suffix(4)) \(server.errorOutput.suffix(600))")

        try await sandbox.ok("token", "revoke", "leaked", "--reason", "leaked")
        let revoked = ContinuousClock.now
        let ended = await stolen.waitForExit(timeout: .seconds(90))
        let lasted = ended.map { $0 - revoked }
        #expect(
            lasted.map { $0 < .seconds(60) } == true,
            "the revoked token's relayed stream lasted \(lasted.map { "\($0)" } ?? "over 90 s") after its revocation: \(stolen.output.suffix(6))"
        )

        // Its next subscription is refused by the relay's token check; a valid token subscribes again and hears the board.
        #expect(try await ServeProcessTests.curl(["-H", "Authorization: \(leaked)", "-H", "Accept: text/event-stream", stream]).0 == 401)
        #expect(await honest.waitForExit(timeout: .seconds(90)) != nil, "the environment's other relayed streams were not ended")
        let again = try subscribe(token)
        #expect(await again.waitForLine { $0.hasPrefix(": hi") } != nil, "\(again.output)")
        try await sandbox.ok("plugin", "kill", RemoteHostTests.beta, "--reason", "after the revocation")
        #expect(
            await again.waitForLine { $0.hasPrefix("data: {\"revision\":") } != nil,
            "a valid token's new relayed stream did not hear the change: \(again.output.suffix(4))")
        _ = await again.stop(signal: SIGKILL)
        _ = await proxy.stop(signal: SIGKILL)  // nginx without a master process does not stop on SIGTERM
        #expect(await server.stop() == 0)
    }

    @Test(
        .enabled(
            if: RelayTests.available || ReverseProxyTests.isCI,
            "needs nginx with Nchan (apt-get install libnginx-mod-nchan); with CI set, its absence fails"))
    func aTokenRevokedWhileTheServerWasDownEndsItsRelayedStreamWhenTheServerIsBack() async throws {
        try #require(RelayTests.available, "nginx with Nchan is not installed (apt-get install libnginx-mod-nchan)")
        let (relayed, server) = try await Relayed.start()
        let stolen = try relayed.subscribe(relayed.leaked)
        #expect(await stolen.waitForLine { $0.hasPrefix(": hi") } != nil, "\(stolen.output)")
        // The server stops; nginx keeps the subscription. The token is revoked on the board file meanwhile.
        #expect(await server.stop() == 0)
        try await relayed.sandbox.ok("token", "revoke", "leaked", "--reason", "leaked while the server was down")
        let back = try await relayed.serve()
        let started = ContinuousClock.now
        let ended = await stolen.waitForExit(timeout: .seconds(90))
        let lasted = ended.map { $0 - started }
        #expect(
            lasted.map { $0 < .seconds(60) } == true,
            "the revoked token's relayed stream lasted \(lasted.map { "\($0)" } ?? "over 90 s") after the server came back")
        #expect(
            try await ServeProcessTests.curl(["-H", "Authorization: \(relayed.leaked)", "-H", "Accept: text/event-stream", relayed.stream])
                .0
                == 401)
        _ = await relayed.proxy.stop(signal: SIGKILL)  // nginx without a master process does not stop on SIGTERM
        #expect(await back.stop() == 0)
    }
}
