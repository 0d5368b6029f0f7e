import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import Synchronization
import Testing

@testable import PlugboardServer

/// The operations API's lanes: a guessed token is never looked up in the stops' lane, a token seen before never waits
/// behind guesses, and large bodies are counted per principal, whatever token they come with.
@Suite("the operations API's lanes", .timeLimit(.hangGuard))
struct OperationsLaneTests {
    static let admin = try! Principal(osUser: "alice")

    /// A board in memory, a server with the operations API over it, and two access tokens of alice.
    struct Served {
        let board: Board
        let server: PlugboardServer
        let routes: OperationsRoutes
        let laptop: CreatedAccessToken
        let ci: CreatedAccessToken

        init() throws {
            board = try Board.inMemory(by: OperationsLaneTests.admin)
            var configuration = ServerConfiguration()
            configuration.admin = true
            configuration.rolloutInterval = nil
            server = PlugboardServer(board: board, configuration: configuration)
            routes = try #require(server.admin)
            laptop = try board.createAccessToken(principal: "alice", name: "laptop", readOnly: false, by: OperationsLaneTests.admin)
            ci = try board.createAccessToken(principal: "alice", name: "ci", readOnly: false, by: OperationsLaneTests.admin)
        }
    }

    /// Holds a lane's only thread until ``release()``, or for 200 seconds at most.
    final class Blocked: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let released = Mutex(false)

        init(_ lane: WorkerThreads) {
            lane.submit { [gate] in _ = gate.wait(timeout: .now() + 200) }
        }

        /// Lets the lane go on; true when it was still held.
        @discardableResult func release() -> Bool {
            let held = released.withLock { released in
                defer { released = true }
                return !released
            }
            if held { gate.signal() }
            return held
        }
    }

    /// Sends a kill switch with `token` while `lane` is held; returns its status and whether the lane was still held
    /// when it was answered. The lane is let go after 150 seconds, so a request waiting for it is answered then, and
    /// one that does not wait is answered while it is held however busy the machine is.
    static func kill(_ served: Served, token: String, holding lane: WorkerThreads) async throws -> (HTTPResponse.Status, Bool) {
        let blocked = Blocked(lane)
        let timer = Task {
            // Generous: a request that waits for the lane is released here, and the test then fails; one that does not
            // is answered long before, however busy the machine.
            try? await Task.sleep(for: .seconds(420))
            blocked.release()
        }
        defer { timer.cancel() }
        let app = try served.server.makeApplication()
        let status = try await app.test(.router) { client in
            let body = ByteBuffer(string: #"{"plugin": "com.example.alpha", "reason": "INC-1"}"#)
            return try await client.execute(
                uri: "/api/admin/plugin.kill", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/json"], body: body
            ) { response in response.status }
        }
        return (status, blocked.release())
    }

    @Test func aGuessedTokenOnTheKillSwitchesRouteIsAnsweredWithoutTheStopsLane() async throws {
        let served = try Served()
        let (status, held) = try await Self.kill(served, token: "pba_guessed", holding: served.routes.stops)
        #expect(status == .unauthorized)
        #expect(held, "the guessed token waited for the stops' lane")
    }

    @Test func aTokenSeenBeforeDoesNotWaitBehindGuesses() async throws {
        let served = try Served()
        let app = try served.server.makeApplication()
        try await app.test(.router) { client in
            try await client.execute(
                uri: "/api/admin/whoami", method: .get, headers: [.authorization: "Bearer \(served.laptop.secret)"]
            ) { response in #expect(response.status == .ok) }
        }
        let (status, held) = try await Self.kill(served, token: served.laptop.secret, holding: served.routes.guesses)
        // Authenticated: the plug-in is not on the board, so the kill switch is refused for that, not for its token.
        #expect(status != .unauthorized && status != .tooManyRequests, "\(status)")
        #expect(held, "the accepted token waited behind the guesses' lane")
    }

    @Test func theStopsAreDeclaredInTheStopsLane() {
        var stops: Set<String> = []
        for type in OperationsAPI.requests where type.access == .stop { stops.insert(type.name) }
        #expect(
            stops == [
                "plugin.kill", "plugin.disable", "plugin.yank", "rollout.abort", "token.revoke", "access-token.revoke", "signer.revoke",
                "flag.disable", "flag.archive", "secret.delete",
                "admin.remove", "owner.remove", "group.remove", "change.reject", "change.cancel", "approver.revoke", "principal.unlink",
                "sso.unmap-group", "webhook.disable", "webhook.remove",
            ])
    }

    @Test func largeBodiesAreCountedPerPrincipalFromAllTheirTokens() async throws {
        let served = try Served()
        let request = Request(
            head: HTTPRequest(
                method: .post, scheme: "http", authority: "127.0.0.1", path: "/api/admin/plugin.list",
                headerFields: [.contentLength: String(2 << 20)]),
            body: RequestBody(buffer: ByteBuffer()))
        func caller(_ created: CreatedAccessToken) throws -> OperationsRoutes.Caller {
            OperationsRoutes.Caller(
                token: created.token, principal: try Principal(osUser: "alice", accessToken: created.token.name), address: "127.0.0.1")
        }
        let routes = served.routes
        let lane = routes.changes
        var tickets: [BodyAdmission.Ticket] = []
        for _ in 0..<routes.bodies.perPrincipal {
            if let ticket = try await routes.admitBody(PluginOperations.Register.self, request, try caller(served.laptop), lane: lane) {
                tickets.append(ticket)
            }
        }
        #expect(tickets.count == routes.bodies.perPrincipal)
        // Another token of the same principal gets no more.
        await #expect(throws: Refusal.self) {
            _ = try await routes.admitBody(PluginOperations.Register.self, request, try caller(served.ci), lane: lane)
        }
        tickets.removeFirst().leave()
        let ticket = try await routes.admitBody(PluginOperations.Register.self, request, try caller(served.ci), lane: lane)
        #expect(ticket != nil)
        ticket?.leave()
        for ticket in tickets { ticket.leave() }
    }
}
