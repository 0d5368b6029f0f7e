package import Foundation
import GRDB
package import PlugboardModel
package import PlugboardPluginAPI
package import PlugboardSecureStorage

// The board's side of the secure storage: its tables hold sealed bytes only, as a `SecureStorageBackend` (declared by
// PlugboardSecureStorage, whose engine does the cryptography: the master key, data keys, sealing); the store never sees
// a plaintext or an unwrapped key.

extension Board {
    /// The secret tables as a backend for the plug-ins' runtime values: each call is one transaction of its own.
    ///
    /// Plug-ins' reads through their `SecureStorage` are not audited; each write is a change with a `secret.write`
    /// audit row that names the keys (never a value) and carries the sealed rows' digests. Operators' changes go
    /// through ``changeSecrets(_:refusal:requiring:_:)``.
    package var secureStorageBackend: any SecureStorageBackend { BoardSecureStorageBackend(board: self) }

    /// Runs one audited change of the secret tables: checks `access` (refusals of not-allowed and not-found are
    /// audited), then gives `body` a backend that joins this change's transaction and the change, whose
    /// ``AuditedChange/record(_:)`` writes the audit rows. If `body` writes without recording an audit row, or
    /// throws, nothing is kept.
    package func changeSecrets<T>(
        _ actor: Principal, refusal: AuditEntry, requiring access: RequiredRole,
        _ body: (any SecureStorageBackend, AuditedChange) throws -> T
    ) throws(BoardError) -> T {
        try change(actor, refusal: refusal, requiring: access) { change in
            try body(JoinedSecureStorageBackend(change: change), change)
        }
    }

    /// The master key's key check value (33 bytes), or `nil` if the board's secure storage was never initialised.
    /// Reveals nothing about the key.
    package func masterKeyCheckValue() throws(BoardError) -> Data? {
        try read { db in try SecretQueries(db: db).keyCheckValue() }
    }

    /// The secrets of `pluginID`: names, data key versions and whether they can still be decrypted, never values.
    /// Needs no master key: key names are not secret.
    ///
    /// - Throws: ``BoardError`` with code `notFound` if the plug-in is not registered.
    package func secretEntries(pluginID: String) throws(BoardError) -> [SecretEntry] {
        try Validate.pluginID(pluginID)
        return try read { db in
            try RegistryQueries.requirePlugin(db, pluginID)
            return try SecretQueries.secretEntries(db, pluginID: pluginID)
        }
    }

    /// The data keys of `pluginID`, or of every plug-in when `nil`, in plug-in and version order. Needs no master
    /// key; never returns key material.
    package func dataKeyEntries(pluginID: String? = nil) throws(BoardError) -> [DataKeyEntry] {
        if let pluginID { try Validate.pluginID(pluginID) }
        return try read { db in
            if let pluginID { try RegistryQueries.requirePlugin(db, pluginID) }
            return try SecretQueries.dataKeyEntries(db, pluginID: pluginID)
        }
    }
}

/// The backend of ``Board/secureStorageBackend``: each read one read transaction (with the board's kept proofs of rows, see
/// `ProvenRows`), each write one audited `BEGIN IMMEDIATE` change, so that a second process waits for the writer
/// instead of failing.
struct BoardSecureStorageBackend: SecureStorageBackend {
    let board: Board

    func read<T>(_ body: (any SecureStorageBackendReader) throws -> T) throws -> T {
        // The file's state is read once: nothing in a read transaction can move it.
        try board.readTransaction { db in try body(SecretQueries(db: db, proven: board.provenRows, state: try ProvenRows.state(db))) }
    }

    /// One audited change: the audit row names the plug-in and the keys it wrote (never a value), and carries the
    /// digests of the sealed rows, so that an old sealed value copied back is seen by `audit verify` and hosts.
    func write<T>(_ body: (any SecureStorageBackendWriter) throws -> T) throws -> T {
        try board.change(try Principal.current(), refusal: AuditEntry(action: .secretWrite, targetType: "plugin")) { change in
            let result = try body(SecretQueries(db: change.db, proven: board.provenRows))
            try change.recordSecretWrites()
            return result
        }
    }
}

extension AuditedChange {
    /// Records one `secret.write` row per plug-in whose sealed values or data keys this change touched.
    func recordSecretWrites() throws {
        var keys: [String: Set<String>] = [:]
        var dataKeys: [String: Set<Int64>] = [:]
        // The plug-in and the key or version of each touched row, as the triggers noted them.
        let touched = try Row.fetchCursor(
            db.cachedStatement(
                sql: "SELECT DISTINCT tbl, part0, part1 FROM temp.state_touched WHERE tbl IN ('secret_values', 'secret_data_keys')"))
        while let row = try touched.next() {
            let table: String = row[0]
            let part: DatabaseValue = row[2]
            guard let plugin = String.fromDatabaseValue(row[1]) else { continue }
            if table == "secret_values" {
                if let key = String.fromDatabaseValue(part) { keys[plugin, default: []].insert(key) }
            } else if let version = Int64.fromDatabaseValue(part) {
                dataKeys[plugin, default: []].insert(version)
            }
        }
        for plugin in Set(keys.keys).union(dataKeys.keys).sorted() {
            try record(
                AuditEntry(
                    action: .secretWrite, targetType: "plugin", targetID: plugin,
                    after: .object([
                        "keys": .array((keys[plugin] ?? []).sorted().map(AuditJSON.string)),
                        "data_key_versions": .array((dataKeys[plugin] ?? []).sorted().map { .int(Int($0)) }),
                    ])))
        }
    }
}

/// A backend over an audited change in progress, so that secure-storage operations join its transaction. Reads run
/// directly; each write runs in a savepoint, so that a failed operation is undone even if the caller goes on.
///
/// Unchecked `Sendable`: the change holds GRDB's `Database`, which is not `Sendable`. A value of this type is made
/// inside the closure that received the change, used synchronously there, and never escapes it.
struct JoinedSecureStorageBackend: SecureStorageBackend, @unchecked Sendable {
    let change: AuditedChange

    func read<T>(_ body: (any SecureStorageBackendReader) throws -> T) throws -> T {
        try body(SecretQueries(db: change.db))
    }

    func write<T>(_ body: (any SecureStorageBackendWriter) throws -> T) throws -> T {
        var result: T?
        try change.savepoint {
            result = try body(SecretQueries(db: change.db))
            return true
        }
        return result!
    }
}

extension BoardError: SecureStorageBackendFailure {
    /// The board's error as the secure storage's: a failed integrity check is an integrity failure, an unknown plug-in
    /// an invalid namespace, anything else the backend being unavailable; the message is kept.
    package var secureStorageError: SecureStorageError {
        switch code {
        case .integrity: SecureStorageError(.integrityFailure, message)
        case .notFound: SecureStorageError(.invalidNamespace, message)
        default: SecureStorageError(.unavailable, message)
        }
    }
}
