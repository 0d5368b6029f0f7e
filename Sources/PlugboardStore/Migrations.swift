import Crypto
import Foundation
import GRDB
import PlugboardMigrations

/// One migration known to this binary and, if applied, when.
public struct MigrationInfo: Sendable, Hashable, Codable {
    /// The version number, the digits before the first `_` of the file name.
    public let version: Int
    /// The file name in `Migrations/`.
    public let fileName: String
    /// SHA-256 (hex) of the SQL text.
    public let checksum: String
    /// When it was applied to this board, if it was.
    public let appliedAt: String?
    /// Who applied it, if it was applied.
    public let appliedBy: String?
}

/// The schema state of a board compared with the migrations compiled into this binary.
public struct MigrationStatus: Sendable, Hashable, Codable {
    /// Migrations applied to the board, in order.
    public let applied: [MigrationInfo]
    /// Migrations this binary has that the board has not applied, in order.
    public let pending: [MigrationInfo]
    /// Applied migrations this binary does not know: the board was written by a newer Plugboard.
    public let unknown: [MigrationInfo]
    /// Applied migrations whose SQL differs from this binary's copy.
    public let edited: [MigrationInfo]

    /// Throws when the board must not be touched by this binary (newer schema or edited migrations).
    public func checkCompatible() throws(BoardError) {
        if let first = unknown.first {
            throw BoardError(
                .schemaMismatch,
                "this board was written by a newer Plugboard: migration \(first.fileName) is unknown to this binary; upgrade plugboard (the board was not modified)"
            )
        }
        if let first = edited.first {
            throw BoardError(
                .schemaMismatch,
                "migration \(first.fileName) was edited after it was applied to this board (its checksum differs); restore the original file and add changes as a new migration"
            )
        }
    }
}

extension Board {
    /// The migrations compiled into this binary with their versions and checksums, in order.
    public static var knownMigrations: [(version: Int, migration: EmbeddedMigration, checksum: String)] {
        MigrationCatalog.embedded.map { migration in
            let digits = migration.fileName.prefix(while: \.isNumber)
            return (Int(digits) ?? -1, migration, SHA256.hex(Data(migration.sql.utf8)))
        }
    }

    /// Compares the board's `schema_migrations` with the migrations compiled into this binary.
    public func migrationStatus() throws(BoardError) -> MigrationStatus {
        struct Applied {
            let version: Int
            let fileName: String
            let checksum: String
            let appliedAt: String
            let appliedBy: String
        }
        let rows: [Applied] = try read { db in
            guard try db.tableExists("schema_migrations") else { return [] }
            return try Row.fetchAll(
                db, sql: "SELECT version, file_name, checksum, applied_at, applied_by FROM schema_migrations ORDER BY version"
            )
            .map {
                Applied(
                    version: $0["version"], fileName: $0["file_name"], checksum: $0["checksum"], appliedAt: $0["applied_at"],
                    appliedBy: $0["applied_by"])
            }
        }
        let known = Self.knownMigrations
        var applied: [MigrationInfo] = []
        var unknown: [MigrationInfo] = []
        var edited: [MigrationInfo] = []
        for row in rows {
            let info = MigrationInfo(
                version: row.version, fileName: row.fileName, checksum: row.checksum, appliedAt: row.appliedAt, appliedBy: row.appliedBy)
            applied.append(info)
            if let match = known.first(where: { $0.version == row.version }) {
                if match.checksum != row.checksum { edited.append(info) }
            } else {
                unknown.append(info)
            }
        }
        let appliedVersions = Set(rows.map(\.version))
        let pending = known.filter { !appliedVersions.contains($0.version) }
            .map {
                MigrationInfo(version: $0.version, fileName: $0.migration.fileName, checksum: $0.checksum, appliedAt: nil, appliedBy: nil)
            }
        return MigrationStatus(applied: applied, pending: pending, unknown: unknown, edited: edited)
    }

    /// Applies every pending migration, each in its own transaction, recording its checksum and an audit row.
    ///
    /// - Returns: The migrations that were applied (empty when the board was up to date).
    /// - Throws: ``BoardError`` `.schemaMismatch` when the board is newer than this binary or a migration was
    ///   edited after it was applied; nothing is changed in that case.
    @discardableResult
    public func migrate(actor: Actor) throws(BoardError) -> [MigrationInfo] {
        try migrate(actor: actor, initializing: false)
    }

    func migrate(actor: Actor, initializing: Bool) throws(BoardError) -> [MigrationInfo] {
        let status = try migrationStatus()
        try status.checkCompatible()
        var done: [MigrationInfo] = []
        let known = Self.knownMigrations
        for (index, info) in status.pending.enumerated() {
            guard let entry = known.first(where: { $0.version == info.version }) else { continue }
            let now = Timestamp.now()
            try write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS schema_migrations (
                            version    INTEGER PRIMARY KEY,
                            file_name  TEXT NOT NULL,
                            checksum   TEXT NOT NULL,
                            applied_at TEXT NOT NULL,
                            applied_by TEXT NOT NULL
                        )
                        """)
                try db.execute(sql: entry.migration.sql)
                try db.execute(
                    sql: "INSERT INTO schema_migrations (version, file_name, checksum, applied_at, applied_by) VALUES (?, ?, ?, ?, ?)",
                    arguments: [info.version, info.fileName, info.checksum, now, actor.osUser])
                try db.execute(sql: "PRAGMA user_version = \(info.version)")
                if initializing && index == 0 {
                    try initializeBoard(db, actor: actor, at: now)
                }
                try AuditLog.append(
                    db, actor: actor,
                    entry: AuditEntry(
                        action: "board.migrate", targetType: "schema", targetID: info.fileName,
                        after: AuditJSON.object([
                            "version": .int(info.version), "file": .string(info.fileName), "checksum": .string(info.checksum),
                        ])),
                    at: now)
            }
            done.append(
                MigrationInfo(
                    version: info.version, fileName: info.fileName, checksum: info.checksum, appliedAt: now, appliedBy: actor.osUser))
        }
        return done
    }

    /// The first facts of a new board: its id, creator, first admin and the `default` environment.
    private func initializeBoard(_ db: Database, actor: Actor, at now: String) throws {
        let boardID = UUID().uuidString.lowercased()
        for (key, value) in [("board_id", boardID), ("created_at", now), ("created_by", actor.osUser)] {
            try db.execute(sql: "INSERT INTO board_info (key, value) VALUES (?, ?)", arguments: [key, value])
        }
        try db.execute(
            sql: "INSERT INTO admins (principal, added_at, added_by) VALUES (?, ?, ?)", arguments: [actor.osUser, now, actor.osUser])
        try db.execute(
            sql: "INSERT INTO environments (name, created_at, created_by) VALUES ('default', ?, ?)", arguments: [now, actor.osUser])
        try AuditLog.append(
            db, actor: actor,
            entry: AuditEntry(
                action: "board.init", targetType: "board", targetID: boardID,
                after: .object(["admin": .string(actor.osUser), "environment": .string("default")])), at: now)
    }
}
