import Foundation
import PlugboardTestSupport
import Testing

/// The tests' reader and editor of board files (`BoardSQL`, the `sqlite3` tool in a process of its own) gives back
/// every value as SQLite holds it, and puts arguments in placeholders only.
@Suite("test support: a board file through sqlite3", .timeLimit(.hangGuard))
struct BoardFileTests {
    static let awkward = "it's \"quoted\", a\\b\nnew line\r\ttab \u{1B}[31m — ✓ 日本 ?1 -- /* ' ''"

    @Test func everyStorageClassReadsBackAsWritten() async throws {
        let sandbox = try Sandbox()
        let file = BoardSQL(sandbox.root.appendingPathComponent("values.sqlite").path)
        try await file.execute("CREATE TABLE t (n INTEGER, x ANY, 'odd ''name''' ANY) STRICT")
        let values: [SQLValue] = [
            .null, .integer(.max), .integer(.min), .real(0.1), .real(-1e300), .real(.infinity), .text(""), .text(Self.awkward),
            .blob(Data()), .blob(Data([0, 0x27, 0xFF, 0x0A])),
        ]
        for (index, value) in values.enumerated() {
            try await file.execute("INSERT INTO t VALUES (?, ?, ?2)", .integer(Int64(index)), value)
        }
        let rows = try await file.rows("SELECT * FROM t ORDER BY n")
        #expect(rows.map { $0["x"] } == values)
        #expect(rows.map { $0["odd 'name'"] } == values)
        #expect(try await file.string("SELECT x FROM t WHERE n = 7") == Self.awkward)
        #expect(try await file.data("SELECT x FROM t WHERE n = 9") == Data([0, 0x27, 0xFF, 0x0A]))
        #expect(try await file.int("SELECT count(*) FROM t") == values.count)
        #expect(try await file.int("SELECT x FROM t WHERE n = 0") == nil)
        #expect(try await file.value("SELECT x FROM t WHERE n = 99") == nil)
        #expect(try await file.strings("SELECT x FROM t WHERE typeof(x) = 'text' ORDER BY n") == ["", Self.awkward])
        // A value of another type than asked for is an error, not nil.
        await #expect(throws: BoardSQL.Failure.self) { _ = try await file.int("SELECT x FROM t WHERE n = 7") }
    }

    @Test func placeholdersInLiteralsIdentifiersAndCommentsAreLeftAlone() async throws {
        let sandbox = try Sandbox()
        let file = BoardSQL(sandbox.root.appendingPathComponent("placeholders.sqlite").path)
        try await file.execute("CREATE TABLE t (a)")
        let value = try await file.string(
            """
            SELECT '?' || ? || "?" || ?1 -- a comment? yes
             /* and ? here */ AS "column?"
            """, "x")
        // `"?"` names no column, so SQLite reads it as the text it quotes.
        #expect(value == "?x?x")
        await #expect(throws: (any Error).self) { _ = try await file.string("SELECT ?, ?", "only one") }
        await #expect(throws: (any Error).self) { _ = try await file.string("SELECT 1", "unused") }
    }

    @Test func aRefusedStatementThrowsWithSQLitesMessageAndChangesNothing() async throws {
        let sandbox = try await Sandbox.withBoard()
        let before = try await sandbox.snapshot()
        let refused = await #expect(throws: BoardSQL.Failure.self) {
            try await sandbox.boardFile.execute(
                "INSERT INTO admins VALUES ('mallory', '2026-01-01T00:00:00.000Z', 'mallory'); DELETE FROM audit_log")
        }
        #expect(refused?.stderr.contains("audit_log is append-only") == true, "\(String(describing: refused))")
        // The insert before the refused statement committed on its own: the dump shows it, and nothing else changed.
        let inserted = "INSERT INTO admins VALUES('mallory','2026-01-01T00:00:00.000Z','mallory');\n"
        let after = try await sandbox.boardFile.dump()
        #expect(after.contains(inserted))
        #expect(after.replacingOccurrences(of: inserted, with: "") == before.dump)
    }

    @Test func aBackupIsTheSameBoard() async throws {
        let sandbox = try await Sandbox.withBoard([manifest()])
        let copy = sandbox.root.appendingPathComponent("copy.sqlite").path
        try await sandbox.boardFile.backup(to: copy)
        let (original, copied) = (try await sandbox.boardFile.dump(), try await BoardSQL(copy).dump())
        #expect(copied == original && original.contains("com.example.calendar"))
        #expect(try await BoardSQL(copy).string("PRAGMA journal_mode") == "wal")
    }
}
