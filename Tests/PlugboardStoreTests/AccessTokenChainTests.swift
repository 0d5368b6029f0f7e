import Foundation
import GRDB
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// Tokens made with tokens: revoking one reaches every token made from it however long the chain, and a token is
/// accepted only while every token it was made with is.
@Suite("access-token chains", .timeLimit(.hangGuard))
struct AccessTokenChainTests {
    static let admin = try! Principal(osUser: "alice")

    /// A chain of `length` tokens of alice, `chain-0` made on the board's machine and each next one with the one before.
    static func chain(_ board: Board, _ length: Int) throws -> [CreatedAccessToken] {
        var made = [try board.createAccessToken(principal: "alice", name: "chain-0", readOnly: false, by: admin)]
        for index in 1..<length {
            let actor = try Principal(osUser: "alice", via: "token chain-\(index - 1)", accessToken: "chain-\(index - 1)")
            made.append(try board.createAccessToken(principal: "alice", name: "chain-\(index)", readOnly: false, by: actor))
        }
        return made
    }

    @Test func revokingATokenRevokesEveryTokenMadeFromItHoweverDeep() throws {
        let board = try Board.inMemory(by: Self.admin)
        let chain = try Self.chain(board, 80)
        let revoked = try board.revokeAccessToken(principal: "alice", name: "chain-0", by: Self.admin)
        #expect(revoked.message.contains("and the 79 tokens made with it"), "\(revoked.message)")
        let states = try board.accessTokens(principal: "alice").map(\.state)
        #expect(states.count == 80 && states.allSatisfy { $0 == .revoked }, "\(states)")
        #expect(try board.accessToken(secret: chain[79].secret)?.state == .revoked)
        #expect(try board.verifyAudit().ok)
    }

    @Test func aTokenIsRefusedWhileAnyTokenItWasMadeWithIsNoLongerAccepted() throws {
        let board = try Board.inMemory(by: Self.admin)
        let chain = try Self.chain(board, 70)
        // A chain whose revocation did not reach its end (a board written by another tool, an older cascade).
        func setChain3(_ sql: String) throws {
            try board.writer.writeWithoutTransaction { db in try db.execute(sql: "UPDATE access_tokens SET \(sql) WHERE name = 'chain-3'") }
        }
        try setChain3("revoked_at = '2026-01-01T00:00:00.000Z', revoked_by = 'alice'")
        #expect(try board.accessToken(secret: chain[69].secret)?.state == .revoked)
        #expect(try board.accessToken(secret: chain[4].secret)?.state == .revoked)
        #expect(try board.accessToken(secret: chain[2].secret)?.state == .active)
        let last = try Principal(osUser: "alice", via: "token chain-69", accessToken: "chain-69")
        let refused = #expect(throws: BoardError.self) {
            try board.createAccessToken(principal: "alice", name: "more", readOnly: true, by: last)
        }
        #expect(refused?.message.contains("no longer accepted") == true, "\(String(describing: refused))")

        try setChain3("revoked_at = NULL, revoked_by = NULL, expires_at = '2000-01-01T00:00:00.000Z'")
        #expect(try board.accessToken(secret: chain[69].secret)?.state == .expired)
        try setChain3("expires_at = NULL")
        #expect(try board.accessToken(secret: chain[69].secret)?.state == .active)
    }
}
