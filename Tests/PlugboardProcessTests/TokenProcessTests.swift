import Foundation
import PlugboardTestSupport
import Testing

/// API tokens against `plugboard serve` as processes: the CLI revokes a token in one process, and the event streams it
/// opened in others (curl, as an SDK or a host would) end; each kind of token reads only its routes; a host reads only
/// the artifacts of its environment.
@Suite(
    "API tokens against a served board (processes)", .timeLimit(.hangGuard),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
struct TokenProcessTests {
    static let alpha = "com.example.alpha"

    /// A board with alpha enabled in `default`, and `plugboard serve` over it with its base URL.
    func serve() async throws -> (Sandbox, ChildProcess, String) {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        try await sandbox.ok("plugin", "enable", Self.alpha)
        let server = try ChildProcess(
            Sandbox.binary, ["serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--log-level", "warning"])
        let port = try await server.servedPort()
        return (sandbox, server, "http://127.0.0.1:\(port)")
    }

    /// Creates a token and returns its secret.
    func token(_ sandbox: Sandbox, _ arguments: String...) async throws -> String {
        let created = try await sandbox.ok(["token", "create", "--json"] + arguments).json() as? [String: Any]
        return try #require(created?["token"] as? String)
    }

    /// curl reading an event stream until the server ends it.
    func stream(_ url: String, _ token: String) throws -> ChildProcess {
        try ChildProcess("/usr/bin/curl", ["-sN", "-H", "Authorization: \(token)", url])
    }

    /// Waits until the server knows a token it was just given (it learns tokens at its next look at the board).
    func waitUntilAccepted(_ url: String, _ token: String, timeout: Duration = .eventDeadline) async throws {
        try await eventually("the server to accept a new token", timeout: timeout, poll: .milliseconds(25)) {
            try await ServeProcessTests.curl(["-H", "Authorization: \(token)", url]).0 != 401
        }
    }

    @Test func revokingATokenEndsItsOpenSDKAndHostStreams() async throws {
        let (sandbox, server, base) = try await serve()
        let sdk = try await token(sandbox, "--name", "shop")
        let host = try await token(sandbox, "--name", "fleet", "--for", "hosts")
        let bystander = try await token(sandbox, "--name", "other-shop")
        try await waitUntilAccepted("\(base)/api/client/features", sdk)

        let sdkStream = try stream("\(base)/api/client/streaming", sdk)
        let hostStream = try stream("\(base)/api/host/stream", host)
        let otherStream = try stream("\(base)/api/client/streaming", bystander)
        #expect(await sdkStream.waitForLine { $0.contains(#""type":"hydration""#) } != nil, "\(sdkStream.output)")
        #expect(await hostStream.waitForLine { $0 == "event: connected" } != nil, "\(hostStream.output)")
        #expect(await otherStream.waitForLine { $0.contains(#""type":"hydration""#) } != nil)

        // Measured from the revoking CLI's exit to curl's: the server notices the change at its next board check.
        for (name, curl) in [("shop", sdkStream), ("fleet", hostStream)] {
            try await sandbox.ok("token", "revoke", name, "--reason", "leaked")
            let revoked = ContinuousClock.now
            let closed = await curl.waitForExit(timeout: .seconds(10))
            #expect(closed != nil, "the stream of the revoked token '\(name)' is still open 10 s after the revocation")
            if let closed { print("the stream of the revoked token '\(name)' closed \(closed - revoked) after token revoke exited") }
            #expect(curl.output.contains(": stream closed: the token '\(name)' was revoked"), "\(curl.output)")
        }
        // A change after the revocations still reaches the other token's stream, which stayed open.
        let seen = otherStream.output.count
        try await sandbox.ok("flag", "create", "after.revoke")
        #expect(await otherStream.waitForLine(after: seen) { $0.contains("after.revoke") } != nil)
        #expect(otherStream.isRunning)
        #expect(try await ServeProcessTests.curl(["-H", "Authorization: \(sdk)", "\(base)/api/client/streaming"]).0 == 401)
        #expect(try await ServeProcessTests.curl(["-H", "Authorization: \(host)", "\(base)/api/host/stream"]).0 == 401)

        #expect(await server.stop() == 0, "\(server.errorOutput)")
        await otherStream.stop()
    }

    @Test func anExpiredTokensStreamsEnd() async throws {
        let (sandbox, server, base) = try await serve()
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // Tokens that expire a few seconds from now (--expires takes a time), and a stream of each opened before then. On
        // a machine too busy to open them in time, again with twice the margin.
        var margin = 8.0
        for attempt in 1...6 {
            let expiry = Date().addingTimeInterval(margin)
            let (sdkName, hostName) = ("brief-\(attempt)", "brief-host-\(attempt)")
            // On a busy machine the expiry may pass before the second token is made: then again with more margin.
            func brief(_ arguments: String...) async throws -> String? {
                let result = try await sandbox.run(["token", "create", "--json", "--expires", formatter.string(from: expiry)] + arguments)
                guard result.status == 0 else { return nil }
                return (try result.json() as? [String: Any])?["token"] as? String
            }
            guard let sdk = try await brief("--name", sdkName), let host = try await brief("--name", hostName, "--for", "hosts") else {
                margin *= 2
                continue
            }
            // Not accepted before it expired: the checks below fail and the loop tries again with more margin.
            try? await waitUntilAccepted("\(base)/api/client/features", sdk, timeout: .seconds(margin))
            let sdkStream = try stream("\(base)/api/client/streaming", sdk)
            let hostStream = try stream("\(base)/api/host/stream", host)
            let connected = await sdkStream.waitForLine(timeout: .seconds(margin)) { $0.contains(#""type":"hydration""#) } != nil
            let hostConnected = await hostStream.waitForLine(timeout: .seconds(margin)) { $0 == "event: connected" } != nil
            guard connected && hostConnected && Date() < expiry else {
                await sdkStream.stop()
                await hostStream.stop()
                margin *= 2
                continue
            }
            for (name, curl) in [(sdkName, sdkStream), (hostName, hostStream)] {
                let closed = await curl.waitForExit(timeout: .seconds(max(0, expiry.timeIntervalSinceNow) + 20))
                #expect(closed != nil, "the stream of the expired token '\(name)' is still open 20 s after it expired")
                let late = Date().timeIntervalSince(expiry)
                print("the stream of the token '\(name)' closed \(String(format: "%.3f", late)) s after it expired (as seen by the test)")
                #expect(curl.output.contains { $0.hasPrefix(": stream closed: the token '\(name)' expired at ") }, "\(curl.output)")
            }
            #expect(await server.stop() == 0, "\(server.errorOutput)")
            return
        }
        Issue.record("the streams never opened before their tokens expired, even with \(margin / 2) s to spare")
        await server.stop()
    }

    @Test func eachKindReadsItsRoutesAndAHostOnlyTheArtifactsOfItsEnvironment() async throws {
        let (sandbox, server, base) = try await serve()
        // A release only staging runs, with its artifact.
        let library = try sandbox.write("libstaging.so", String(repeating: "staging only ", count: 64))
        try await sandbox.ok("plugin", "register", sandbox.write("s.json", manifest("com.example.staging")), "--artifact", library)
        try await sandbox.ok("plugin", "enable", "com.example.staging", "--env", "staging")
        let sha = try #require(
            (try await sandbox.ok("plugin", "show", "com.example.staging", "--json").stdout).firstMatch(of: /[0-9a-f]{64}/).map {
                String($0.0)
            })
        let sdk = try await token(sandbox, "--name", "shop")
        let host = try await token(sandbox, "--name", "fleet", "--for", "hosts")
        let stagingHost = try await token(sandbox, "--name", "staging-fleet", "--for", "hosts", "--env", "staging")
        try await waitUntilAccepted("\(base)/api/client/features", sdk)

        // An SDK token gets 403 and one sentence on every host route.
        for (method, path) in [("GET", "snapshot"), ("GET", "stream"), ("GET", "artifacts/\(sha)"), ("POST", "report")] {
            let (status, body) = try await ServeProcessTests.curl(["-X", method, "-H", "Authorization: \(sdk)", "\(base)/api/host/\(path)"])
            #expect(status == 403 && body.contains("is for SDKs and cannot read /api/host/"), "\(path): \(status) \(body)")
        }
        // A host token reads host routes, and not flags.
        let snapshot = try await ServeProcessTests.curl([
            "-H", "Authorization: \(host)", "\(base)/api/host/snapshot?plugin=com.example.staging",
        ])
        // The snapshot's content, inside the envelope the board's key signs.
        let envelope = try JSONSerialization.jsonObject(with: Data(snapshot.1.utf8)) as? [String: Any]
        let content = String(decoding: Data(base64Encoded: envelope?["content"] as? String ?? "") ?? Data(), as: UTF8.self)
        #expect(snapshot.0 == 200 && content.contains(Self.alpha), "\(snapshot)")
        #expect(!content.contains(sha), "a snapshot of default reveals a release only staging runs")
        #expect(try await ServeProcessTests.curl(["-H", "Authorization: \(host)", "\(base)/api/client/features"]).0 == 403)

        // The artifact of a release only staging runs: not for a host of default, and for one of staging.
        let refused = try await ServeProcessTests.curl(["-H", "Authorization: \(host)", "\(base)/api/host/artifacts/\(sha)"])
        #expect(refused.0 == 404 && refused.1.contains("enabled in default"), "\(refused)")
        let served = try await ServeProcessTests.curl(["-H", "Authorization: \(stagingHost)", "\(base)/api/host/artifacts/\(sha)"])
        #expect(served.0 == 200 && served.1.contains("staging only"), "\(served.0)")
        // … nor once staging disables it.
        try await sandbox.ok("plugin", "disable", "com.example.staging", "--env", "staging")
        #expect(try await ServeProcessTests.curl(["-H", "Authorization: \(stagingHost)", "\(base)/api/host/artifacts/\(sha)"]).0 == 404)
        #expect(await server.stop() == 0, "\(server.errorOutput)")
    }
}
