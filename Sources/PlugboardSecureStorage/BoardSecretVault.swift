import Foundation
import GRDB
import PlugboardPluginAPI
import PlugboardStore

/// The board's ``SecretVault``: the secrets engine's records in the tables of migration
/// `0003_secure_storage.sql` (`secret_master_key`, `secret_data_keys`, `secret_values`).
///
/// Each ``read(_:)`` is one read transaction and each ``write(_:)`` one `BEGIN IMMEDIATE` transaction on the
/// board, so a second process waits for the writer (the board's busy timeout) instead of failing, and an engine
/// operation is applied entirely or not at all. The vault stores only what the engine gives it: a key check value,
/// wrapped data keys and sealed values. No plaintext and no unwrapped key reaches the board file or its WAL.
///
/// Hosts rarely use it directly: ``BoardSecrets`` opens an engine over it and adds the audited admin operations.
public struct BoardSecretVault: SecretVault {
    /// The board.
    public let board: Board

    /// Creates the vault of `board`.
    public init(board: Board) {
        self.board = board
    }

    /// Runs `body` in a read transaction of the board.
    public func read<T>(_ body: (any SecretVaultReader) throws -> T) throws -> T {
        try board.database.read { db in try body(BoardVaultTransaction(db: db)) }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction of the board: committed if it returns, rolled back if it
    /// throws.
    ///
    /// - Throws: `SecureStorageError` with code `unavailable` if the board was opened read-only; the body's error;
    ///   or the database's.
    public func write<T>(_ body: (any SecretVaultWriter) throws -> T) throws -> T {
        guard !board.isReadOnly else {
            throw SecureStorageError(
                .unavailable,
                "The board at \(board.path) was opened read-only; storing or removing a secret needs write access.")
        }
        return try board.transaction { db in try body(BoardVaultTransaction(db: db)) }
    }
}

/// A vault over a transaction its caller already holds on `db`, so that engine operations join that transaction:
/// ``BoardSecrets`` runs an engine operation and appends its audit row in one transaction this way.
///
/// Reads run directly on `db`; each ``write(_:)`` runs in a savepoint, so that a failed engine operation is undone
/// even if the caller went on, and a successful one is committed or rolled back with the caller's transaction.
///
/// Unchecked `Sendable`: GRDB's `Database` is not `Sendable`. A value of this type is created inside the closure
/// that received `db`, used synchronously on that thread by an engine that lives no longer than the closure, and
/// never escapes it.
struct JoinedTransactionVault: SecretVault, @unchecked Sendable {
    let db: Database

    func read<T>(_ body: (any SecretVaultReader) throws -> T) throws -> T {
        try body(BoardVaultTransaction(db: db))
    }

    func write<T>(_ body: (any SecretVaultWriter) throws -> T) throws -> T {
        var result: T?
        try db.inSavepoint {
            result = try body(BoardVaultTransaction(db: db))
            return .commit
        }
        return result!
    }
}

/// The record reads and writes of one vault transaction, in SQL.
struct BoardVaultTransaction: SecretVaultWriter {
    let db: Database

    // MARK: Reads

    func keyCheckValue() throws -> Data? {
        try Data.fetchOne(db, sql: "SELECT key_check_value FROM secret_master_key WHERE id = 1")
    }

