import Foundation
import GRDB
import PlugboardMigrations
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// A temporary board file for one test.
struct TemporaryBoard {
    let folder: URL
    var path: String { folder.appendingPathComponent("board.sqlite").path }

    init() throws {
        folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("plugboard-store-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }

    static let actor = try! Principal(osUser: "tester")
}

@Suite("migrations", .timeLimit(.hangGuard))
struct MigrationTests {
    @Test func aNewBoardHasEveryMigrationAndWALAndForeignKeys() throws {
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        let board = try Board.create(at: temp.path, by: TemporaryBoard.actor)
        let status = try board.migrationStatus()
        #expect(status.pending.isEmpty)
        #expect(status.applied.map(\.fileName) == Board.knownMigrations.map(\.migration.fileName))
        let (journal, foreignKeys, appID) = try board.read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Bool.fetchOne(db, sql: "PRAGMA foreign_keys"),
                try Int32.fetchOne(db, sql: "PRAGMA application_id")
            )
        }
        #expect(journal == "wal")
        #expect(foreignKeys == true)
        #expect(appID == Board.applicationID)
        #expect(try board.admins().map(\.principal) == ["tester"])
        #expect(try board.environments() == ["default"])
    }

    @Test func anEditedMigrationIsRefused() throws {
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        _ = try Board.create(at: temp.path, by: TemporaryBoard.actor)
        try DatabaseQueue(path: temp.path).write { db in
            try db.execute(sql: "UPDATE schema_migrations SET checksum = 'deadbeef' WHERE version = 1")
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: temp.path))
        let error = #expect(throws: BoardError.self) { try Board.open(at: temp.path) }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("0001_registry.sql was edited after it was applied") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: temp.path)) == bytes)
    }

    @Test func aBoardFromANewerPlugboardIsRefusedAndNeverModified() throws {
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        _ = try Board.create(at: temp.path, by: TemporaryBoard.actor)
        try DatabaseQueue(path: temp.path).write { db in
            try db.execute(
                sql: "INSERT INTO schema_migrations VALUES (9999, '9999_future.sql', 'abc', '2030-01-01T00:00:00.000Z', 'future')")
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: temp.path))
        let error = #expect(throws: BoardError.self) { try Board.open(at: temp.path, requireCurrentSchema: false) }
        #expect(error?.message.contains("written by a newer Plugboard") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: temp.path)) == bytes)
    }

    @Test func createNeverOverwritesAndLeavesNothingOnFailure() throws {
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        try Data("precious".utf8).write(to: URL(fileURLWithPath: temp.path))
        let error = #expect(throws: BoardError.self) { try Board.create(at: temp.path, by: TemporaryBoard.actor) }
        #expect(error?.code == .conflict)
        #expect(try String(contentsOfFile: temp.path, encoding: .utf8) == "precious")
        let nowhere = temp.folder.appendingPathComponent("no/such/folder/board.sqlite").path
        #expect(throws: BoardError.self) { try Board.create(at: nowhere, by: TemporaryBoard.actor) }
    }

    /// Migration 0009 makes the audit log again without the index that 0001's `UNIQUE` put on `hash`: the same rows,
    /// columns, checks, indexes, triggers and view, and the board's `secure_delete` back on after it.
    @Test func migration0009KeepsTheAuditLogAndDropsOnlyTheIndexOfHashes() throws {
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/legacy-board")
        try FileManager.default.copyItem(atPath: fixture.appendingPathComponent("legacy-board.sqlite").path, toPath: temp.path)
        func indexes(_ db: Database) throws -> [String] {
            try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list('audit_log') ORDER BY name")
        }
        func columns(_ db: Database) throws -> [String] {
            try String.fetchAll(db, sql: "SELECT printf('%s %s %d %d', name, type, \"notnull\", pk) FROM pragma_table_info('audit_log')")
        }
        let (rowsBefore, columnsBefore, indexesBefore) = try DatabaseQueue(path: temp.path).read { db in
            (
                try Row.fetchAll(db, sql: "SELECT * FROM audit_log ORDER BY seq"),
                try columns(db), try indexes(db)
            )
        }
        #expect(indexesBefore.contains("sqlite_autoindex_audit_log_1"))

        let board = try Board.open(at: temp.path, requireCurrentSchema: false)
        let applied = try board.migrate(by: Principal(osUser: "root")).map(\.fileName)
        #expect(applied.contains("0009_audit_hash_unindexed.sql"))
        #expect(try board.verifyAudit().ok)
        try board.read { db in
            // The rows from before, then the migrations' own.
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM audit_log ORDER BY seq")
            #expect(rows.count > rowsBefore.count)
            for (before, after) in zip(rowsBefore, rows) {
                for column in before.columnNames { #expect(after[column] as DatabaseValue == before[column] as DatabaseValue) }
            }
            // 0006 added two columns at the end; the table now declares them in the same places (and 0012 one more).
            #expect(try columns(db) == columnsBefore + ["state_changes TEXT 0 0", "state_root TEXT 0 0", "via TEXT 0 0"])
            #expect(try indexes(db) == ["audit_log_by_actor", "audit_log_by_target"])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM audit_trail") == rows.count)
            #expect(try Int.fetchOne(db, sql: "PRAGMA secure_delete") == 1)
        }
        // The triggers and checks are back: the log takes no edit and no malformed hash.
        try DatabaseQueue(path: temp.path).write { db in
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE audit_log SET actor = 'mallory' WHERE seq = 1") }
            #expect(throws: DatabaseError.self) { try db.execute(sql: "DELETE FROM audit_log WHERE seq = 1") }
            #expect(throws: DatabaseError.self) {
                try db.execute(
                    sql: """
                        INSERT INTO audit_log (at, actor, action, outcome, target_type, prev_hash, hash)
                        VALUES ('now', 'mallory', 'x', 'ok', 'board', printf('%064d', 0), 'short')
                        """)
            }
        }
    }

    /// Tokens made before token kinds existed read flags and host routes alike, and fleets rely on that: migration
    /// 0010 makes them `sdk+hosts`, the state proof records their new column, and new tokens are one kind.
    @Test func tokensFromBeforeKindsKeepReadingBothKindsOfRoutes() throws {
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/legacy-board")
        try FileManager.default.copyItem(atPath: fixture.appendingPathComponent("legacy-board.sqlite").path, toPath: temp.path)
        let root = try Principal(osUser: "root")
        let board = try Board.open(at: temp.path, requireCurrentSchema: false)
        _ = try board.migrate(by: root, initializing: false, through: 9)
        // A token as the CLI made it before kinds: an audited row without the column.
        try board.change(root, refusal: AuditEntry(action: .tokenCreate, targetType: "api_token", targetID: "fleet")) { change in
            try change.db.execute(
                sql: """
                    INSERT INTO api_tokens (name, environment, token_hash, token_prefix, created_at, created_by)
                    VALUES ('fleet', 'default', ?, '*:default.pb_abcdef…', ?, 'root')
                    """, arguments: [String(repeating: "a", count: 64), change.now])
            try change.record(AuditEntry(action: .tokenCreate, targetType: "api_token", targetID: "fleet", environment: "default"))
        }
        #expect(try board.verifyAudit().ok)

        let applied = try board.migrate(by: root, initializing: false, through: 10).map(\.fileName)
        #expect(applied == ["0010_token_kinds.sql"])
        #expect(try board.verifyAudit().ok)
        // The token's digest changed with its new column: the migration records every row's anew. (On a board without
        // tokens it needs no baseline, as a new board shows.)
        let baselines = try board.auditRecords(AuditQuery()).filter { $0.action == "board.baseline" }.map(\.targetID)
        #expect(baselines == ["0006_state_proof.sql", "0010_token_kinds.sql"])
        let fresh = try Board.inMemory(by: root).auditRecords(AuditQuery()).filter { $0.action == "board.baseline" }
        #expect(fresh.map(\.targetID) == ["0006_state_proof.sql"])
        #expect(try board.apiTokens().map(\.kind) == [.sdkAndHosts])
        #expect(try board.apiTokenCredentials().map(\.kind) == [.sdkAndHosts])
        let created = try board.createAPIToken(name: "new", environment: "default", by: root)
        #expect(created.token.kind == .sdk)
        #expect(try board.createAPIToken(name: "host", environment: "default", kind: .hosts, by: root).token.kind == .hosts)
        #expect(try board.verifyAudit().ok)
        // The column takes no other kind.
        try DatabaseQueue(path: temp.path).write { db in
            #expect(throws: DatabaseError.self) { try db.execute(sql: "UPDATE api_tokens SET kind = 'admin' WHERE name = 'new'") }
            return
        }
    }

    /// When SQLite rolls a migration's transaction back by itself (a full disk while 0009 copies the log does), the
    /// error that comes out is the migration's own, and the connection's `secure_delete` is on again. A trigger's
    /// `RAISE(ROLLBACK)` stands in for the full disk.
    @Test func aMigrationSQLiteRollsBackReportsItsOwnErrorAndRestoresSecureDelete() throws {
        let migration = EmbeddedMigration(
            fileName: "0099_rolled_back.sql",
            sql: """
                PRAGMA secure_delete = OFF;
                CREATE TEMP TABLE doomed (x);
                CREATE TEMP TRIGGER doomed_insert BEFORE INSERT ON doomed BEGIN SELECT RAISE(ROLLBACK, 'the disk is full, say'); END;
                INSERT INTO doomed VALUES (1);
                """)
        let info = MigrationInfo(version: 99, fileName: migration.fileName, checksum: "", appliedAt: nil, appliedBy: nil)
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        let queue = try DatabaseQueue(path: temp.path)
        let refused = #expect(throws: DatabaseError.self) {
            try queue.writeWithoutTransaction { db in
                try db.inTransaction {
                    try BoardQueries.apply(db, migration, info: info, by: Principal(osUser: "root"), at: "now")
                    return .commit
                }
            }
        }
        #expect(refused?.message == "the disk is full, say")
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "PRAGMA secure_delete") } == 1)
    }
}
