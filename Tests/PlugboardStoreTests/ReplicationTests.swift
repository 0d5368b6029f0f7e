import Foundation
import GRDB
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// A board that Litestream replicates: its two bookkeeping tables, exactly as Litestream makes them, are not tampering,
/// and the board leaves checkpoints to Litestream.
@Suite("a board replicated by Litestream", .timeLimit(.hangGuard))
struct ReplicationTests {
    static let litestreamTables = [
        "CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)", "CREATE TABLE _litestream_lock (id INTEGER)",
    ]

    func board(with statements: [String]) throws -> (Board, TemporaryBoard) {
        let temp = try TemporaryBoard()
        let board = try Board.create(at: temp.path, by: TemporaryBoard.actor)
        try board.writer.writeWithoutTransaction { db in for sql in statements { try db.execute(sql: sql) } }
        return (board, temp)
    }

    @Test func litestreamsOwnTablesLeaveTheBoardVerifiedAndProven() throws {
        let (board, temp) = try board(with: Self.litestreamTables + ["INSERT INTO _litestream_seq VALUES (1, 42)"])
        defer { temp.remove() }
        let verification = try board.verifyAudit()
        #expect(verification.ok, "\(verification.problems)")
        #expect(try board.read { db in try SchemaProof.problems(db) }.isEmpty)
    }

    @Test(
        "a table of Litestream's name with another shape, or anything built on its tables, is named",
        arguments: [
            ["CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER, note TEXT)"],
            ["CREATE TABLE _litestream_lock (id INTEGER)", "CREATE INDEX _litestream_lock_id ON _litestream_lock (id)"],
            [
                "CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)",
                "CREATE TRIGGER _litestream_hook AFTER INSERT ON _litestream_seq BEGIN DELETE FROM kill_switches; END",
            ],
        ])
    func otherObjectsAreStillTampering(statements: [String]) throws {
        let (board, temp) = try board(with: statements)
        defer { temp.remove() }
        let verification = try board.verifyAudit()
        #expect(!verification.ok)
        #expect(verification.problems.contains { $0.contains("_litestream") }, "\(verification.problems)")
    }

    @Test func aBoardWithLitestreamsTableButNoReaderIsCheckpointed() throws {
        // The table alone is a name anyone who may write the board can add: it must not switch off the checkpoint that
        // erases shredded keys from the WAL.
        let (board, temp) = try board(with: Self.litestreamTables)
        defer { temp.remove() }
        #expect(try board.checkpointWAL() == .done)
        #expect(try board.checkpointWAL(evenIfReplicated: true) == .done)
        let (plain, other) = try self.board(with: [])
        defer { other.remove() }
        #expect(try plain.checkpointWAL() == .done)
    }

    @Test func aReplicatedBoardHeldByAReaderIsLeftToLitestream() async throws {
        // Litestream holds a read transaction in its own process; sqlite3 holds one here the same way.
        let (board, temp) = try board(with: Self.litestreamTables)
        defer { temp.remove() }
        let reader = try ChildProcess(
            "/usr/bin/sqlite3", ["-cmd", "BEGIN", "-cmd", "SELECT count(*) FROM audit_log", "-cmd", ".print holding", temp.path])
        try #require(
            await reader.waitForLine { $0.contains("holding") } != nil, "sqlite3 ended before it held its read transaction")
        #expect(try board.checkpointWAL() == .replicated)
        await reader.closeInput()
    }
}
