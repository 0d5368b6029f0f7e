import Foundation
import GRDB
import PlugboardModel
import PlugboardSecureStorage

/// The SQL of the secret tables (migration `0003_secure_storage.sql`: `secret_master_key`, `secret_data_keys`,
/// `secret_values`), as the reads and writes of one backend transaction. Only sealed bytes pass through here.
struct SecretQueries: SecureStorageBackendWriter {
    let db: Database
    /// The board's proofs of rows already proven in the file's current state, when reads may use them.
    var proven: ProvenRows? = nil
    /// The state of the file for a read-only transaction, read once at its start (it cannot move until it ends); nil
    /// in a change, whose own writes move it.
    var state: ProvenRows.FileState? = nil

    // MARK: Reads

    func keyCheckValue() throws -> Data? {
        try Data.fetchOne(db.cachedStatement(sql: "SELECT key_check_value FROM secret_master_key WHERE id = 1"))
    }

    func dataKey(pluginID: String, version: Int) throws -> DataKeyRecord? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: Self.dataKeySQL), arguments: [pluginID, version]) else { return nil }
        try prove(Self.dataKeys, row, "the wrapped data key \(version) of \(pluginID)")
        return try Self.dataKeyRecord(row)
    }

    func dataKeys(pluginID: String) throws -> [DataKeyRecord] {
        try Row.fetchAll(db.cachedStatement(sql: Self.dataKeysSQL), arguments: [pluginID]).map(Self.dataKeyRecord)
    }

    func allDataKeys() throws -> [DataKeyRecord] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT \(Self.dataKeyColumns) FROM secret_data_keys ORDER BY plugin_id, version")).map(
            Self.dataKeyRecord)
    }

    /// The sealed value, proven against the audit log first: an earlier sealed value copied back (a replay) opens
    /// with its key and binding, so the check of the row against the log is what refuses it.
    func sealedValue(pluginID: String, key: String) throws -> SealedValueRecord? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: Self.sealedValueSQL), arguments: [pluginID, key]) else { return nil }
        try prove(Self.values, row, "the sealed value of \(key) for \(pluginID)")
        return try Self.sealedValueRecord(row)
    }

    private static let dataKeys = StateTables.byName["secret_data_keys"]!
    private static let values = StateTables.byName["secret_values"]!
    /// The columns of a record, in the order ``dataKeyRecord(_:)`` and ``sealedValueRecord(_:)`` read them by index.
    private static let dataKeyColumns = "plugin_id, version, state, wrapped_key, encryption_count, created_at, retired_at"
    private static let valueColumns = "plugin_id, key, data_key_version, sealed, updated_at"
    /// The row and, last, its key in the proof, which SQLite makes with the triggers' own expression.
    private static let dataKeySQL =
        "SELECT \(dataKeyColumns), \(dataKeys.keyExpression()) FROM secret_data_keys WHERE plugin_id = ? AND version = ?"
    private static let dataKeysSQL = "SELECT \(dataKeyColumns) FROM secret_data_keys WHERE plugin_id = ? ORDER BY version"
    private static let sealedValueSQL =
        "SELECT \(valueColumns), \(values.keyExpression()) FROM secret_values WHERE plugin_id = ? AND key = ?"

    /// Refuses a row that the audit log does not prove (see `StateLedger.proveRow`); `row` ends with its key.
    private func prove(_ table: StateTable, _ row: Row, _ what: String) throws {
        let entity = StateEntity(table: table.name, key: row[row.count - 1])
        if let problem = try StateLedger.proveRow(db, entity, proven: proven, state: state) {
            throw BoardError(.integrity, "\(what) \(problem); run plugboard audit verify")
        }
    }

    func sealedValues(pluginID: String) throws -> [SealedValueRecord] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT \(Self.valueColumns) FROM secret_values WHERE plugin_id = ?"), arguments: [pluginID]
        ).map(
            Self.sealedValueRecord)
    }

    func valueKeys(pluginID: String) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: "SELECT key FROM secret_values WHERE plugin_id = ?"), arguments: [pluginID])
    }

    // MARK: Writes

    func setKeyCheckValue(_ value: Data) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO secret_master_key (id, key_check_value, updated_at) VALUES (1, ?, ?)
                ON CONFLICT (id) DO UPDATE SET key_check_value = excluded.key_check_value, updated_at = excluded.updated_at
                """
        ).execute(arguments: [value, Timestamp.now()])
    }

    func insertDataKey(_ record: DataKeyRecord) throws {
        do {
            try db.cachedStatement(
                sql: """
                    INSERT INTO secret_data_keys (plugin_id, version, state, wrapped_key, encryption_count, created_at, retired_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: Self.arguments(record))
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY {
            throw BoardError.notFound(
                "plug-in \(record.pluginID) is not registered on this board, and secure storage keeps values only for registered plug-ins; register it with plugboard plugin register"
            )
        }
    }

    func updateDataKey(_ record: DataKeyRecord) throws {
        try db.cachedStatement(
            sql: """
                UPDATE secret_data_keys SET state = ?3, wrapped_key = ?4, encryption_count = ?5, created_at = ?6, retired_at = ?7
                WHERE plugin_id = ?1 AND version = ?2
                """
        ).execute(arguments: Self.arguments(record))
        try requireOneChange(record)
    }

    private func requireOneChange(_ record: DataKeyRecord) throws {
        guard db.changesCount == 1 else {
            throw BoardError(
                .integrity,
                "data key version \(record.version) of plug-in \(record.pluginID) is missing from the board: it was altered; nothing was changed"
            )
        }
    }

    func updateEncryptionCount(_ record: DataKeyRecord) throws {
        try db.cachedStatement(sql: "UPDATE secret_data_keys SET encryption_count = ? WHERE plugin_id = ? AND version = ?")
            .execute(arguments: [record.encryptionCount, record.pluginID, record.version])
        try requireOneChange(record)
    }

    func saveSealedValue(_ record: SealedValueRecord) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO secret_values (plugin_id, key, data_key_version, sealed, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (plugin_id, key) DO UPDATE SET data_key_version = excluded.data_key_version,
                    sealed = excluded.sealed, updated_at = excluded.updated_at
                """
        ).execute(arguments: [record.pluginID, record.key, record.dataKeyVersion, record.sealedBox, Timestamp.format(record.updatedAt)])
    }

    func deleteSealedValue(pluginID: String, key: String) throws -> Bool {
        try db.cachedStatement(sql: "DELETE FROM secret_values WHERE plugin_id = ? AND key = ?").execute(arguments: [pluginID, key])
        return db.changesCount > 0
    }

    func deleteSealedValues(pluginID: String) throws -> Int {
        try db.cachedStatement(sql: "DELETE FROM secret_values WHERE plugin_id = ?").execute(arguments: [pluginID])
        return db.changesCount
    }

    // MARK: Listing (names and versions, never key material)

    static func secretEntries(_ db: Database, pluginID: String) throws -> [SecretEntry] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM secret_inventory WHERE plugin_id = ?"), arguments: [pluginID]).map { row in
            SecretEntry(
                pluginID: row["plugin_id"], key: row["key"], dataKeyVersion: row["data_key_version"], dataKeyState: row["data_key_state"],
                readable: row["readable"], updatedAt: row["updated_at"])
        }.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    static func dataKeyEntries(_ db: Database, pluginID: String?) throws -> [DataKeyEntry] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT k.plugin_id, k.version, k.state, k.encryption_count, k.created_at, k.retired_at,
                           (SELECT count(*) FROM secret_values v WHERE v.plugin_id = k.plugin_id AND v.data_key_version = k.version) AS value_count
                    FROM secret_data_keys k WHERE ?1 IS NULL OR k.plugin_id = ?1 ORDER BY k.plugin_id, k.version
                    """),
            arguments: [pluginID]
        ).map { row in
            DataKeyEntry(
                pluginID: row["plugin_id"], version: row["version"], state: row["state"], encryptionCount: row["encryption_count"],
                valueCount: row["value_count"], createdAt: row["created_at"], retiredAt: row["retired_at"])
        }
    }

    // MARK: Rows

    private static func arguments(_ record: DataKeyRecord) -> StatementArguments {
        [
            record.pluginID, record.version, record.state.rawValue, record.wrappedKey, record.encryptionCount,
            Timestamp.format(record.createdAt), record.retiredAt.map(Timestamp.format),
        ]
    }

    /// A data key from a row of ``dataKeyColumns``.
    private static func dataKeyRecord(_ row: Row) throws -> DataKeyRecord {
        let pluginID: String = row[0]
        let version: Int = row[1]
        guard let state = DataKeyState(rawValue: row[2] ?? ""), let createdAt = Timestamp.parse(row[5] ?? "") else {
            throw BoardError(
                .integrity,
                "data key version \(version) of plug-in \(pluginID) has an unreadable state or creation time: the board was altered")
        }
        return DataKeyRecord(
            pluginID: pluginID, version: version, state: state, wrappedKey: row[3], encryptionCount: row[4],
            createdAt: createdAt, retiredAt: (row[6] as String?).flatMap(Timestamp.parse))
    }

    /// A sealed value from a row of ``valueColumns``.
    private static func sealedValueRecord(_ row: Row) throws -> SealedValueRecord {
        SealedValueRecord(
            pluginID: row[0], key: row[1], dataKeyVersion: row[2], sealedBox: row[3] ?? Data(),
            updatedAt: Timestamp.parse(row[4] ?? "") ?? Date(timeIntervalSince1970: 0))
    }
}
