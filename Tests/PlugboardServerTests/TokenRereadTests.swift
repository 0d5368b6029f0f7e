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

/// A token works as soon as `plugboard token create` returns it, not only after the server's next board check.
@Suite("API tokens: a new token works at once", .timeLimit(.hangGuard))
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
        let clock = TestClock()
        let reread = TokenReread(board: board, tokens: TokenCheck(), clock: TimeSource(date: clock.date, instant: clock.instant))
        // A flood of unknown tokens, ten a millisecond for a second: one read per interval.
        var reads = 0
        for call in 0..<10_000 {
            if reread.rereadIfDue() { reads += 1 }
            if call % 10 == 9 { clock.advance(by: .milliseconds(1)) }
        }
        #expect(reads == Int(Duration.seconds(1) / TokenReread.minimumInterval), "\(reads) reads in a second")
        // The first unknown token after a quiet interval is read at once.
        clock.advance(by: TokenReread.minimumInterval)
        #expect(reread.rereadIfDue())
    }
}
