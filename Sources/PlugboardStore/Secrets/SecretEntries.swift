/// One stored secret as `plugboard secret list` shows it: its name and how it is sealed, never its value.
package struct SecretEntry: Sendable, Hashable, Codable {
    /// The plug-in.
    package let pluginID: String
    /// The key name (not secret).
    package let key: String
    /// The data key version that sealed the value.
    package let dataKeyVersion: Int
    /// That data key's state: `active`, `retired` or `shredded`.
    package let dataKeyState: String
    /// False when the data key was shredded: the value can no longer be decrypted.
    package let readable: Bool
    /// When the value was last set or re-encrypted.
    package let updatedAt: String
}

/// One data key as `plugboard keys list` shows it: never the key, wrapped or not.
package struct DataKeyEntry: Sendable, Hashable, Codable {
    /// The plug-in.
    package let pluginID: String
    /// The version, from 1.
    package let version: Int
    /// `active`, `retired` or `shredded`.
    package let state: String
    /// How many values the key has sealed.
    package let encryptionCount: Int
    /// How many stored values it seals now.
    package let valueCount: Int
    /// When it was created.
    package let createdAt: String
    /// When it stopped being active, if it did.
    package let retiredAt: String?
}
