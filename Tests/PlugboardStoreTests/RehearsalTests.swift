import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// A change request's operation runs on the board `Board.rehearse(_:)` hands it: its first audited change is recorded
/// and rolled back there, while the same operation on the board itself is applied.
@Suite("rehearsing an operation", .timeLimit(.hangGuard))
struct RehearsalTests {
    static let admin = try! Principal(osUser: "alice")

    static func board() throws -> Board {
        let board = try Board.inMemory(by: admin)
        _ = try board.register(StoreOperationTests.manifest("com.example.a", "1.0.0"), by: admin)
        _ = try board.setEnabled("com.example.a", true, environment: "production", by: admin)
        return board
    }

    @Test func theBoardGivenRehearsesAndTheBoardItselfApplies() throws {
        let board = try Self.board()
        let head = try StoreOperationTests.actions(board)
        let kill = KillTarget.plugin("com.example.a")
        let outcome = try board.rehearse { rehearsing throws(BoardError) in try rehearsing.kill(kill, reason: "leaks", by: Self.admin) }
        guard case .rehearsed(let rehearsal) = outcome else {
            Issue.record("the kill was not rehearsed: \(outcome)")
            return
        }
        #expect(rehearsal.rows.map(\.action) == ["plugin.kill"])
        #expect(rehearsal.base.rows.keys.contains { $0.hasPrefix("kill_switches\t") })
        #expect(try StoreOperationTests.actions(board) == head)
        #expect(try board.registrySnapshot(environment: "production").plugins["com.example.a"]?.killed == false)

        // Nothing to change: the operation's own answer, and still nothing written.
        let again = try board.rehearse { rehearsing throws(BoardError) in
            try rehearsing.setEnabled("com.example.a", true, environment: "production", by: Self.admin)
        }
        guard case .unchanged(let result) = again else {
            Issue.record("an enable that changes nothing was rehearsed: \(again)")
            return
        }
        #expect(!result.changed)
        #expect(try StoreOperationTests.actions(board) == head)

        // The same kill on the board itself is a change like any other.
        _ = try board.kill(kill, reason: "leaks", by: Self.admin)
        #expect(try board.registrySnapshot(environment: "production").plugins["com.example.a"]?.killed == true)
        #expect(try StoreOperationTests.actions(board) == head + ["plugin.kill:ok"])
    }
}
