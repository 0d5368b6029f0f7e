import GRDB
import GRDBSQLite
import PlugboardMigrations
import PlugboardModel

/// The SQL of the board itself: its facts (`board_info`) and its schema bookkeeping (`schema_migrations`).
enum BoardQueries {
    static func info(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM board_info WHERE key = ?"), arguments: [key])
    }

    static func insertInfo(_ db: Database, _ key: String, _ value: String) throws {
        try db.cachedStatement(sql: "INSERT INTO board_info (key, value) VALUES (?, ?)").execute(arguments: [key, value])
    }

    /// The migrations the board applied, in order (none on a board that has not applied any).
    static func appliedMigrations(_ db: Database) throws -> [MigrationInfo] {
        guard try db.tableExists("schema_migrations") else { return [] }
        return try Row.fetchAll(
            db.cachedStatement(sql: "SELECT version, file_name, checksum, applied_at, applied_by FROM schema_migrations ORDER BY version")
        ).map {
            MigrationInfo(
                version: $0["version"], fileName: $0["file_name"], checksum: $0["checksum"], appliedAt: $0["applied_at"],
                appliedBy: $0["applied_by"])
        }
    }

    /// Runs one migration's SQL and records it (creating the bookkeeping table first if needed).
    static func apply(_ db: Database, _ migration: EmbeddedMigration, info: MigrationInfo, by actor: Principal, at now: String) throws {
        guard let bookkeeping = MigrationCatalog.support["schema_migrations.sql"] else {
            throw BoardError(.io, "this plugboard was built without Migrations/schema_migrations.sql; rebuild it from a complete checkout")
        }
        try db.execute(sql: bookkeeping)
        // A migration may turn `secure_delete` off for its own work (0009 drops a table whose pages hold nothing
        // secret); the board's setting is back before anything else runs here, whether the migration succeeded or not.
        // It goes to SQLite directly: the setting belongs to the connection, not the transaction, and after SQLite
        // rolled the transaction back by itself (a full disk while 0009 copies the log), GRDB refuses every statement
        // with "Transaction was aborted", which would hide the migration's own error.
        let applied = Result { try db.execute(sql: migration.sql) }
        let restored = sqlite3_exec(db.sqliteConnection, Board.secureDeletePragma, nil, nil, nil)
        try applied.get()
        guard restored == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: restored), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        try db.cachedStatement(
            sql: "INSERT INTO schema_migrations (version, file_name, checksum, applied_at, applied_by) VALUES (?, ?, ?, ?, ?)"
        ).execute(arguments: [info.version, info.fileName, info.checksum, now, actor.osUser])
        try db.execute(sql: "PRAGMA user_version = \(info.version)")
    }
}
