import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PlugboardFlags
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

@Suite("Unleash client API", .timeLimit(.hangGuard))
struct ClientAPITests {
    @Test func tokensAreRequiredAndKeptToTheirEnvironment() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            try await client.execute(uri: "/api/client/features", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect((ServerFixture.json(response.body)["message"] as? String)?.contains("no token") == true)
            }
            try await client.execute(uri: "/api/client/features", method: .get, headers: [.authorization: "*:default.pb_nope"]) {
                response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: "/api/client/features", method: .get, headers: [.authorization: fixture.revokedToken]) {
                response in
                #expect(response.status == .unauthorized)
                #expect((ServerFixture.json(response.body)["message"] as? String)?.contains("revoked") == true)
            }
            try await client.execute(
                uri: "/api/client/features?environment=production", method: .get, headers: [.authorization: fixture.token]
            ) { response in
                #expect(response.status == .forbidden)
            }
            try await client.execute(uri: "/api/client/features", method: .get, headers: [.authorization: "Bearer \(fixture.token)"]) {
                response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test func anExpiredTokenIsRefused() throws {
        let check = TokenCheck()
        let secret = "*:default.pb_expired"
        check.reload([
            APITokenCredential(
                name: "late", environment: "default", kind: .sdk, digest: APITokenSecret.digest(secret),
                expiresAt: Date(timeIntervalSinceNow: -1), revoked: false)
        ])
        guard
            case .failure(.unauthorized(let message)) = check.authenticate(
                [.authorization: secret], requestedEnvironment: nil, routes: .sdk)
        else {
            Issue.record("an expired token was accepted")
            return
        }
        #expect(message.contains("expired"))
    }

    @Test func featuresHaveAStrongETagAnd304AndFollowBoardChanges() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            var etag = ""
            try await client.execute(uri: "/api/client/features", method: .get, headers: [.authorization: fixture.token]) { response in
                #expect(response.status == .ok)
                etag = try #require(response.headers[.eTag])
                #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
                let exported = try fixture.board.featureSet(environment: "default", requireExisting: true)
                let served = try FeatureSet.decode(from: Data(response.body.readableBytesView))
                #expect(served == exported)
            }
            try await client.execute(
                uri: "/api/client/features", method: .get, headers: [.authorization: fixture.token, .ifNoneMatch: etag]
            ) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
            }
            _ = try fixture.board.setFlagEnabled("checkout.off", true, environment: "default", by: ServerFixture.admin)
            fixture.server.checkBoard()
            try await client.execute(
                uri: "/api/client/features", method: .get, headers: [.authorization: fixture.token, .ifNoneMatch: etag]
            ) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.eTag] != etag)
            }
        }
    }

    @Test func featureFiltersNarrowTheAnswer() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            try await client.execute(
                uri: "/api/client/features?namePrefix=checkout.", method: .get, headers: [.authorization: fixture.token]
            ) { response in
                #expect(Set(ServerFixture.names(response.body)) == ["checkout.new-flow", "checkout.off"])
            }
            try await client.execute(uri: "/api/client/features?tag=simple:x", method: .get, headers: [.authorization: fixture.token]) {
                response in
                #expect(ServerFixture.names(response.body).isEmpty)
            }
        }
    }

    @Test func deltaHydratesThenAnswersWithEventsOr304() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            var etag = ""
            try await client.execute(uri: "/api/client/delta", method: .get, headers: [.authorization: fixture.token]) { response in
                etag = try #require(response.headers[.eTag])
                let events = try #require(ServerFixture.json(response.body)["events"] as? [[String: Any]])
                #expect(events.first?["type"] as? String == "hydration")
                #expect((events.first?["features"] as? [Any])?.count == 4)
            }
            try await client.execute(uri: "/api/client/delta", method: .get, headers: [.authorization: fixture.token, .ifNoneMatch: etag]) {
                response in
                #expect(response.status == .notModified)
            }
            _ = try fixture.board.archiveFlag("checkout.off", archived: true, by: ServerFixture.admin)
            fixture.server.checkBoard()
            try await client.execute(uri: "/api/client/delta", method: .get, headers: [.authorization: fixture.token, .ifNoneMatch: etag]) {
                response in
                let events = try #require(ServerFixture.json(response.body)["events"] as? [[String: Any]])
                #expect(events.map { $0["type"] as? String } == ["feature-removed"])
                #expect(events.first?["featureName"] as? String == "checkout.off")
            }
        }
    }

    @Test func registerAndMetricsReachTheBoardInABatch() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            let register = #"{"appName":"shop","instanceId":"shop-1","sdkVersion":"unleash-python-sdk:6.9.1","strategies":["default"]}"#
            try await client.execute(
                uri: "/api/client/register", method: .post, headers: [.authorization: fixture.token], body: ByteBuffer(string: register)
            ) { response in #expect(response.status == .accepted) }
            let metrics = #"""
                {"appName":"shop","instanceId":"shop-1","bucket":{"start":"2026-01-01T00:00:00Z","stop":"2026-01-01T00:01:00Z",
                 "toggles":{"checkout.new-flow":{"yes":7,"no":2,"variants":{"blue":3}}}}}
                """#
            try await client.execute(
                uri: "/api/client/metrics", method: .post, headers: [.authorization: fixture.token], body: ByteBuffer(string: metrics)
            ) { response in #expect(response.status == .accepted) }
            #expect(try fixture.board.clientInstances().isEmpty, "nothing is written before the batch")
            fixture.server.flushUsage()
            let instances = try fixture.board.clientInstances()
            #expect(instances.map(\.appName) == ["shop"] && instances.first?.sdkVersion == "unleash-python-sdk:6.9.1")
            let usage = try fixture.board.flagUsage("checkout.new-flow")
            #expect(usage.first?.yes == 7 && usage.first?.no == 2 && usage.first?.variants == ["blue": 3])
            #expect(try fixture.board.unusedFlags(environment: "default", days: 1).map(\.name).contains("checkout.new-flow") == false)
            #expect(try fixture.board.apiTokens().first { $0.name == "app" }?.lastUsedAt != nil)
        }
    }

    @Test func badBodiesGet400And413AndChangeNothing() async throws {
        let fixture = try ServerFixture(maxBodyBytes: 1024)
        try await fixture.test { client in
            try await client.execute(
                uri: "/api/client/metrics", method: .post, headers: [.authorization: fixture.token], body: ByteBuffer(string: "{not json")
            ) { response in
                #expect(response.status == .badRequest)
                #expect((ServerFixture.json(response.body)["message"] as? String)?.contains("not valid JSON") == true)
            }
            try await client.execute(
                uri: "/api/client/metrics", method: .post, headers: [.authorization: fixture.token],
                body: ByteBuffer(string: #"{"appName":"x","bucket":{"toggles":{"f":{"yes":-5}}}}"#)
            ) { response in #expect(response.status == .badRequest) }
            try await client.execute(
                uri: "/api/client/register", method: .post, headers: [.authorization: fixture.token],
                body: ByteBuffer(string: "{\"appName\":\"" + String(repeating: "x", count: 2000) + "\"}")
            ) { response in #expect(response.status == .contentTooLarge) }
            try await client.execute(uri: "/api/client/features", method: .post, headers: [.authorization: fixture.token]) { response in
                #expect(response.status != .ok)
            }
        }
        #expect(try fixture.board.clientInstances().isEmpty)
    }

    @Test func healthAndMetrics() async throws {
        let fixture = try ServerFixture()
        try await fixture.test { client in
            try await client.execute(uri: "/health", method: .get) { response in #expect(response.status == .ok) }
            try await client.execute(uri: "/metrics", method: .get) { response in #expect(response.status == .unauthorized) }
            try await client.execute(uri: "/api/client/features", method: .get, headers: [.authorization: fixture.token]) { _ in }
            try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: fixture.token]) { response in
                let text = String(buffer: response.body)
                #expect(text.contains(#"plugboard_http_requests_total{route="/api/client/features",status="200"} 1"#))
                #expect(text.contains("plugboard_http_request_duration_seconds_bucket"))
                #expect(text.contains("plugboard_streams_connected 0"))
            }
        }
    }
}
