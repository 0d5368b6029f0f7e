import Foundation
package import PlugboardModel
import PlugboardPluginAPI
package import PlugboardSecureStorage
import PlugboardStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The audited operations on keys: master-key rotation (in the board and in its key file), data-key rotation, shredding.
extension BoardSecureStorage {
    /// Rotates the master key to `newKey`: every data key is rewrapped, values are untouched, the key check value
    /// is replaced, and a `keys.rotate_master` audit row (old and new key ids) is appended, in one transaction.
    /// Needs an admin.
    ///
    /// Storing `newKey` where the key provider finds it is the caller's job; store it **before** calling, so that
    /// no crash leaves the board needing a key that exists nowhere. ``rotateMasterKeyFile(to:by:)`` does the
    /// whole procedure for a key file.
    package func rotateMasterKey(to newKey: MasterKey, by actor: Principal) throws(BoardError) -> ChangeResult {
        let boardID = try board.info("board_id")
        let refusal = AuditEntry(action: .keysRotateMaster, targetType: "board", targetID: boardID)
        let result: ChangeResult = try change(actor, refusal: refusal, requiring: .admin(doing: "rotate the master key")) {
            change, secrets, _ in
            let oldID = secrets.masterKeyIdentifier
            guard newKey != secrets.masterKey else {
                throw BoardError(.invalidInput, "the new master key is the board's current key (id \(oldID)); rotate to a new random key")
            }
            let oldKey = secrets.masterKey
            let count = try secrets.rotateMasterKey(to: newKey)
            let resealed = try change.resealWebhookSecrets { sealed, label in
                try Self.resealWebhookValue(sealed, label: label, from: oldKey, to: newKey)
            }
            var after: [String: AuditJSON] = ["key_id": .string(newKey.identifier), "rewrapped_data_keys": .int(count)]
            if resealed > 0 { after["resealed_webhook_secrets"] = .int(resealed) }
            try change.record(
                AuditEntry(
                    action: .keysRotateMaster, targetType: "board", targetID: boardID,
                    before: .object(["key_id": .string(oldID)]), after: .object(after)))
            return ChangeResult(
                changed: true,
                "Rotated the master key from id \(oldID) to id \(newKey.identifier): rewrapped \(count) data key(s); no value was re-encrypted."
            )
        }
        store.adoptMasterKey(newKey)
        return withCheckpointNote(result, about: "the data keys wrapped under the old master key")
    }

    /// Rotates the master key kept in the key file `<board>.key`, in the order that no crash can break:
    ///
    /// 1. `newKey` is written to `<board>.key.next` (mode 0600, never overwriting);
    /// 2. the board is rotated to it in one transaction (``rotateMasterKey(to:by:)``);
    /// 3. `<board>.key.next` is renamed over `<board>.key` and the directory synced.
    ///
    /// A crash between 2 and 3 leaves the board's key in `<board>.key.next`; opening the board then says so.
    ///
    /// - Throws: ``BoardError`` with code `masterKey` when the key does not come from a key file (an environment
    ///   variable cannot be rewritten by Plugboard), `conflict` when `<board>.key.next` exists (a rotation was
    ///   interrupted before its transaction: remove it), or any error of ``rotateMasterKey(to:by:)``. After
    ///   step 1 fails or step 2 fails, `<board>.key.next` is removed and nothing changed.
    package func rotateMasterKeyFile(to newKey: MasterKey = .generate(), by actor: Principal) throws(BoardError) -> ChangeResult {
        guard case .keyFile(let path) = keySource else {
            throw BoardError(
                .masterKey,
                "the master key comes from \(keySource), not from a key file, so plugboard cannot store the new key; give the new key to \(keySource) yourself and rotate to it (plugboard keys rotate --new-key-env VAR)"
            )
        }
        let next = Self.nextKeyFilePath(path)
        if access(next, F_OK) == 0 {
            throw BoardError(
                .conflict,
                "\(next) exists, left by an interrupted master-key rotation, and this board does not use it (its key is \(path)); remove \(next) and rotate again"
            )
        }
        do {
            try KeyFileProvider.write(newKey, to: next)
        } catch {
            throw BoardError(.masterKey, error.message)
        }
        let result: ChangeResult
        do {
            result = try rotateMasterKey(to: newKey, by: actor)
        } catch {
            unlink(next)
            throw error
        }
        do {
            try KeyFileProvider.move(next, to: path)
        } catch {
            throw BoardError(
                .masterKey,
                "the board now uses the new master key (id \(newKey.identifier)), which is in \(next), but it could not be moved over \(path) (\(error.message)); run mv \(next) \(path) now"
            )
        }
        return result
    }

