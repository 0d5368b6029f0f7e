import Foundation
import PlugboardPluginAPI
import Synchronization

/// The secrets engine: envelope encryption of plug-in values over a ``SecretVault``.
///
/// The engine holds the master key in memory and keeps everything else in the vault: the key check value, every
/// plug-in's data keys wrapped by the master key, and the sealed values. Each public method is one vault
/// transaction, and each transaction first checks the board's key check value against the master key, so a wrong
/// master key is refused (`SecureStorageError.Code.wrongMasterKey`) before anything is read
/// or written.
///
/// A plug-in never talks to the engine: the host hands it ``storage(forPlugin:)``, a
/// `SecureStorage` bound to the plug-in's namespace. The admin operations (rotation,
/// re-encryption, shredding) are for the host and the `plugboard` CLI.
///
/// ```swift
/// let vault = InMemorySecretVault()            // the board in production
/// let engine = try SecretsEngine.initialize(vault: vault, masterKey: .generate())
/// let storage = try engine.storage(forPlugin: "com.example.calendar")
/// try await storage.set(Data("t0k3n".utf8), forKey: "oauth-token")
/// ```
///
/// ## Keys and rotation
///
/// Each plug-in has its own data keys (DEKs), numbered from 1; at most one is active and seals new values, the
/// retired ones still open the values sealed with them. The engine counts the values each data key sealed and
/// rotates to a new version before the count reaches ``Configuration/dataKeyRotationThreshold`` (2^30 by
/// default), far below the 2^32 limit of AES-GCM with random nonces.
///
/// - ``rotateMasterKey(to:)`` rewraps every data key under a new master key, without touching values.
/// - ``rotateDataKey(pluginID:reencrypt:)`` starts a new data key version for a plug-in.
/// - ``reencryptValues(pluginID:)`` moves a plug-in's values to its newest data key.
/// - ``shredDataKeys(pluginID:)`` destroys a plug-in's data keys: its values can no longer be opened.
public final class SecretsEngine: Sendable, CustomStringConvertible, CustomReflectable {
    /// Settings of an engine.
    public struct Configuration: Sendable {
        /// The default rotation threshold: 2^30 encryptions per data key.
        public static let defaultDataKeyRotationThreshold = 1 << 30
        /// The largest rotation threshold allowed: 2^32, the NIST limit for AES-GCM with random 96-bit nonces.
        public static let maximumDataKeyRotationThreshold = 1 << 32

        /// How many values one data key may seal. Before sealing value number `threshold + 1`, the engine
        /// rotates to a new data key. Between 1 and ``maximumDataKeyRotationThreshold``.
        public var dataKeyRotationThreshold: Int
        /// The clock that stamps records.
        public var now: @Sendable () -> Date

        /// Creates a configuration.
        public init(
            dataKeyRotationThreshold: Int = Configuration.defaultDataKeyRotationThreshold,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.dataKeyRotationThreshold = dataKeyRotationThreshold
            self.now = now
        }
    }

    /// The result of ``rotateDataKey(pluginID:reencrypt:)``.
    public struct DataKeyRotation: Sendable, Hashable {
        /// The plug-in.
        public var pluginID: String
        /// The version that was active before, if there was one.
        public var previousVersion: Int?
        /// The new active version.
        public var newVersion: Int
        /// What re-encryption did, if it was asked for.
        public var reencryption: Reencryption?
    }

    /// The result of ``reencryptValues(pluginID:)``.
    public struct Reencryption: Sendable, Hashable {
        /// The plug-in.
        public var pluginID: String
        /// How many values were opened and sealed again with the newest data key.
        public var reencryptedValueCount: Int
        /// Keys whose value could not be moved because its data key was shredded, sorted.
        public var unreadableKeys: [String]
    }

    /// The result of ``shredDataKeys(pluginID:)``.
    public struct Shredding: Sendable, Hashable {
        /// The plug-in.
        public var pluginID: String
        /// The data key versions that were destroyed by this call.
        public var shreddedVersions: [Int]
        /// How many stored values can no longer be opened.
        public var unreadableValueCount: Int
    }

