import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

/// A token reads the routes of its kind, and its event streams end when it is no longer accepted.
@Suite("token kinds and the streams of refused tokens", .timeLimit(.hangGuard))
struct TokenRouteTests {
    static let hostRoutes: [(String, HTTPRequest.Method)] = [
        ("/api/host/snapshot", .get), ("/api/host/stream", .get), ("/api/host/artifacts/\(String(repeating: "0", count: 64))", .get),
        ("/api/host/report", .post),
    ]

    @Test func anSDKTokenGets403OnEveryHostRouteWithOneSentence() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            for (uri, method) in Self.hostRoutes {
                try await client.execute(uri: uri, method: method, headers: [.authorization: fixture.token]) { response in
                    #expect(response.status == .forbidden, "\(uri)")
                    let message = ServerFixture.json(response.body)["message"] as? String ?? ""
                    #expect(message.contains("'app' is for SDKs") && message.contains("--for hosts"), "\(uri): \(message)")
                }
            }
        }
    }

    /// A host that sends a nonce gets the board's signed proof of it and of the snapshot's head; a malformed nonce is
    /// refused with a sentence.
    @Test func aSnapshotAskedWithANonceCarriesTheBoardsProofOfIt() async throws {
        let fixture = try ServerFixture()
        let nonce = FreshnessProof.makeNonce()
        try await fixture.test { client in
            try await client.execute(
                uri: "/api/host/snapshot?nonce=\(nonce)", method: .get, headers: [.authorization: fixture.hostToken]
            ) { response in
                #expect(response.status == .ok)
                let statement = try SignedSnapshot.decode(Data(response.body.readableBytesView)).statement
                let head = try #require(SnapshotStatement(text: statement)).head
                let proof = try FreshnessProof.verify(
                    response.headers[HTTPField.Name(FreshnessProof.httpHeader)!],
                    trusted: fixture.server.configuration.boardKeys.publicKeys, environment: "default", nonce: nonce, head: head)
                #expect(proof.head.seq == head.seq)
            }
            try await client.execute(uri: "/api/host/snapshot?nonce=zz", method: .get, headers: [.authorization: fixture.hostToken]) {
                response in
                #expect(response.status == .badRequest)
                let message = ServerFixture.json(response.body)["message"] as? String
                #expect(message == "the nonce must be 32 to 128 lowercase hexadecimal digits")
            }
        }
    }

    @Test func aHostTokenReadsHostRoutesButNotFlagRoutes() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            try await client.execute(uri: "/api/host/snapshot", method: .get, headers: [.authorization: fixture.hostToken]) { response in
                #expect(response.status == .ok)
            }
            let report = #"{"hostId":"h-1","hostVersion":"1.0.0","entries":[]}"#
            try await client.execute(
                uri: "/api/host/report", method: .post, headers: [.authorization: fixture.hostToken, .contentType: "application/json"],
                body: ByteBuffer(string: report)
            ) { response in
                #expect(response.status == .accepted)
            }
            for (uri, method) in [
                ("/api/client/features", HTTPRequest.Method.get), ("/api/client/delta", .get), ("/ofrep/v1/evaluate/flags", .post),
            ] {
                try await client.execute(uri: uri, method: method, headers: [.authorization: fixture.hostToken]) { response in
                    #expect(response.status == .forbidden, "\(uri)")
                    let message = ServerFixture.json(response.body)["message"] as? String ?? ""
                    #expect(message.contains("'host' is for plug-in hosts") && message.contains("--for sdk"), "\(uri): \(message)")
                }
            }
            // The server's own counters take a token of either kind.
            for token in [fixture.token, fixture.hostToken] {
                try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: token]) { response in
                    #expect(response.status == .ok)
                }
            }
        }
    }

    /// What tokens made before kinds became (see migration 0010): both kinds of routes.
    @Test func aTokenOfBothKindsReadsBoth() async throws {
        let fixture = try ServerFixture()
        let both = try fixture.board.createAPIToken(name: "legacy", environment: "default", kind: .sdkAndHosts, by: ServerFixture.admin)
        try await fixture.test { client in
            for uri in ["/api/host/snapshot", "/api/client/features"] {
                try await client.execute(uri: uri, method: .get, headers: [.authorization: both.secret]) { response in
                    #expect(response.status == .ok, "\(uri)")
                }
            }
        }
    }

    /// A host of one environment that names a plug-in only another environment runs learns that it is not enabled, and
    /// nothing of its releases.
    @Test func aSnapshotListsReleasesOnlyOfPluginsEnabledInTheTokensEnvironment() async throws {
        let fixture = try ServerFixture()
        for id in ["com.example.here", "com.example.elsewhere"] {
            let manifest = try PluginManifest.parse(Data(#"{"id":"\#(id)","name":"x","version":"1.0.0"}"#.utf8))
            _ = try fixture.board.register(manifest, by: ServerFixture.admin)
        }
        _ = try fixture.board.setEnabled("com.example.here", true, environment: "default", by: ServerFixture.admin)
        _ = try fixture.board.setEnabled("com.example.elsewhere", true, environment: "production", by: ServerFixture.admin)
        try await fixture.test { client in
            try await client.execute(
                uri: "/api/host/snapshot?plugin=com.example.here&plugin=com.example.elsewhere", method: .get,
                headers: [.authorization: fixture.hostToken]
            ) { response in
                let view = try HostFeedTests.view(response.body)
                #expect(view.registry.plugins["com.example.here"]?.versions.map(\.version) == ["1.0.0"])
                let elsewhere = try #require(view.registry.plugins["com.example.elsewhere"])
                #expect(!elsewhere.enabled && elsewhere.versions.isEmpty)
                #expect(view.checks.keys.sorted() == ["com.example.here@1.0.0"])
            }
        }
    }

    /// Revoking a token ends its open SDK and host streams at the next board check, with a comment that says why;
    /// another token's streams stay open.
    @Test func revokingATokenEndsItsSDKAndHostStreams() async throws {
        let fixture = try ServerFixture()
        _ = try fixture.server.makeApplication()
        let watcher = fixture.server.watcher
        var sdk = try watcher.openStream("default", token: try fixture.credential("app"), lastEventID: nil).makeAsyncIterator()
        var host = try watcher.hosts.openStream("default", token: try fixture.credential("host")).makeAsyncIterator()
        let other = try watcher.openStream("production", token: try fixture.credential("prod"), lastEventID: nil)
        let firstSDK = await sdk.next()
        let firstHost = await host.next()
        #expect(firstSDK != nil && firstHost != nil)
        #expect(fixture.server.metrics.streams.current == 3)

        _ = try fixture.board.revokeAPIToken("app", by: ServerFixture.admin)
        _ = try fixture.board.revokeAPIToken("host", by: ServerFixture.admin)
        watcher.check()
        #expect(await Self.rest(&sdk) == [": stream closed: the token 'app' was revoked"])
        #expect(await Self.rest(&host) == [": stream closed: the token 'host' was revoked"])
        #expect(fixture.server.metrics.streams.current == 1)
        _ = other
    }

    /// An expired token's streams end at the next look at open streams (every ``BoardWatcher/tokenCheckInterval``).
    @Test func anExpiredTokensStreamsEnd() async throws {
        let clock = TestClock()
        let fixture = try ServerFixture(clock: TimeSource(date: clock.date, instant: clock.instant))
        _ = try fixture.server.makeApplication()
        let watcher = fixture.server.watcher
        let expiry = clock.now.addingTimeInterval(60)
        _ = try fixture.board.createAPIToken(name: "brief", environment: "default", expiresAt: expiry, by: ServerFixture.admin)
        _ = try fixture.board.createAPIToken(
            name: "brief-host", environment: "default", kind: .hosts, expiresAt: expiry, by: ServerFixture.admin)
        watcher.check()
        var sdk = try watcher.openStream("default", token: try fixture.credential("brief"), lastEventID: nil).makeAsyncIterator()
        var host = try watcher.hosts.openStream("default", token: try fixture.credential("brief-host")).makeAsyncIterator()
        let firstSDK = await sdk.next()
        let firstHost = await host.next()
        #expect(firstSDK != nil && firstHost != nil)
        watcher.endStreamsOfRefusedTokens()
        #expect(fixture.server.metrics.streams.current == 2, "a token that has not expired yet keeps its streams")

        clock.advance(by: .seconds(59))
        watcher.endStreamsOfRefusedTokens()
        #expect(fixture.server.metrics.streams.current == 2, "a token a second from its expiry keeps its streams")
        clock.advance(by: .seconds(1))
        watcher.endStreamsOfRefusedTokens()
        let sdkRest = await Self.rest(&sdk)
        let hostRest = await Self.rest(&host)
        #expect(sdkRest.count == 1 && sdkRest[0].hasPrefix(": stream closed: the token 'brief' expired at "), "\(sdkRest)")
        #expect(hostRest.count == 1 && hostRest[0].hasPrefix(": stream closed: the token 'brief-host' expired at "), "\(hostRest)")
        #expect(fixture.server.metrics.streams.current == 0)
    }

    /// The comment lines a stream sends until it ends.
    static func rest(_ iterator: inout AsyncStream<ByteBuffer>.Iterator) async -> [String] {
        var lines: [String] = []
        while let chunk = await iterator.next() {
            lines += String(buffer: chunk).split(separator: "\n").map(String.init).filter { $0.hasPrefix(":") }
        }
        return lines
    }
}
