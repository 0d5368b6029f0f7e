import Crypto
import Foundation
package import PlugboardMigrations
package import PlugboardModel

/// One migration known to this binary and, if applied, when.
package struct MigrationInfo: Sendable, Hashable, Codable {
    /// The version number, the digits before the first `_` of the file name.
    package let version: Int
    /// The file name in `Migrations/`.
    package let fileName: String
    /// SHA-256 (hex) of the SQL text.
    package let checksum: String
    /// When it was applied to this board, if it was.
    package let appliedAt: String?
    /// Who applied it, if it was applied.
    package let appliedBy: String?
}

/// The schema state of a board compared with the migrations compiled into this binary.
package struct MigrationStatus: Sendable, Hashable, Codable {
    /// Migrations applied to the board, in order.
    package let applied: [MigrationInfo]
    /// Migrations this binary has that the board has not applied, in order.
    package let pending: [MigrationInfo]
    /// Applied migrations this binary does not know: the board was written by a newer Plugboard.
    package let unknown: [MigrationInfo]
    /// Applied migrations whose SQL differs from this binary's copy.
    package let edited: [MigrationInfo]

    /// Throws when the board must not be touched by this binary (newer schema or edited migrations).
    package func checkCompatible() throws(BoardError) {
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
    package static let knownMigrations: [(version: Int, migration: EmbeddedMigration, checksum: String)] = {
        MigrationCatalog.embedded.map { migration in
            let digits = migration.fileName.prefix(while: \.isNumber)
            return (Int(digits) ?? -1, migration, SHA256.hex(Data(migration.sql.utf8)))
        }
    }()

    /// Compares the board's `schema_migrations` with the migrations compiled into this binary.
    package func migrationStatus() throws(BoardError) -> MigrationStatus {
        let rows = try read { db in try BoardQueries.appliedMigrations(db) }
        let known = Self.knownMigrations
        var applied: [MigrationInfo] = []
        var unknown: [MigrationInfo] = []
        var edited: [MigrationInfo] = []
        for info in rows {
            applied.append(info)
            if let match = known.first(where: { $0.version == info.version }) {
                if match.checksum != info.checksum { edited.append(info) }
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
    package func migrate(by actor: Principal) throws(BoardError) -> [MigrationInfo] {
        try migrate(by: actor, initializing: false)
    }

    /// Applies the pending migrations up to version `through` (all by default; tests stop earlier to make a board
    /// as an older Plugboard left it).
    func migrate(by actor: Principal, initializing: Bool, through: Int = .max) throws(BoardError) -> [MigrationInfo] {
        var status = try migrationStatus()
        status = MigrationStatus(
            applied: status.applied, pending: status.pending.filter { $0.version <= through }, unknown: status.unknown,
            edited: status.edited)
        try status.checkCompatible()
        var done: [MigrationInfo] = []
        let known = Self.knownMigrations
        if !status.pending.isEmpty, try read({ db in try StateQueries.isTracked(db) }) {
            // A migration re-records the digests of every row: on a board edited behind the log's back, that would
            // make the edit look audited.
            let verification = try verifyAudit()
            if !verification.ok {
                throw BoardError(
                    .integrity,
                    "the board does not match its audit log (\(verification.problems[0])), so it is not migrated; run plugboard audit verify"
                )
            }
        }
        for (index, info) in status.pending.enumerated() {
            guard let entry = known.first(where: { $0.version == info.version }) else { continue }
            let refusal = AuditEntry(action: .boardMigrate, targetType: "schema", targetID: info.fileName)
            let appliedAt = try change(actor, refusal: refusal) { change in
                let wasTracked = try StateQueries.isTracked(change.db)
                let shapeBefore = try StateQueries.policyShape(change.db)
                try BoardQueries.apply(change.db, entry.migration, info: info, by: actor, at: change.now)
                if initializing && index == 0 { try initializeBoard(change) }
                try change.record(
                    AuditEntry(
                        action: .boardMigrate, targetType: "schema", targetID: info.fileName,
                        after: .object(["version": .int(info.version), "file": .string(info.fileName), "checksum": .string(info.checksum)]))
                )
                // The digests of every row after this migration: the state proof's starting point (migration 0006), or
                // its new one after a migration that changed the columns of a table of policy that has rows (0010 on a
                // board with tokens) or filled a new one. A migration that only adds empty tables (0007), or changes
                // the columns of empty ones, needs none: its own rows are noted like any change's.
                if try StateQueries.isTracked(change.db),
                    try !wasTracked || StateQueries.reshapedPolicy(change.db, since: shapeBefore)
                {
                    change.baseline = true
                    try change.record(
                        AuditEntry(
                            action: .boardBaseline, targetType: "board", targetID: info.fileName,
                            after: .object(["reason": .string("the audit log records the digests of every row of policy from here on")])))
                }
                return change.now
            }
            done.append(
                MigrationInfo(
                    version: info.version, fileName: info.fileName, checksum: info.checksum, appliedAt: appliedAt, appliedBy: actor.osUser))
        }
        return done
    }

    /// The first facts of a new board: its id, creator, first admin and the `default` environment.
    private func initializeBoard(_ change: AuditedChange) throws {
        let boardID = UUID().uuidString.lowercased()
        let db = change.db
        for (key, value) in [("board_id", boardID), ("created_at", change.now), ("created_by", change.actor.osUser)] {
            try BoardQueries.insertInfo(db, key, value)
        }
        try RoleQueries.insertAdmin(db, change.actor.osUser, by: change.actor, at: change.now)
        try RegistryQueries.insertEnvironment(db, "default", by: change.actor, at: change.now)
        try change.record(
            AuditEntry(
                action: .boardInit, targetType: "board", targetID: boardID,
                after: .object(["admin": .string(change.actor.osUser), "environment": .string("default")])))
    }
}