    /// Where records are kept.
    public let vault: any SecretVault
    /// The engine's settings.
    public let configuration: Configuration
    private let currentKey: Mutex<MasterKey>

    // MARK: Opening

    /// Opens the secure storage of a board whose storage was initialised with `masterKey`.
    ///
    /// - Throws: `SecureStorageError` with code `wrongMasterKey` if the board belongs to
    ///   another master key, `notInitialized` if the board has no key check value, `unavailable` if the vault
    ///   failed.
    /// - Precondition: `configuration.dataKeyRotationThreshold` is between 1 and
    ///   ``Configuration/maximumDataKeyRotationThreshold``.
    public init(
        vault: any SecretVault, masterKey: MasterKey, configuration: Configuration = Configuration()
    ) throws(SecureStorageError) {
        precondition(
            (1...Configuration.maximumDataKeyRotationThreshold).contains(configuration.dataKeyRotationThreshold),
            "dataKeyRotationThreshold must be between 1 and 2^32"
        )
        self.vault = vault
        self.configuration = configuration
        self.currentKey = Mutex(masterKey)
        try verifyMasterKey()
    }

    /// Opens the secure storage of a board with the key that `keyProvider` returns.
    ///
    /// - Throws: the provider's error (``KeyProviderError`` for Plugboard's providers), or the errors of
    ///   ``init(vault:masterKey:configuration:)``.
    public static func open(
        vault: any SecretVault, keyProvider: any KeyProvider, configuration: Configuration = Configuration()
    ) async throws -> SecretsEngine {
        let key = try await keyProvider.masterKey()
        return try SecretsEngine(vault: vault, masterKey: key, configuration: configuration)
    }

    /// Initialises a board's secure storage with `masterKey`, by storing its key check value, and opens it.
    ///
    /// Called by `plugboard init`. Calling it again with the same key just opens the storage.
    ///
    /// - Throws: `SecureStorageError` with code `wrongMasterKey` if the board was
    ///   initialised with another key; `integrityFailure` if the board has data keys but no key check value
    ///   (a damaged or partly restored board), which is never overwritten; `unavailable` if the vault failed.
    public static func initialize(
        vault: any SecretVault, masterKey: MasterKey, configuration: Configuration = Configuration()
    ) throws(SecureStorageError) -> SecretsEngine {
        try mappingErrors {
            try vault.write { writer in
                if let stored = try writer.keyCheckValue() {
                    try verify(masterKey, against: stored)
                    return
                }
                let existing = try writer.allDataKeys()
                guard existing.isEmpty else {
                    throw SecureStorageError(
                        .integrityFailure,
                        "The board holds \(existing.count) data keys but no master key check value; it was damaged "
                            + "or partly restored. Restore it from a complete backup; it was not changed."
                    )
                }
                try writer.setKeyCheckValue(masterKey.keyCheckValue)
            }
        }
        return try SecretsEngine(vault: vault, masterKey: masterKey, configuration: configuration)
    }

    /// The ``MasterKey/identifier`` of the master key in use.
    public var masterKeyIdentifier: String {
        currentKey.withLock { $0.identifier }
    }

    /// The master key in use, for ``BoardSecrets`` to open engines that join its transactions.
    var masterKey: MasterKey {
        currentKey.withLock { $0 }
    }

    /// Makes `key` the master key in use, once a rotation made by another engine over the same board committed.
    func adoptMasterKey(_ key: MasterKey) {
        currentKey.withLock { $0 = key }
    }

    /// Checks that the engine's master key is the board's.
    ///
    /// - Throws: `SecureStorageError` with code `wrongMasterKey` or `notInitialized`.
    public func verifyMasterKey() throws(SecureStorageError) {
        try reading { _, _ in }
    }

    /// Returns the secure storage of one plug-in: a `SecureStorage` bound to `pluginID`,
    /// to hand to that plug-in.
    ///
    /// - Throws: `SecureStorageError` with code `invalidNamespace`.
    public func storage(forPlugin pluginID: String) throws(SecureStorageError) -> EnvelopeSecureStorage {
        EnvelopeSecureStorage(engine: self, pluginID: try SecureStorageLimits.validatedNamespace(pluginID))
    }