    func dataKey(pluginID: String, version: Int) throws -> DataKeyRecord? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM secret_data_keys WHERE plugin_id = ? AND version = ?",
            arguments: [pluginID, version]
        ).map(Self.dataKeyRecord)
    }

    func dataKeys(pluginID: String) throws -> [DataKeyRecord] {
        try Row.fetchAll(
            db, sql: "SELECT * FROM secret_data_keys WHERE plugin_id = ? ORDER BY version", arguments: [pluginID]
        ).map(Self.dataKeyRecord)
    }

    func allDataKeys() throws -> [DataKeyRecord] {
        try Row.fetchAll(db, sql: "SELECT * FROM secret_data_keys ORDER BY plugin_id, version").map(Self.dataKeyRecord)
    }

    func sealedValue(pluginID: String, key: String) throws -> SealedValueRecord? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM secret_values WHERE plugin_id = ? AND key = ?", arguments: [pluginID, key]
        ).map(Self.sealedValueRecord)
    }

    func sealedValues(pluginID: String) throws -> [SealedValueRecord] {
        try Row.fetchAll(db, sql: "SELECT * FROM secret_values WHERE plugin_id = ?", arguments: [pluginID])
            .map(Self.sealedValueRecord)
    }

    func valueKeys(pluginID: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT key FROM secret_values WHERE plugin_id = ?", arguments: [pluginID])
    }

    // MARK: Writes

    func setKeyCheckValue(_ value: Data) throws {
        try db.execute(
            sql: """
                INSERT INTO secret_master_key (id, key_check_value, updated_at) VALUES (1, ?, ?)
                ON CONFLICT (id) DO UPDATE SET key_check_value = excluded.key_check_value, updated_at = excluded.updated_at
                """,
            arguments: [value, Timestamp.now()])
    }

    func insertDataKey(_ record: DataKeyRecord) throws {
        do {
            try db.execute(
                sql: """
                    INSERT INTO secret_data_keys (plugin_id, version, state, wrapped_key, encryption_count, created_at, retired_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: Self.arguments(record))
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY {
            throw SecureStorageError(
                .invalidNamespace,
                "Plug-in '\(record.pluginID)' is not registered on this board, and secure storage keeps values only "
                    + "for registered plug-ins; register it with `plugboard plugin register`.")
        }
    }

    func updateDataKey(_ record: DataKeyRecord) throws {
        try db.execute(
            sql: """
                UPDATE secret_data_keys SET state = ?3, wrapped_key = ?4, encryption_count = ?5, created_at = ?6,
                    retired_at = ?7
                WHERE plugin_id = ?1 AND version = ?2
                """,
            arguments: Self.arguments(record))
        guard db.changesCount == 1 else {
            throw SecureStorageError(
                .integrityFailure,
                "Data key version \(record.version) of plug-in '\(record.pluginID)' is missing from the board; it "
                    + "was altered. Nothing was changed.")
        }
    }

    func saveSealedValue(_ record: SealedValueRecord) throws {
        try db.execute(
            sql: """
                INSERT INTO secret_values (plugin_id, key, data_key_version, sealed, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (plugin_id, key) DO UPDATE SET data_key_version = excluded.data_key_version,
                    sealed = excluded.sealed, updated_at = excluded.updated_at
                """,
            arguments: [
                record.pluginID, record.key, record.dataKeyVersion, record.sealedBox,
                Timestamp.format(record.updatedAt),
            ])
    }

    func deleteSealedValue(pluginID: String, key: String) throws -> Bool {
        try db.execute(
            sql: "DELETE FROM secret_values WHERE plugin_id = ? AND key = ?", arguments: [pluginID, key])
        return db.changesCount > 0
    }

    func deleteSealedValues(pluginID: String) throws -> Int {
        try db.execute(sql: "DELETE FROM secret_values WHERE plugin_id = ?", arguments: [pluginID])
        return db.changesCount
    }

    // MARK: Rows

    private static func arguments(_ record: DataKeyRecord) -> StatementArguments {
        [
            record.pluginID, record.version, record.state.rawValue, record.wrappedKey, record.encryptionCount,
            Timestamp.format(record.createdAt), record.retiredAt.map(Timestamp.format),
        ]
    }

    private static func dataKeyRecord(_ row: Row) throws -> DataKeyRecord {
        let pluginID: String = row["plugin_id"]
        let version: Int = row["version"]
        guard let state = DataKeyState(rawValue: row["state"] ?? ""),
            let createdAt = Timestamp.parse(row["created_at"] ?? "")
        else {
            throw SecureStorageError(
                .integrityFailure,
                "Data key version \(version) of plug-in '\(pluginID)' has an unreadable state or creation time; the "
                    + "board was altered.")
        }
        return DataKeyRecord(
            pluginID: pluginID, version: version, state: state, wrappedKey: row["wrapped_key"],
            encryptionCount: row["encryption_count"], createdAt: createdAt,
            retiredAt: (row["retired_at"] as String?).flatMap(Timestamp.parse))
    }

    private static func sealedValueRecord(_ row: Row) throws -> SealedValueRecord {
        SealedValueRecord(
            pluginID: row["plugin_id"], key: row["key"], dataKeyVersion: row["data_key_version"],
            sealedBox: row["sealed"] ?? Data(),
            updatedAt: Timestamp.parse(row["updated_at"] ?? "") ?? Date(timeIntervalSince1970: 0))
    }
}
