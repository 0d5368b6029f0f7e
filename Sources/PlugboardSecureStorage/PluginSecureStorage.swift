import Foundation
import PlugboardPluginAPI

/// The `SecureStorage` of one plug-in, backed by a ``SecureStorageEngine``: what a host hands the plug-in.
///
/// The namespace is bound when the host creates it with ``SecureStorageEngine/storage(forPlugin:)``; the plug-in has no
/// way to name another. Each call is one short synchronous transaction on the board.
package struct PluginSecureStorage: SecureStorage, CustomStringConvertible, CustomReflectable {
    /// The plug-in whose namespace this storage reaches.
    let pluginID: String
    private let store: SecureStorageEngine

    init(store: SecureStorageEngine, pluginID: String) {
        self.store = store
        self.pluginID = pluginID
    }

    /// Seals and stores `value` under `key`.
    func set(_ value: Data, forKey key: String) async throws {
        try store.setValue(value, forKey: key, pluginID: pluginID)
    }

    /// Opens and returns the value stored under `key`, or `nil`.
    func data(forKey key: String) async throws -> Data? {
        try store.value(forKey: key, pluginID: pluginID)
    }

    /// Removes the value stored under `key`, if any.
    func removeValue(forKey key: String) async throws {
        try store.removeValue(forKey: key, pluginID: pluginID)
    }

    /// The keys that have a value, sorted by UTF-8 bytes.
    func keys() async throws -> [String] {
        try store.keys(pluginID: pluginID)
    }

    /// `PluginSecureStorage(plugin: …)`.
    package var description: String { "PluginSecureStorage(plugin: \(pluginID))" }
    /// A mirror that shows the plug-in only.
    package var customMirror: Mirror { Mirror(self, children: ["pluginID": pluginID], displayStyle: .struct) }
}
