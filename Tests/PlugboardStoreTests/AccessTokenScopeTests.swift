import Foundation
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// Access tokens of scope stop: stored and read back with their scope, never read-only too, and never the maker of a
/// token; their rows are in the state proof like every token's.
@Suite("access-token scopes", .timeLimit(.hangGuard))
struct AccessTokenScopeTests {
    static let admin = try! Principal(osUser: "alice")

    @Test func aStopTokenKeepsItsScopeInEveryState() throws {
        let board = try Board.inMemory(by: Self.admin)
        let stop = try board.createAccessToken(principal: "alice", name: "alerts", readOnly: false, scope: .stop, by: Self.admin)
        let plain = try board.createAccessToken(principal: "alice", name: "laptop", readOnly: false, by: Self.admin)
        #expect(stop.token.scope == .stop && stop.token.stopsOnly)
        #expect(plain.token.scope == .all && !plain.token.stopsOnly)
        #expect(try board.accessToken(secret: stop.secret)?.scope == .stop)
        #expect(try board.accessTokens(principal: "alice").map(\.scope) == [.stop, .all])
        _ = try board.revokeAccessToken(principal: "alice", name: "alerts", by: Self.admin)
        let revoked = try #require(try board.accessToken(secret: stop.secret))
        #expect(revoked.state == .revoked && revoked.scope == .stop && revoked.inState(.active).scope == .stop)
        #expect(try board.verifyAudit().ok)
    }

    @Test func aStopTokenIsNotReadOnlyToo() throws {
        let board = try Board.inMemory(by: Self.admin)
        #expect(throws: BoardError.self) {
            try board.createAccessToken(principal: "alice", name: "both", readOnly: true, scope: .stop, by: Self.admin)
        }
        #expect(try board.accessTokens().isEmpty)
    }

    @Test func aStopTokenMakesNoToken() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.createAccessToken(principal: "alice", name: "alerts", readOnly: false, scope: .stop, by: Self.admin)
        let withStop = try Principal(osUser: "alice", via: "token alerts from 127.0.0.1", accessToken: "alerts")
        for (scope, readOnly) in [(AccessTokenScope.all, false), (.all, true), (.stop, false)] {
            do {
                _ = try board.createAccessToken(principal: "alice", name: "child", readOnly: readOnly, scope: scope, by: withStop)
                Issue.record("a stop token made a token of scope \(scope)")
            } catch {
                #expect(error.code == .notAllowed && error.message.contains("may only stop plug-ins"), "\(error)")
            }
        }
        #expect(try board.accessTokens().map(\.name) == ["alerts"])
    }

    @Test("a read-only token makes only read-only tokens")
    func aReadOnlyTokenMakesNoWriter() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.createAccessToken(principal: "alice", name: "viewer", readOnly: true, by: Self.admin)
        let withViewer = try Principal(osUser: "alice", via: "token viewer from 127.0.0.1", accessToken: "viewer")
        do {
            _ = try board.createAccessToken(principal: "alice", name: "writer", readOnly: false, by: withViewer)
            Issue.record("a read-only token made a token that writes")
        } catch {
            #expect(error.code == .notAllowed && error.message.contains("must be read-only too"), "\(error)")
        }
        let reader = try board.createAccessToken(principal: "alice", name: "reader", readOnly: true, by: withViewer)
        #expect(reader.token.readOnly)
        #expect(try board.accessTokens().map(\.name).sorted() == ["reader", "viewer"])
    }
}
