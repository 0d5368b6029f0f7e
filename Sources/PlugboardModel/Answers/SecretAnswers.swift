import Foundation
import PlugboardFlags
import PlugboardVersioning

/// One stored secret as `plugboard secret list` shows it: its name and how it is sealed, never its value.
public struct SecretEntry: Sendable, Hashable, Codable {
    /// The plug-in.
    public let pluginID: String
    /// The key name (not secret).
    public let key: String
    /// The data key version that sealed the value.
    public let dataKeyVersion: Int
    /// That data key's state: `active`, `retired` or `shredded`.
    public let dataKeyState: String
    /// False when the data key was shredded: the value can no longer be decrypted.
    public let readable: Bool
    /// When the value was last set or re-encrypted.
    public let updatedAt: String

    /// A value with each stored property given.
    package init(pluginID: String, key: String, dataKeyVersion: Int, dataKeyState: String, readable: Bool, updatedAt: String) {
        self.pluginID = pluginID
        self.key = key
        self.dataKeyVersion = dataKeyVersion
        self.dataKeyState = dataKeyState
        self.readable = readable
        self.updatedAt = updatedAt
    }
}

/// One data key as `plugboard keys list` shows it: never the key, wrapped or not.
public struct DataKeyEntry: Sendable, Hashable, Codable {
    /// The plug-in.
    public let pluginID: String
    /// The version, from 1.
    public let version: Int
    /// `active`, `retired` or `shredded`.
    public let state: String
    /// How many values the key has sealed.
    public let encryptionCount: Int
    /// How many stored values it seals now.
    public let valueCount: Int
    /// When it was created.
    public let createdAt: String
    /// When it stopped being active, if it did.
    public let retiredAt: String?

    /// A value with each stored property given.
    package init(
        pluginID: String, version: Int, state: String, encryptionCount: Int, valueCount: Int, createdAt: String, retiredAt: String?
    ) {
        self.pluginID = pluginID
        self.version = version
        self.state = state
        self.encryptionCount = encryptionCount
        self.valueCount = valueCount
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}
