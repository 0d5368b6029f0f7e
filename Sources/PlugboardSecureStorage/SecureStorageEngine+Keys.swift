import Foundation
package import PlugboardPluginAPI
import Synchronization

// Data keys and the master key: rotation, re-encryption, shredding, and sealing with the active data key.
extension SecureStorageEngine {
    // MARK: Keys

    /// The data keys of `pluginID`, in ascending version order (wrapped; for listing and auditing).
    package func dataKeys(pluginID: String) throws(SecureStorageError) -> [DataKeyRecord] {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try reading { reader, _ in
            try reader.dataKeys(pluginID: pluginID)
        }
    }

    /// Rotates the master key: rewraps every data key that is not shredded under `newKey` and stores `newKey`'s
    /// key check value, in one transaction; values are not touched. Returns how many data keys were rewrapped.
    ///
    /// From then on the store uses `newKey`, and the old key is refused by the board. Store `newKey` where the
    /// key provider will find it before the next start (see ``KeyFileProvider/replace(at:with:)`` for a safe
    /// order).
    ///
    /// - Throws: `SecureStorageError` (`integrityFailure` if a wrapped key does not open);
    ///   nothing was changed.
    @discardableResult
    package func rotateMasterKey(to newKey: MasterKey) throws(SecureStorageError) -> Int {
        let count = try writing { writer, oldKey in
            var count = 0
            for var record in try writer.allDataKeys() where record.state != .shredded {
                guard let wrapped = record.wrappedKey else {
                    throw SecureStorageError(
                        .integrityFailure,
                        "data key version \(record.version) of plug-in \(record.pluginID) is \(record.state) but has no wrapped key: the board was damaged; nothing was changed"
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
    package func rotateDataKey(pluginID: String, reencrypt: Bool = false) throws(SecureStorageError)
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
    package func reencryptValues(pluginID: String) throws(SecureStorageError) -> Reencryption {
        let pluginID = try SecureStorageLimits.validatedNamespace(pluginID)
        return try writing { writer, masterKey in
            try reencrypt(pluginID: pluginID, writer: writer, masterKey: masterKey, sealing: nil)
        }
    }

    /// Destroys every data key of `pluginID`: the wrapped keys are erased and the keys marked shredded. The
    /// plug-in's values stay in the backend but can no longer be opened; reading one throws
    /// `SecureStorageError.Code.keysShredded`. A later write starts a new data key version.
    ///
    /// Copies of the wrapped keys may survive in database free pages, the WAL or backups, and would still open
    /// under the current master key. For shredding that also covers those, the board should run with
    /// `PRAGMA secure_delete` and checkpoint its WAL, and the master key should be rotated afterwards with the old
    /// one destroyed.
    @discardableResult
    package func shredDataKeys(pluginID: String) throws(SecureStorageError) -> Shredding {
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

    /// `SecureStorageEngine(master key: <id>)`.
    package var description: String { "SecureStorageEngine(master key: \(masterKeyIdentifier))" }
    /// A mirror that shows the master key's identifier only.
    package var customMirror: Mirror {
        Mirror(self, children: ["masterKeyIdentifier": masterKeyIdentifier], displayStyle: .class)
    }

    // MARK: Data keys

    /// The active data key and its unwrapped form, within one write transaction.
    struct SealingKey {
        var record: DataKeyRecord
        let dataKey: DataKey
    }

    /// Seals `value`, saves it, and counts the encryption on the data key; makes or rotates the active data key
    /// first when needed.
    func seal(
        _ value: Data, forKey key: String, pluginID: String, writer: any SecureStorageBackendWriter, masterKey: MasterKey,
        using sealing: inout SealingKey?
    ) throws {
        if sealing == nil || sealing!.record.encryptionCount >= configuration.dataKeyRotationThreshold {
            sealing = try usableActiveKey(pluginID: pluginID, writer: writer, masterKey: masterKey)
        }
        let sealed = Envelope.seal(value, forKey: key, with: sealing!.dataKey)
        sealing!.record.encryptionCount += 1
        try writer.updateEncryptionCount(sealing!.record)
        try writer.saveSealedValue(
            SealedValueRecord(
                pluginID: pluginID, key: key, dataKeyVersion: sealing!.record.version, sealedBox: sealed,
                updatedAt: configuration.now()))
    }

    /// The active data key if it may seal one more value, else a new one.
    func usableActiveKey(
        pluginID: String, writer: any SecureStorageBackendWriter, masterKey: MasterKey
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
    func createDataKey(
        pluginID: String, existing records: [DataKeyRecord], writer: any SecureStorageBackendWriter, masterKey: MasterKey
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
    func openingKey(
        pluginID: String, version: Int, forKey key: String, reader: any SecureStorageBackendReader, masterKey: MasterKey
    ) throws -> DataKey {
        guard version >= 1, let record = try reader.dataKey(pluginID: pluginID, version: version) else {
            throw SecureStorageError(
                .integrityFailure,
                "the value for key '\(key)' of plug-in \(pluginID) refers to data key version \(version), which does not exist (the board was altered); remove the value or set it again"
            )
        }
        guard record.state != .shredded, let wrapped = record.wrappedKey else {
            throw SecureStorageError(
                .keysShredded,
                "the value for key '\(key)' of plug-in \(pluginID) can no longer be decrypted because its data key (version \(version)) was shredded; remove the value or set it again"
            )
        }
        return try Envelope.unwrap(wrapped, pluginID: pluginID, version: version, under: masterKey)
    }

    func reencrypt(
        pluginID: String, writer: any SecureStorageBackendWriter, masterKey: MasterKey, sealing initial: SealingKey?
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