    /// Starts a new data key version for `pluginID` (the old one is retired and still opens the values it sealed);
    /// with `reencrypt`, also moves the plug-in's values to the new key. One transaction with a
    /// `keys.rotate_data_key` audit row. Needs an owner or maintainer of the plug-in, or an admin.
    package func rotateDataKey(pluginID: String, reencrypt: Bool = false, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        return try changePlugin(pluginID, action: .keysRotateDataKey, doing: "rotate the data key of", by: actor) {
            change, secrets, backend in
            let rotation = try secrets.rotateDataKey(pluginID: pluginID, reencrypt: reencrypt)
            var after: [String: AuditJSON] = ["active_version": .int(rotation.newVersion)]
            var message = "Rotated the data key of \(pluginID): version \(rotation.newVersion) seals new values"
            if let previous = rotation.previousVersion {
                message += "; version \(previous) is retired and still opens the values it sealed"
            }
            var notes: [String] = []
            if let moved = rotation.reencryption {
                after["reencrypted_values"] = .int(moved.reencryptedValueCount)
                after["unreadable_keys"] = .array(moved.unreadableKeys.map(AuditJSON.string))
                message += "; re-encrypted \(moved.reencryptedValueCount) value(s) with the new version"
                if !moved.unreadableKeys.isEmpty {
                    notes.append(
                        "\(moved.unreadableKeys.count) secret(s) could not be re-encrypted because their data key was shredded: \(moved.unreadableKeys.map { "'\($0)'" }.joined(separator: ", ")); delete them or set them again."
                    )
                }
            }
            try change.record(
                AuditEntry(
                    action: .keysRotateDataKey, targetType: "plugin", targetID: pluginID,
                    before: .object(["active_version": rotation.previousVersion.map(AuditJSON.int) ?? .null]),
                    after: .object(after)))
            return ChangeResult(changed: true, message + ".", notes: notes)
        }
    }

    /// Destroys every data key of `pluginID`: its secrets stay listed but can no longer be decrypted. One
    /// transaction with a `keys.shred` audit row (versions and counts, with `reason`), then a WAL checkpoint so
    /// that the erased wrapped keys do not linger in the WAL. Shredding a plug-in with no live data key changes
    /// nothing. Needs an owner or maintainer of the plug-in, or an admin.
    ///
    /// Copies of the board made before (backups, replicas) still hold the wrapped keys, and open with the master
    /// key; rotate the master key afterwards to make those copies useless with the new key.
    package func shredDataKeys(pluginID: String, reason: String? = nil, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        if let reason { try Validate.reason(reason) }
        let result: ChangeResult = try changePlugin(
            pluginID, action: .keysShred, doing: "shred the data keys of", reason: reason, by: actor
        ) { change, secrets, backend in
            let shredding = try secrets.shredDataKeys(pluginID: pluginID)
            guard !shredding.shreddedVersions.isEmpty else {
                return ChangeResult(changed: false, "\(pluginID) has no data key left to shred; nothing changed.")
            }
            try change.record(
                AuditEntry(
                    action: .keysShred, targetType: "plugin", targetID: pluginID, reason: reason,
                    before: .object(["live_versions": .array(shredding.shreddedVersions.map(AuditJSON.int))]),
                    after: .object([
                        "live_versions": .array([]), "shredded_versions": .array(shredding.shreddedVersions.map(AuditJSON.int)),
                        "unreadable_values": .int(shredding.unreadableValueCount),
                    ])))
            let versions = shredding.shreddedVersions.map(String.init).joined(separator: ", ")
            return ChangeResult(
                changed: true,
                "Shredded data key version(s) \(versions) of \(pluginID): its \(shredding.unreadableValueCount) stored secret(s) can no longer be decrypted.",
                notes: [
                    "Backups and replicas of the board made before now still hold the old wrapped keys; rotate the master key (plugboard keys rotate) to make them useless with the new key."
                ])
        }
        return result.changed ? withCheckpointNote(result, about: "the shredded wrapped keys") : result
    }
}
