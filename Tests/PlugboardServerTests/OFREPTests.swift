import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PlugboardFlags
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

@Suite("OFREP", .timeLimit(.hangGuard))
struct OFREPTests {
    static func body(_ context: String) -> ByteBuffer { ByteBuffer(string: #"{"context":\#(context)}"#) }

    @Test func singleEvaluationMapsResolutionDetails() async throws {
        let fixture = try ServerFixture()
        let bearer: HTTPFields = [.authorization: "Bearer \(fixture.token)", .contentType: "application/json"]
        try await fixture.test { client in
            try await client.execute(
                uri: "/ofrep/v1/evaluate/flags/checkout.new-flow", method: .post, headers: bearer,
                body: Self.body(#"{"targetingKey":"u1"}"#)
            ) { response in
                #expect(response.status == .ok)
                let object = ServerFixture.json(response.body)
                #expect(object["value"] as? Bool == true && object["reason"] as? String == "STATIC")
            }
            try await client.execute(uri: "/ofrep/v1/evaluate/flags/checkout.off", method: .post, headers: bearer, body: Self.body("{}")) {
                response in
                let object = ServerFixture.json(response.body)
                #expect(object["value"] as? Bool == false && object["reason"] as? String == "DISABLED")
            }
            try await client.execute(
                uri: "/ofrep/v1/evaluate/flags/beta.only", method: .post, headers: bearer, body: Self.body(#"{"appName":"beta-app"}"#)
            ) { response in
                let object = ServerFixture.json(response.body)
                #expect(object["value"] as? Bool == true && object["reason"] as? String == "TARGETING_MATCH")
            }
            try await client.execute(uri: "/ofrep/v1/evaluate/flags/banner.text", method: .post, headers: bearer, body: Self.body("{}")) {
                response in
                let object = ServerFixture.json(response.body)
                #expect(object["value"] as? String == "Hello in blue" && object["variant"] as? String == "blue")
            }
            try await client.execute(uri: "/ofrep/v1/evaluate/flags/n%C3%B6pe", method: .post, headers: bearer, body: Self.body("{}")) {
                response in
                #expect(ServerFixture.json(response.body)["key"] as? String == "nöpe", "path keys are percent-decoded")
            }
            try await client.execute(uri: "/ofrep/v1/evaluate/flags/nope", method: .post, headers: bearer, body: Self.body("{}")) {
                response in
                #expect(response.status == .notFound)
                #expect(ServerFixture.json(response.body)["errorCode"] as? String == "FLAG_NOT_FOUND")
            }
            try await client.execute(
                uri: "/ofrep/v1/evaluate/flags/checkout.off", method: .post, headers: bearer, body: ByteBuffer(string: "[1,2")
            ) { response in
                #expect(response.status == .badRequest)
                #expect(ServerFixture.json(response.body)["errorCode"] as? String == "INVALID_CONTEXT")
            }
            try await client.execute(
                uri: "/ofrep/v1/evaluate/flags/checkout.off", method: .post, headers: [.authorization: "Bearer \(fixture.productionToken)"],
                body: Self.body("{}")
            ) { response in
                #expect(response.status == .ok, "a token for production evaluates production")
            }
        }
    }

    @Test func bulkEvaluationHasAnETag() async throws {
        let fixture = try ServerFixture()
        let bearer: HTTPFields = [.authorization: "Bearer \(fixture.token)"]
        try await fixture.test { client in
            var etag = ""
            try await client.execute(
                uri: "/ofrep/v1/evaluate/flags", method: .post, headers: bearer, body: Self.body(#"{"targetingKey":"u1"}"#)
            ) {
                response in
                #expect(response.status == .ok)
                etag = try #require(response.headers[.eTag])
                let flags = try #require(ServerFixture.json(response.body)["flags"] as? [[String: Any]])
                #expect(flags.count == 4)
            }
            var conditional = bearer
            conditional[.ifNoneMatch] = etag
            try await client.execute(
                uri: "/ofrep/v1/evaluate/flags", method: .post, headers: conditional, body: Self.body(#"{"targetingKey":"u1"}"#)
            ) { response in
                #expect(response.status == .notModified)
            }
        }
    }
}

@Suite("event streams", .timeLimit(.hangGuard))
struct StreamTests {
    static func next(_ iterator: inout AsyncStream<ByteBuffer>.Iterator) async -> String {
        await iterator.next().map { String(buffer: $0) } ?? ""
    }

    @Test func streamHydratesThenSendsDeltasAndResumesWithLastEventID() async throws {
        let fixture = try ServerFixture()
        _ = try fixture.server.makeApplication()
        let watcher = fixture.server.watcher
        let app = try fixture.credential("app")
        var first = try watcher.openStream("default", token: app, lastEventID: nil).makeAsyncIterator()
        let hydration = await Self.next(&first)
        #expect(hydration.hasPrefix("event: unleash-connected\n"))
        #expect(hydration.contains(#""type":"hydration""#) && hydration.contains("checkout.new-flow"))
        let hydrationID = try #require(Int(hydration.split(separator: "\n")[1].dropFirst(4)))

        _ = try fixture.board.setFlagEnabled("checkout.off", true, environment: "default", by: ServerFixture.admin)
        watcher.check()
        let update = await Self.next(&first)
        #expect(update.hasPrefix("event: unleash-updated\nid: \(hydrationID + 1)\n"))
        #expect(update.contains(#""type":"feature-updated""#) && update.contains("checkout.off"))

        // A client that saw only the hydration resumes with exactly what it missed.
        var resumed = try watcher.openStream("default", token: app, lastEventID: hydrationID).makeAsyncIterator()
        let missed = await Self.next(&resumed)
        #expect(missed.hasPrefix("event: unleash-updated\nid: \(hydrationID + 1)\n") && missed.contains("checkout.off"))
        // An id from another run or from the future gets a fresh hydration.
        var stranger = try watcher.openStream("default", token: app, lastEventID: 42).makeAsyncIterator()
        #expect(await Self.next(&stranger).hasPrefix("event: unleash-connected\n"))
        // Another environment's stream hears nothing of default's changes.
        var production = try watcher.openStream("production", token: try fixture.credential("prod"), lastEventID: nil).makeAsyncIterator()
        _ = await Self.next(&production)
        _ = try fixture.board.setFlagEnabled("checkout.off", false, environment: "default", by: ServerFixture.admin)
        watcher.check()
        #expect(await Self.next(&first).contains("checkout.off"))
        #expect(fixture.server.metrics.streams.current == 4)
    }
}

/// OFREP values keep the payload's type: a string payload stays a string, a number payload is a number that SDKs which
/// tell integers from floats (OpenFeature's Python SDK in `get_float_value`) read as a float.
@Suite("OFREP payload types", .timeLimit(.hangGuard))
struct OFREPPayloadTypeTests {
    static let features = """
        {"version": 1, "features": [
          {"name": "limit.number", "enabled": true, "strategies": [{"name": "default"}],
           "variants": [{"name": "one", "weight": 1000, "stickiness": "default", "payload": {"type": "number", "value": "1"}}]},
          {"name": "ratio.number", "enabled": true, "strategies": [{"name": "default"}],
           "variants": [{"name": "half", "weight": 1000, "stickiness": "default", "payload": {"type": "number", "value": "0.5"}}]},
          {"name": "code.string", "enabled": true, "strategies": [{"name": "default"}],
           "variants": [{"name": "one", "weight": 1000, "stickiness": "default", "payload": {"type": "string", "value": "1"}}]}
        ]}
        """

    @Test func numberPayloadsAreFloatsAndStringPayloadsStayStrings() async throws {
        let board = try Board.inMemory(by: ServerFixture.admin)
        _ = try board.importFlags(try FeatureSet.decode(from: Data(Self.features.utf8)), environment: "default", by: ServerFixture.admin)
        let token = try board.createAPIToken(name: "app", environment: "default", by: ServerFixture.admin).secret
        let app = try PlugboardServer(board: board).makeApplication()
        try await app.test(.router) { client in
            for (flag, raw) in [("limit.number", #""value":1.0"#), ("ratio.number", #""value":0.5"#), ("code.string", #""value":"1""#)] {
                try await client.execute(
                    uri: "/ofrep/v1/evaluate/flags/\(flag)", method: .post, headers: [.authorization: "Bearer \(token)"],
                    body: ByteBuffer(string: "{}")
                ) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body).contains(raw), "\(flag): \(String(buffer: response.body))")
                }
            }
        }
    }

    @Test func jsonValues() {
        #expect(OFREPRoutes.json(.number(1)) == "1.0")
        #expect(OFREPRoutes.json(.number(-3)) == "-3.0")
        #expect(OFREPRoutes.json(.number(2.25)) == "2.25")
        #expect(OFREPRoutes.json(.string("1")) == #""1""#)
        #expect(OFREPRoutes.json(.bool(true)) == "true")
    }
}
