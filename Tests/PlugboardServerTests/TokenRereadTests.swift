import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PlugboardFlags
import PlugboardStore
import Testing

@testable import PlugboardServer

/// A token works as soon as `plugboard token create` returns it, not only after the server's next board check.
@Suite("API tokens: a new token works at once")
struct TokenRereadTests {
    @Test func aTokenCreatedWhileServingIsAcceptedOnItsFirstRequest() async throws {
        let board = try Board.inMemory(by: ServerFixture.admin)
        _ = try board.importFlags(
            try FeatureSet.decode(from: Data(ServerFixture.features.utf8)), environment: "default", by: ServerFixture.admin)
        // A board check that never comes during the test: only the re-read can make the new token known.
        let server = PlugboardServer(board: board, configuration: ServerConfiguration(pollInterval: .seconds(3600)))
        let app = try server.makeApplication()
        try await app.test(.router) { client in
            let fresh = try board.createAPIToken(name: "fresh", environment: "default", by: ServerFixture.admin).secret
            try await client.execute(uri: "/api/client/features", method: .get, headers: [.authorization: fresh]) { response in
                #expect(response.status == .ok, "\(String(buffer: response.body))")
            }
            try await client.execute(
                uri: "/ofrep/v1/evaluate/flags/checkout.new-flow", method: .post, headers: [.authorization: "Bearer \(fresh)"],
                body: ByteBuffer(string: "{}")
            ) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/api/client/features", method: .get, headers: [.authorization: "made-up"]) { response in
                #expect(response.status == .unauthorized)
                #expect(String(buffer: response.body).contains("the token is not known to this board"))
            }
        }
    }

    @Test func rereadsAreRateLimited() throws {
        let board = try Board.inMemory(by: ServerFixture.admin)
        let reread = TokenReread(board: board, tokens: TokenCheck())
        // A flood of unknown tokens for 300 ms: at most one read per interval, however busy the machine is.
        let start = ContinuousClock.now
        var reads = 0
        var calls = 0
        while ContinuousClock.now - start < .milliseconds(300) {
            if reread.rereadIfDue() { reads += 1 }
            calls += 1
        }
        let elapsed = ContinuousClock.now - start
        #expect(reads >= 1)
        #expect(reads <= Int(elapsed / TokenReread.minimumInterval) + 1, "\(reads) reads in \(calls) calls over \(elapsed)")
    }
}