    // MARK: Values

    /// Seals `value` and stores it under `key` for `pluginID`, rotating the plug-in's data key first if it
    /// reached the rotation threshold.
    ///
    /// - Throws: `SecureStorageError`; nothing was changed.
    public func setValue(_ value: Data, forKey key: String, pluginID: String) throws(SecureStorageError) {
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
    public func value(forKey key: String, pluginID: String) throws(SecureStorageError) -> Data? {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        let key = try SecureStorageLimits.validatedKeyName(key)
        return try reading { reader, masterKey in
            guard let record = try reader.sealedValue(pluginID: pluginID, key: key) else { return nil }
            let dataKey = try openingKey(
                pluginID: pluginID, version: record.dataKeyVersion, forKey: key, reader: reader,
                masterKey: masterKey)
            return try Envelope.open(record.sealedBox, forKey: key, with: dataKey)
        }
    }

    /// Removes the value stored under `key` for `pluginID`, and tells whether there was one.
    @discardableResult
    public func removeValue(forKey key: String, pluginID: String) throws(SecureStorageError) -> Bool {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        let key = try SecureStorageLimits.validatedKeyName(key)
        return try writing { writer, _ in
            try writer.deleteSealedValue(pluginID: pluginID, key: key)
        }
    }

    /// The keys of `pluginID` that have a value, sorted by UTF-8 bytes.
    public func keys(pluginID: String) throws(SecureStorageError) -> [String] {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try reading { reader, _ in
            try reader.valueKeys(pluginID: pluginID).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }

    /// Removes every value of `pluginID`, and returns how many there were. Data keys are kept.
    @discardableResult
    public func removeAllValues(pluginID: String) throws(SecureStorageError) -> Int {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try writing { writer, _ in
            try writer.deleteSealedValues(pluginID: pluginID)
        }
    }

    // MARK: Keys

    /// The data keys of `pluginID`, in ascending version order (wrapped; for listing and auditing).
    public func dataKeys(pluginID: String) throws(SecureStorageError) -> [DataKeyRecord] {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try reading { reader, _ in
            try reader.dataKeys(pluginID: pluginID)
        }
    }

    /// Rotates the master key: rewraps every data key that is not shredded under `newKey` and stores `newKey`'s
    /// key check value, in one transaction; values are not touched. Returns how many data keys were rewrapped.
    ///
    /// From then on the engine uses `newKey`, and the old key is refused by the board. Store `newKey` where the
    /// key provider will find it before the next start (see ``KeyFileProvider/replace(at:with:)`` for a safe
    /// order).
    ///
    /// - Throws: `SecureStorageError` (`integrityFailure` if a wrapped key does not open);
    ///   nothing was changed.
    @discardableResult
    public func rotateMasterKey(to newKey: MasterKey) throws(SecureStorageError) -> Int {
        let count = try writing { writer, oldKey in
            var count = 0
            for var record in try writer.allDataKeys() where record.state != .shredded {
                guard let wrapped = record.wrappedKey else {
                    throw SecureStorageError(
                        .integrityFailure,
                        "Data key version \(record.version) of plug-in '\(record.pluginID)' is \(record.state) "
                            + "but has no wrapped key; the board was damaged. Nothing was changed."
                    )
                }
                let dataKey = try Envelope.unwrap(
                    wrapped, pluginID: record.pluginID, version: record.version, under: oldKey)
                record.wrappedKey = Envelope.wrap(dataKey, under: newKey)
                try writer.updateDataKey(record)
                count += 1
            }
            try writer.setKeyCheckValue(newKey.keyCheckValue)
            return count
        }
        // Only once the transaction committed: until then the board still needs the old key.
        currentKey.withLock { $0 = newKey }
        return count
    }

    /// Starts a new data key version for `pluginID`: the active key is retired (it still opens the values it
    /// sealed) and new values are sealed with the new one. With `reencrypt`, the plug-in's values are also moved
    /// to the new key in the same transaction (see ``reencryptValues(pluginID:)``).
    ///
    /// - Throws: `SecureStorageError`; nothing was changed.
    @discardableResult
    public func rotateDataKey(pluginID: String, reencrypt: Bool = false) throws(SecureStorageError)
        -> DataKeyRotation
    {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try writing { writer, masterKey in
            let records = try writer.dataKeys(pluginID: pluginID)
            let previous = records.last { $0.state == .active }?.version
            let created = try createDataKey(pluginID: pluginID, existing: records, writer: writer, masterKey: masterKey)
            var rotation = DataKeyRotation(
                pluginID: pluginID, previousVersion: previous, newVersion: created.record.version)
            if reencrypt {
                rotation.reencryption = try self.reencrypt(
                    pluginID: pluginID, writer: writer, masterKey: masterKey, sealing: created)
            }
            return rotation
        }
    }

    /// Opens every value of `pluginID` sealed with an older data key than the active one and seals it again with
    /// the active key, in one transaction. Afterwards the retired keys open nothing (unless values sealed with a
    /// shredded key remain; they are listed in ``Reencryption/unreadableKeys``).
    ///
    /// - Throws: `SecureStorageError` with code `integrityFailure` if a value does not open;
    ///   nothing was changed.
    @discardableResult
    public func reencryptValues(pluginID: String) throws(SecureStorageError) -> Reencryption {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try writing { writer, masterKey in
            try reencrypt(pluginID: pluginID, writer: writer, masterKey: masterKey, sealing: nil)
        }
    }

    /// Destroys every data key of `pluginID`: the wrapped keys are erased and the keys marked shredded. The
    /// plug-in's values stay in the vault but can no longer be opened; reading one throws
    /// `SecureStorageError.Code.keysShredded`. A later write starts a new data key version.
    ///
    /// Copies of the wrapped keys may survive in database free pages, the WAL or backups, and would still open
    /// under the current master key. For shredding that also covers those, the board should run with
    /// `PRAGMA secure_delete` and checkpoint its WAL, and the master key should be rotated afterwards with the old
    /// one destroyed.
    @discardableResult
    public func shredDataKeys(pluginID: String) throws(SecureStorageError) -> Shredding {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try writing { writer, _ in
            let now = configuration.now()
            var shredded: [Int] = []
            for var record in try writer.dataKeys(pluginID: pluginID) where record.state != .shredded {
                record.state = .shredded
                record.wrappedKey = nil
                record.retiredAt = record.retiredAt ?? now
                try writer.updateDataKey(record)
                shredded.append(record.version)
            }
            let unreadable = try writer.valueKeys(pluginID: pluginID).count
            return Shredding(pluginID: pluginID, shreddedVersions: shredded, unreadableValueCount: unreadable)
        }
    }

    /// `SecretsEngine(master key: <id>)`.
    public var description: String { "SecretsEngine(master key: \(masterKeyIdentifier))" }
    /// A mirror that shows the master key's identifier only.
    public var customMirror: Mirror {
        Mirror(self, children: ["masterKeyIdentifier": masterKeyIdentifier], displayStyle: .class)
    }

    // MARK: Transactions

    /// Runs `body` in a read transaction after checking the master key.
    private func reading<T>(_ body: (any SecretVaultReader, MasterKey) throws -> T) throws(SecureStorageError) -> T {
        try retryingAfterRotation { masterKey in
            try vault.read { reader in
                try Self.verify(masterKey, against: reader.keyCheckValue())
                return try body(reader, masterKey)
            }
        }
    }

    /// Runs `body` in a write transaction after checking the master key.
    private func writing<T>(_ body: (any SecretVaultWriter, MasterKey) throws -> T) throws(SecureStorageError) -> T {
        try retryingAfterRotation { masterKey in
            try vault.write { writer in
                try Self.verify(masterKey, against: writer.keyCheckValue())
                return try body(writer, masterKey)
            }
        }
    }

    /// Runs `attempt` with the current master key; if the board refused it because this engine rotated the key
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

    /// Passes ``SecureStorageError``s through and turns any other error (the vault's) into `unavailable`.
    /// Vault errors cannot contain a secret: the vault never sees one.
    private static func mappingErrors<T>(_ body: () throws -> T) throws(SecureStorageError) -> T {
        do {
            return try body()
        } catch let error as SecureStorageError {
            throw error
        } catch {
            throw SecureStorageError(.unavailable, "The secure storage could not use the board: \(error)")
        }
    }

    private static func verify(_ masterKey: MasterKey, against stored: Data?) throws(SecureStorageError) {
        guard let stored else {
            throw SecureStorageError(
                .notInitialized,
                "The board's secure storage has no master key yet; initialise the board with `plugboard init`."
            )
        }
        guard masterKey.matches(keyCheckValue: stored) else {
            let expected =
                MasterKey.identifier(ofKeyCheckValue: stored).map { "the key with id \($0)" }
                ?? "another key"
            throw SecureStorageError(
                .wrongMasterKey,
                "This master key (id \(masterKey.identifier)) does not belong to this board, which expects "
                    + "\(expected); nothing was read or written. Use the board's own key (PLUGBOARD_MASTER_KEY or "
                    + "the key file beside the board); if the master key was just rotated, load the new one."
            )
        }
    }

    // MARK: Data keys

    /// The active data key and its unwrapped form, within one write transaction.
    private struct SealingKey {
        var record: DataKeyRecord
        let dataKey: DataKey
    }

    /// Seals `value`, saves it, and counts the encryption on the data key; makes or rotates the active data key
    /// first when needed.
    private func seal(
        _ value: Data, forKey key: String, pluginID: String, writer: any SecretVaultWriter, masterKey: MasterKey,
        using sealing: inout SealingKey?
    ) throws {
        if sealing == nil || sealing!.record.encryptionCount >= configuration.dataKeyRotationThreshold {
            sealing = try usableActiveKey(pluginID: pluginID, writer: writer, masterKey: masterKey)
        }
        let sealed = Envelope.seal(value, forKey: key, with: sealing!.dataKey)
        sealing!.record.encryptionCount += 1
        try writer.updateDataKey(sealing!.record)
        try writer.saveSealedValue(
            SealedValueRecord(
                pluginID: pluginID, key: key, dataKeyVersion: sealing!.record.version, sealedBox: sealed,
                updatedAt: configuration.now()))
    }

    /// The active data key if it may seal one more value, else a new one.
    private func usableActiveKey(
        pluginID: String, writer: any SecretVaultWriter, masterKey: MasterKey
    ) throws -> SealingKey {
        let records = try writer.dataKeys(pluginID: pluginID)
        if let active = records.last(where: { $0.state == .active }),
            active.encryptionCount < configuration.dataKeyRotationThreshold,
            let wrapped = active.wrappedKey
        {
            let dataKey = try Envelope.unwrap(wrapped, pluginID: pluginID, version: active.version, under: masterKey)
            return SealingKey(record: active, dataKey: dataKey)
        }
        return try createDataKey(pluginID: pluginID, existing: records, writer: writer, masterKey: masterKey)
    }

    /// Retires the active data key, if any, and creates the next version.
    private func createDataKey(
        pluginID: String, existing records: [DataKeyRecord], writer: any SecretVaultWriter, masterKey: MasterKey
    ) throws -> SealingKey {
        let now = configuration.now()
        for var record in records where record.state == .active {
            record.state = .retired
            record.retiredAt = now
            try writer.updateDataKey(record)
        }
        let version = (records.map(\.version).max() ?? 0) + 1
        let dataKey = DataKey.generate(pluginID: pluginID, version: version)
        let record = DataKeyRecord(
            pluginID: pluginID, version: version, state: .active,
            wrappedKey: Envelope.wrap(dataKey, under: masterKey), encryptionCount: 0, createdAt: now)
        try writer.insertDataKey(record)
        return SealingKey(record: record, dataKey: dataKey)
    }

    /// The unwrapped data key that opens a value of `key` sealed with `version`.
    private func openingKey(
        pluginID: String, version: Int, forKey key: String, reader: any SecretVaultReader, masterKey: MasterKey
    ) throws -> DataKey {
        guard version >= 1, let record = try reader.dataKey(pluginID: pluginID, version: version) else {
            throw SecureStorageError(
                .integrityFailure,
                "The value for key '\(key)' of plug-in '\(pluginID)' refers to data key version \(version), which "
                    + "does not exist; the board was altered. Remove the value or set it again."
            )
        }
        guard record.state != .shredded, let wrapped = record.wrappedKey else {
            throw SecureStorageError(
                .keysShredded,
                "The value for key '\(key)' of plug-in '\(pluginID)' can no longer be decrypted: its data key "
                    + "(version \(version)) was shredded. Remove the value or set it again."
            )
        }
        return try Envelope.unwrap(wrapped, pluginID: pluginID, version: version, under: masterKey)
    }

    private func reencrypt(
        pluginID: String, writer: any SecretVaultWriter, masterKey: MasterKey, sealing initial: SealingKey?
    ) throws -> Reencryption {
        var sealing = try initial ?? usableActiveKey(pluginID: pluginID, writer: writer, masterKey: masterKey)
        let target = sealing.record.version
        var openers: [Int: DataKey] = [:]
        var moved = 0
        var unreadable: [String] = []
        let values = try writer.sealedValues(pluginID: pluginID)
            .filter { $0.dataKeyVersion < target }
            .sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for record in values {
            let opener: DataKey
            if let cached = openers[record.dataKeyVersion] {
                opener = cached
            } else {
                do {
                    opener = try openingKey(
                        pluginID: pluginID, version: record.dataKeyVersion, forKey: record.key, reader: writer,
                        masterKey: masterKey)
                } catch let error as SecureStorageError where error.code == .keysShredded {
                    unreadable.append(record.key)
                    continue
                }
                openers[record.dataKeyVersion] = opener
            }
            var plaintext = try Envelope.open(record.sealedBox, forKey: record.key, with: opener)
            defer { plaintext.resetBytes(in: 0..<plaintext.count) }
            var optional: SealingKey? = sealing
            try seal(
                plaintext, forKey: record.key, pluginID: pluginID, writer: writer, masterKey: masterKey,
                using: &optional)
            sealing = optional!
            moved += 1
        }
        return Reencryption(pluginID: pluginID, reencryptedValueCount: moved, unreadableKeys: unreadable)
    }
}

/// The `SecureStorage` of one plug-in, backed by a ``SecretsEngine``.
///
/// The namespace is bound when the host creates it with ``SecretsEngine/storage(forPlugin:)``; the plug-in has no
/// way to name another. Each call is one short synchronous transaction on the board.
public struct EnvelopeSecureStorage: SecureStorage, CustomStringConvertible, CustomReflectable {
    /// The plug-in whose namespace this storage reaches.
    public let pluginID: String
    private let engine: SecretsEngine

    init(engine: SecretsEngine, pluginID: String) {
        self.engine = engine
        self.pluginID = pluginID
    }

    /// Seals and stores `value` under `key`.
    public func set(_ value: Data, forKey key: String) async throws {
        try engine.setValue(value, forKey: key, pluginID: pluginID)
    }

    /// Opens and returns the value stored under `key`, or `nil`.
    public func data(forKey key: String) async throws -> Data? {
        try engine.value(forKey: key, pluginID: pluginID)
    }

    /// Removes the value stored under `key`, if any.
    public func removeValue(forKey key: String) async throws {
        try engine.removeValue(forKey: key, pluginID: pluginID)
    }

    /// The keys that have a value, sorted by UTF-8 bytes.
    public func keys() async throws -> [String] {
        try engine.keys(pluginID: pluginID)
    }

    /// `EnvelopeSecureStorage(plugin: …)`.
    public var description: String { "EnvelopeSecureStorage(plugin: \(pluginID))" }
    /// A mirror that shows the plug-in only.
    public var customMirror: Mirror { Mirror(self, children: ["pluginID": pluginID], displayStyle: .struct) }
}
