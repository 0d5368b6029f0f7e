package import Foundation
package import PlugboardPluginAPI
import Synchronization

/// Envelope encryption of plug-in values over a `SecureStorageBackend`: the secure storage's own logic, free of any board.
///
/// The engine holds the master key in memory and keeps everything else in the backend: the key check value, every
/// plug-in's data keys wrapped by the master key, and the sealed values. Each public method is one backend
/// transaction, and each transaction first checks the board's key check value against the master key, so a wrong
/// master key is refused (`SecureStorageError.Code.wrongMasterKey`) before anything is read
/// or written.
///
/// A plug-in never talks to the store: the host hands it ``storage(forPlugin:)``, a
/// `SecureStorage` bound to the plug-in's namespace. The admin operations (rotation,
/// re-encryption, shredding) are for the host and the `plugboard` CLI.
///
/// ```swift
/// let store = try SecureStorageEngine.initialize(backend: board.secureStorageBackend, masterKey: .generate())
/// let storage = try store.storage(forPlugin: "com.example.calendar")
/// try await storage.set(Data("t0k3n".utf8), forKey: "oauth-token")
/// ```
///
/// ## Keys and rotation
///
/// Each plug-in has its own data keys (DEKs), numbered from 1; at most one is active and seals new values, the
/// retired ones still open the values sealed with them. The store counts the values each data key sealed and
/// rotates to a new version before the count reaches ``Configuration/dataKeyRotationThreshold`` (2^30 by
/// default), far below the 2^32 limit of AES-GCM with random nonces.
///
/// - ``rotateMasterKey(to:)`` rewraps every data key under a new master key, without touching values.
/// - ``rotateDataKey(pluginID:reencrypt:)`` starts a new data key version for a plug-in.
/// - ``reencryptValues(pluginID:)`` moves a plug-in's values to its newest data key.
/// - ``shredDataKeys(pluginID:)`` destroys a plug-in's data keys: its values can no longer be opened.
package final class SecureStorageEngine: Sendable, CustomStringConvertible, CustomReflectable {
    /// Settings of an engine: ``SecureStorageConfiguration``.
    package typealias Configuration = SecureStorageConfiguration

    /// The result of ``rotateDataKey(pluginID:reencrypt:)``.
    package struct DataKeyRotation: Sendable, Hashable {
        /// The plug-in.
        package var pluginID: String
        /// The version that was active before, if there was one.
        package var previousVersion: Int?
        /// The new active version.
        package var newVersion: Int
        /// What re-encryption did, if it was asked for.
        package var reencryption: Reencryption?
    }

    /// The result of ``reencryptValues(pluginID:)``.
    package struct Reencryption: Sendable, Hashable {
        /// The plug-in.
        package var pluginID: String
        /// How many values were opened and sealed again with the newest data key.
        package var reencryptedValueCount: Int
        /// Keys whose value could not be moved because its data key was shredded, sorted.
        package var unreadableKeys: [String]
    }

    /// The result of ``shredDataKeys(pluginID:)``.
    package struct Shredding: Sendable, Hashable {
        /// The plug-in.
        package var pluginID: String
        /// The data key versions that were destroyed by this call.
        package var shreddedVersions: [Int]
        /// How many stored values can no longer be opened.
        package var unreadableValueCount: Int
    }

    /// Where records are kept.
    package let backend: any SecureStorageBackend
    /// The store's settings.
    package let configuration: Configuration
    let currentKey: Mutex<MasterKey>

    // MARK: Opening

    /// Opens the secure storage of a board whose storage was initialised with `masterKey`.
    ///
    /// - Throws: `SecureStorageError` with code `wrongMasterKey` if the board belongs to
    ///   another master key, `notInitialized` if the board has no key check value, `unavailable` if the backend
    ///   failed.
    /// - Precondition: `configuration.dataKeyRotationThreshold` is between 1 and
    ///   ``Configuration/maximumDataKeyRotationThreshold``.
    package init(
        backend: any SecureStorageBackend, masterKey: MasterKey, configuration: Configuration = Configuration()
    ) throws(SecureStorageError) {
        precondition(
            (1...Configuration.maximumDataKeyRotationThreshold).contains(configuration.dataKeyRotationThreshold),
            "dataKeyRotationThreshold must be between 1 and 2^32"
        )
        self.backend = backend
        self.configuration = configuration
        self.currentKey = Mutex(masterKey)
        try verifyMasterKey()
    }

    /// Opens the secure storage of a board with the key that `keyProvider` returns.
    ///
    /// - Throws: the provider's error (``KeyProviderError`` for Plugboard's providers), or the errors of
    ///   ``init(backend:masterKey:configuration:)``.
    package static func open(
        backend: any SecureStorageBackend, keyProvider: any KeyProvider, configuration: Configuration = Configuration()
    ) async throws -> SecureStorageEngine {
        let key = try await keyProvider.masterKey()
        return try SecureStorageEngine(backend: backend, masterKey: key, configuration: configuration)
    }

    /// Initialises a board's secure storage with `masterKey`, by storing its key check value, and opens it.
    ///
    /// Called by `plugboard init`. Calling it again with the same key just opens the storage.
    ///
    /// - Throws: `SecureStorageError` with code `wrongMasterKey` if the board was
    ///   initialised with another key; `integrityFailure` if the board has data keys but no key check value
    ///   (a damaged or partly restored board), which is never overwritten; `unavailable` if the backend failed.
    package static func initialize(
        backend: any SecureStorageBackend, masterKey: MasterKey, configuration: Configuration = Configuration()
    ) throws(SecureStorageError) -> SecureStorageEngine {
        try mappingErrors {
            try backend.write { writer in
                if let stored = try writer.keyCheckValue() {
                    try verify(masterKey, against: stored)
                    return
                }
                let existing = try writer.allDataKeys()
                guard existing.isEmpty else {
                    throw SecureStorageError(
                        .integrityFailure,
                        "the board holds \(existing.count) data keys but no master key check value (it was damaged or partly restored); restore it from a complete backup; it was not changed"
                    )
                }
                try writer.setKeyCheckValue(masterKey.keyCheckValue)
            }
        }
        return try SecureStorageEngine(backend: backend, masterKey: masterKey, configuration: configuration)
    }

    /// The ``MasterKey/identifier`` of the master key in use.
    package var masterKeyIdentifier: String {
        currentKey.withLock { $0.identifier }
    }

    /// The master key in use, for `BoardSecureStorage` to open stores that join its transactions.
    package var masterKey: MasterKey {
        currentKey.withLock { $0 }
    }

    /// Makes `key` the master key in use, once a rotation made by another store over the same board committed.
    package func adoptMasterKey(_ key: MasterKey) {
        currentKey.withLock { $0 = key }
    }

    /// Checks that the store's master key is the board's.
    ///
    /// - Throws: `SecureStorageError` with code `wrongMasterKey` or `notInitialized`.
    package func verifyMasterKey() throws(SecureStorageError) {
        try reading { _, _ in }
    }

    /// Returns the secure storage of one plug-in: a `SecureStorage` bound to `pluginID`,
    /// to hand to that plug-in.
    ///
    /// - Throws: `SecureStorageError` with code `invalidNamespace`.
    package func storage(forPlugin pluginID: String) throws(SecureStorageError) -> PluginSecureStorage {
        PluginSecureStorage(store: self, pluginID: try SecureStorageLimits.validatedNamespace(pluginID))
    }

    // MARK: Values

    /// Seals `value` and stores it under `key` for `pluginID`, rotating the plug-in's data key first if it
    /// reached the rotation threshold.
    ///
    /// - Throws: `SecureStorageError`; nothing was changed.
    package func setValue(_ value: Data, forKey key: String, pluginID: String) throws(SecureStorageError) {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        let key = try SecureStorageLimits.validatedKeyName(key)
        try SecureStorageLimits.validateValue(value, forKey: key)
        try writing { writer, masterKey in
            var sealing: SealingKey?
            try seal(value, forKey: key, pluginID: pluginID, writer: writer, masterKey: masterKey, using: &sealing)
        }
    }

    /// Opens and returns the value stored under `key` for `pluginID`, or `nil` if there is none.
    ///
    /// - Throws: `SecureStorageError` with code `integrityFailure` if the value or its data
    ///   key was altered or moved, `keysShredded` if its data key was shredded; never returns wrong data.
    package func value(forKey key: String, pluginID: String) throws(SecureStorageError) -> Data? {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        let key = try SecureStorageLimits.validatedKeyName(key)
        return try reading { reader, masterKey in
            guard var record = try reader.sealedValue(pluginID: pluginID, key: key) else { return nil }
            let dataKey = try openingKey(
                pluginID: pluginID, version: record.dataKeyVersion, forKey: key, reader: reader,
                masterKey: masterKey)
            // The sealed bytes go to `open` alone, which releases them before it makes the plaintext.
            let sealed = record.sealedBox
            record.sealedBox = Data()
            return try Envelope.open(consume sealed, forKey: key, with: dataKey)
        }
    }

    /// Removes the value stored under `key` for `pluginID`, and tells whether there was one.
    @discardableResult
    package func removeValue(forKey key: String, pluginID: String) throws(SecureStorageError) -> Bool {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        let key = try SecureStorageLimits.validatedKeyName(key)
        return try writing { writer, _ in
            try writer.deleteSealedValue(pluginID: pluginID, key: key)
        }
    }

    /// The keys of `pluginID` that have a value, sorted by UTF-8 bytes.
    package func keys(pluginID: String) throws(SecureStorageError) -> [String] {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try reading { reader, _ in
            try reader.valueKeys(pluginID: pluginID).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }

    /// Removes every value of `pluginID`, and returns how many there were. Data keys are kept.
    @discardableResult
    package func removeAllValues(pluginID: String) throws(SecureStorageError) -> Int {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try writing { writer, _ in
            try writer.deleteSealedValues(pluginID: pluginID)
        }
    }

    // MARK: Transactions

    /// Runs `body` in a read transaction after checking the master key.
    func reading<T>(_ body: (any SecureStorageBackendReader, MasterKey) throws -> T) throws(SecureStorageError) -> T {
        try retryingAfterRotation { masterKey in
            try backend.read { reader in
                try Self.verify(masterKey, against: reader.keyCheckValue())
                return try body(reader, masterKey)
            }
        }
    }

    /// Runs `body` in a write transaction after checking the master key.
    func writing<T>(_ body: (any SecureStorageBackendWriter, MasterKey) throws -> T) throws(SecureStorageError) -> T {
        try retryingAfterRotation { masterKey in
            try backend.write { writer in
                try Self.verify(masterKey, against: writer.keyCheckValue())
                return try body(writer, masterKey)
            }
        }
    }

    /// Runs `attempt` with the current master key; if the board refused it because this store rotated the key
    /// meanwhile, runs it once more with the new key.
    private func retryingAfterRotation<T>(_ attempt: (MasterKey) throws -> T) throws(SecureStorageError) -> T {
        let key = currentKey.withLock { $0 }
        do {
            return try Self.mappingErrors { try attempt(key) }
        } catch  where error.code == .wrongMasterKey {
            let latest = currentKey.withLock { $0 }
            guard latest != key else { throw error }
            return try Self.mappingErrors { try attempt(latest) }
        }
    }

    /// Passes ``SecureStorageError``s through and gives the backend's errors a secure-storage code, keeping their
    /// message (``SecureStorageBackendFailure``: the board's errors already name the thing and say what to do). Vault errors cannot contain a
    /// secret: the backend never sees one.
    private static func mappingErrors<T>(_ body: () throws -> T) throws(SecureStorageError) -> T {
        do {
            return try body()
        } catch let error as SecureStorageError {
            throw error
        } catch let error as any SecureStorageBackendFailure {
            throw error.secureStorageError
        } catch {
            throw SecureStorageError(.unavailable, "the secure storage could not use its backend: \(error)")
        }
    }

    private static func verify(_ masterKey: MasterKey, against stored: Data?) throws(SecureStorageError) {
        guard let stored else {
            throw SecureStorageError(
                .notInitialized,
                "the board's secure storage has no master key yet; initialise it with plugboard keys init"
            )
        }
        guard masterKey.matches(keyCheckValue: stored) else {
            let expected =
                MasterKey.identifier(ofKeyCheckValue: stored).map { "the key with id \($0)" }
                ?? "another key"
            throw SecureStorageError(
                .wrongMasterKey,
                "this master key (id \(masterKey.identifier)) does not belong to this board, which expects \(expected), so nothing was read or written; use the board's own key (PLUGBOARD_MASTER_KEY or the key file beside the board), and after a rotation the new one"
            )
        }
    }
}
