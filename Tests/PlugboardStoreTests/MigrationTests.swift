import Foundation
import GRDB
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

@Suite("migrations")
struct MigrationTests {
    @Test func aNewBoardHasEveryMigrationAndWALAndForeignKeys() throws {
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        let board = try Board.create(at: temp.path, actor: TemporaryBoard.actor)
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
        _ = try Board.create(at: temp.path, actor: TemporaryBoard.actor)
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
        _ = try Board.create(at: temp.path, actor: TemporaryBoard.actor)
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
        let error = #expect(throws: BoardError.self) { try Board.create(at: temp.path, actor: TemporaryBoard.actor) }
        #expect(error?.code == .conflict)
        #expect(try String(contentsOfFile: temp.path, encoding: .utf8) == "precious")
        let nowhere = temp.folder.appendingPathComponent("no/such/folder/board.sqlite").path
        #expect(throws: BoardError.self) { try Board.create(at: nowhere, actor: TemporaryBoard.actor) }
    }
}
