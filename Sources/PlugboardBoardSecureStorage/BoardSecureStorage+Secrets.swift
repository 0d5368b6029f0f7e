public import Foundation
public import PlugboardModel
import PlugboardPluginAPI
import PlugboardSecureStorage
import PlugboardStore

// The audited operations on secrets: set, read, delete.
extension BoardSecureStorage {
    /// Seals `value` and stores it under `key` for `pluginID`, with a `secret.set` audit row (key name and data key
    /// versions, never the value). Setting the value a key already has changes nothing and writes nothing.
    ///
    /// Needs an owner or maintainer of the plug-in, or an admin.
    package func setSecret(_ value: Data, forKey key: String, pluginID: String, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.pluginID(pluginID)
        let key = try Self.validatedKeyName(key)
        do {
            try SecureStorageLimits.validateValue(value, forKey: key)
        } catch {
            throw Self.boardError(error)
        }
        return try changePlugin(pluginID, action: .secretSet, doing: "set the secrets of", by: actor) { change, secrets, backend in
            let before = try backend.read { try $0.sealedValue(pluginID: pluginID, key: key) }
            if before != nil, let current = try? secrets.value(forKey: key, pluginID: pluginID), current == value {
                return ChangeResult(changed: false, "the secret '\(key)' of \(pluginID) already has this value; nothing changed.")
            }
            try secrets.setValue(value, forKey: key, pluginID: pluginID)
            let version = try backend.read { try $0.sealedValue(pluginID: pluginID, key: key) }?.dataKeyVersion
            try change.record(
                AuditEntry(
                    action: .secretSet, targetType: "plugin", targetID: pluginID,
                    before: Self.slot(key, before?.dataKeyVersion), after: Self.slot(key, version)))
            return ChangeResult(
                changed: true,
                "\(before == nil ? "Stored" : "Replaced") the secret '\(key)' of \(pluginID) (sealed with data key version \(version ?? 0))."
            )
        }
    }

    /// Opens and returns the secret stored under `key` for `pluginID`, with a `secret.get` audit row naming the key.
    ///
    /// Needs an owner or maintainer of the plug-in, or an admin.
    ///
    /// - Throws: `BoardError` with code `notFound` if there is no such secret (audited as a refusal), `integrity`
    ///   if the stored value or its data key was altered or moved, `conflict` if its data key was shredded. Never
    ///   returns wrong data.
    public func secret(forKey key: String, pluginID: String, by actor: Principal) throws(BoardError) -> Data {
        try Validate.pluginID(pluginID)
        let key = try Self.validatedKeyName(key)
        return try changePlugin(pluginID, action: .secretGet, doing: "read the secrets of", by: actor) { change, secrets, backend in
            let missing = BoardError(.notFound, "\(pluginID) has no secret named '\(key)'; see plugboard secret list --plugin \(pluginID)")
            guard let record = try backend.read({ try $0.sealedValue(pluginID: pluginID, key: key) }) else { throw missing }
            let opened: Data?
            do {
                opened = try secrets.value(forKey: key, pluginID: pluginID)
            } catch let error as SecureStorageError where error.code == .keysShredded {
                throw BoardError(
                    .conflict,
                    "the secret '\(key)' of \(pluginID) can no longer be decrypted because its data key was shredded; delete it (plugboard secret delete) or set it again"
                )
            } catch let error as SecureStorageError where error.code == .integrityFailure {
                throw BoardError(
                    .integrity,
                    "the secret '\(key)' of \(pluginID) failed its integrity check (it or its data key was altered, or copied from another plug-in, key or version), so nothing was returned; set it again, and find out who edited the board"
                )
            }
            guard let value = opened else { throw missing }
            try change.record(
                AuditEntry(
                    action: .secretGet, targetType: "plugin", targetID: pluginID, after: Self.slot(key, record.dataKeyVersion)))
            return value
        }
    }

    /// Removes the secret stored under `key` for `pluginID`, with a `secret.delete` audit row. Removing a secret
    /// that does not exist changes nothing and writes nothing.
    ///
    /// Needs an owner or maintainer of the plug-in, or an admin.
    package func deleteSecret(forKey key: String, pluginID: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        let key = try Self.validatedKeyName(key)
        return try changePlugin(pluginID, action: .secretDelete, doing: "delete the secrets of", by: actor) { change, secrets, backend in
            guard let record = try backend.read({ try $0.sealedValue(pluginID: pluginID, key: key) }) else {
                return ChangeResult(changed: false, "\(pluginID) has no secret named '\(key)'; nothing changed.")
            }
            try secrets.removeValue(forKey: key, pluginID: pluginID)
            try change.record(
                AuditEntry(
                    action: .secretDelete, targetType: "plugin", targetID: pluginID,
                    before: Self.slot(key, record.dataKeyVersion), after: Self.slot(key, nil)))
            return ChangeResult(changed: true, "Deleted the secret '\(key)' of \(pluginID).")
        }
    }
}
