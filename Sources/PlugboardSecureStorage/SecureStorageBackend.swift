package import Foundation
package import PlugboardPluginAPI

/// Where the secure storage keeps its records: the board's secret tables (the store's `Board.secureStorageBackend`
/// conforms), or an in-memory backend in tests. The engine depends on this protocol only, never on a board (the shape
/// of GRDB's `DatabaseReader` and `DatabaseWriter`).
///
/// A backend stores only what is safe to store: the master key's key check value, data keys wrapped by the master
/// key, and sealed values. It never sees a plaintext value or an unwrapped key, so it needs no cryptography and
/// its errors cannot leak a secret.
///
/// Every secure-storage operation runs inside exactly one call to ``read(_:)`` or ``write(_:)``, and does all its
/// reading and writing through the view it is given. A conforming type must make each call one transaction:
/// ``write(_:)`` commits everything the body did if it returns, and nothing if it throws. Operations that touch
/// several records (a value and its data key's encryption count; every wrapped key during a master-key rotation)
/// depend on it. The view must not be used after the body returns; calls are never nested.
package protocol SecureStorageBackend: Sendable {
    /// Runs `body` in a read-only transaction that sees one consistent state, and returns its result.
    func read<T>(_ body: (any SecureStorageBackendReader) throws -> T) throws -> T

    /// Runs `body` in a read-write transaction, commits if it returns, rolls back if it throws, and returns its
    /// result or rethrows its error.
    func write<T>(_ body: (any SecureStorageBackendWriter) throws -> T) throws -> T
}

/// The reads the secure storage makes inside a backend transaction.
package protocol SecureStorageBackendReader {
    /// The board's master key check value (see ``MasterKey/keyCheckValue``), or `nil` if the board's secure
    /// storage was never initialised.
    func keyCheckValue() throws -> Data?

    /// The data key of `pluginID` at `version`, or `nil`.
    func dataKey(pluginID: String, version: Int) throws -> DataKeyRecord?

    /// Every data key of `pluginID`, whatever its state, in ascending version order.
    func dataKeys(pluginID: String) throws -> [DataKeyRecord]

    /// Every data key of every plug-in, whatever its state, in any order.
    func allDataKeys() throws -> [DataKeyRecord]

    /// The sealed value of `pluginID` under `key`, or `nil`.
    func sealedValue(pluginID: String, key: String) throws -> SealedValueRecord?

    /// Every sealed value of `pluginID`, in any order.
    func sealedValues(pluginID: String) throws -> [SealedValueRecord]

    /// The key names of every sealed value of `pluginID`, in any order.
    func valueKeys(pluginID: String) throws -> [String]
}

/// The writes the secure storage makes inside a read-write backend transaction.
package protocol SecureStorageBackendWriter: SecureStorageBackendReader {
    /// Stores the board's master key check value, replacing any previous one.
    func setKeyCheckValue(_ value: Data) throws

    /// Inserts a new data key. Throws if a data key with the same plug-in and version exists.
    func insertDataKey(_ record: DataKeyRecord) throws

    /// Replaces the data key with the same plug-in and version (every other column). Throws if there is none.
    func updateDataKey(_ record: DataKeyRecord) throws

    /// Stores `record`'s encryption count for the data key with the same plug-in and version, the one column a seal
    /// changes. Throws if there is no such key. (A board writes that column alone, so that the index of active keys
    /// is not rewritten on every put.)
    func updateEncryptionCount(_ record: DataKeyRecord) throws

    /// Inserts or replaces the sealed value with the same plug-in and key.
    func saveSealedValue(_ record: SealedValueRecord) throws

    /// Deletes the sealed value of `pluginID` under `key`, and tells whether there was one.
    func deleteSealedValue(pluginID: String, key: String) throws -> Bool

    /// Deletes every sealed value of `pluginID`, and returns how many there were.
    func deleteSealedValues(pluginID: String) throws -> Int
}

extension SecureStorageBackendWriter {
    /// By default, ``updateDataKey(_:)`` of the whole record.
    package func updateEncryptionCount(_ record: DataKeyRecord) throws { try updateDataKey(record) }
}

/// The life cycle of a data key.
package enum DataKeyState: String, Sendable, Hashable, Codable, CaseIterable {
    /// The key new values are sealed with. A plug-in has at most one active key.
    case active
    /// A former active key, kept to open the values sealed with it.
    case retired
    /// Destroyed: ``DataKeyRecord/wrappedKey`` is gone, and the values sealed with it can no longer be opened.
    case shredded
}

/// A plug-in's data key as the board stores it: wrapped by the master key, never in the clear.
/// Table `secret_data_keys` (migration 0003).
package struct DataKeyRecord: Sendable, Hashable {
    /// The plug-in that owns the key.
    package var pluginID: String
    /// The version, from 1, increasing by one with each rotation and never reused.
    package var version: Int
    /// Active, retired or shredded.
    package var state: DataKeyState
    /// The key wrapped by the master key (61 bytes), or `nil` once shredded.
    package var wrappedKey: Data?
    /// How many values were sealed with this key. The secure storage rotates the key before this reaches its
    /// threshold, far below the 2^32 limit of AES-GCM with random nonces.
    package var encryptionCount: Int
    /// When the key was created.
    package var createdAt: Date
    /// When the key stopped being active (retired or shredded), if it did.
    package var retiredAt: Date?

    /// Creates a record.
    package init(
        pluginID: String, version: Int, state: DataKeyState, wrappedKey: Data?, encryptionCount: Int,
        createdAt: Date, retiredAt: Date? = nil
    ) {
        self.pluginID = pluginID
        self.version = version
        self.state = state
        self.wrappedKey = wrappedKey
        self.encryptionCount = encryptionCount
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// A value as the board stores it: sealed, never in the clear.
/// Table `secret_values` (migration 0003).
package struct SealedValueRecord: Sendable, Hashable {
    /// The plug-in that owns the value.
    package var pluginID: String
    /// The key name, NFC-normalised.
    package var key: String
    /// The version of the data key the value is sealed with.
    package var dataKeyVersion: Int
    /// The sealed value: format byte, nonce, ciphertext and tag.
    package var sealedBox: Data
    /// When the value was last written (set, or re-encrypted).
    package var updatedAt: Date

    /// Creates a record.
    package init(pluginID: String, key: String, dataKeyVersion: Int, sealedBox: Data, updatedAt: Date) {
        self.pluginID = pluginID
        self.key = key
        self.dataKeyVersion = dataKeyVersion
        self.sealedBox = sealedBox
        self.updatedAt = updatedAt
    }
}

/// An error of a backend that knows which secure-storage failure it is (a board's integrity failure, a plug-in it does
/// not know): the engine passes it on as that ``SecureStorageError``, keeping its message. Any other error a backend
/// throws becomes `SecureStorageError.Code.unavailable`.
package protocol SecureStorageBackendFailure: Error {
    /// The secure-storage error this failure is.
    var secureStorageError: SecureStorageError { get }
}
