public import Foundation
public import PlugboardPluginAPI
import Synchronization

/// An in-memory `SecureStorage` for plug-in authors' tests.
///
/// It applies the same key-name and value rules as the board (`SecureStorageLimits`),
/// including NFC normalisation, and lists keys in the same order, so a plug-in tested against it behaves the same
/// against a real host. Nothing is encrypted: it is a fake, not a secure store.
///
/// ```swift
/// @Test func remembersTheToken() async throws {
///     let storage = InMemorySecureStorage()
///     let plugin = CalendarPlugin(storage: storage)
///     try await plugin.signIn(token: "t0k3n")
///     #expect(try await storage.keys() == ["oauth-token"])
/// }
/// ```
///
/// To test how a plug-in copes with failures, ``failNextOperations(with:count:)`` makes the next calls throw.
public final class InMemorySecureStorage: SecureStorage, CustomStringConvertible, CustomReflectable {
    private struct State {
        var values: [String: Data]
        var pendingFailures: [SecureStorageError] = []
    }

    private let state: Mutex<State>

    /// Creates a storage holding `values`. The keys are validated and normalised like any key name.
    ///
    /// - Precondition: every key of `values` is a valid key name.
    public init(_ values: [String: Data] = [:]) {
        var normalised: [String: Data] = [:]
        for (key, value) in values {
            do {
                normalised[try SecureStorageLimits.validatedKeyName(key)] = value
            } catch {
                preconditionFailure(error.message)
            }
        }
        state = Mutex(State(values: normalised))
    }

    /// Makes each of the next `count` operations throw `error` instead of doing anything.
    public func failNextOperations(with error: SecureStorageError, count: Int = 1) {
        state.withLock { $0.pendingFailures.append(contentsOf: repeatElement(error, count: count)) }
    }

    /// A copy of every stored value, by key. Meant for assertions in tests.
    public var storedValues: [String: Data] {
        state.withLock { $0.values }
    }

    /// Stores `value` under `key`.
    public func set(_ value: Data, forKey key: String) async throws {
        let name = try SecureStorageLimits.validatedKeyName(key)
        try SecureStorageLimits.validateValue(value, forKey: name)
        try state.withLock { state throws(SecureStorageError) in
            try Self.takeFailure(&state)
            state.values[name] = value
        }
    }

    /// Returns the value stored under `key`, or `nil`.
    public func data(forKey key: String) async throws -> Data? {
        let name = try SecureStorageLimits.validatedKeyName(key)
        return try state.withLock { state throws(SecureStorageError) in
            try Self.takeFailure(&state)
            return state.values[name]
        }
    }

    /// Removes the value stored under `key`, if any.
    public func removeValue(forKey key: String) async throws {
        let name = try SecureStorageLimits.validatedKeyName(key)
        try state.withLock { state throws(SecureStorageError) in
            try Self.takeFailure(&state)
            state.values[name] = nil
        }
    }

    /// Returns every key that has a value, sorted by UTF-8 bytes as the board sorts them.
    public func keys() async throws -> [String] {
        try state.withLock { state throws(SecureStorageError) in
            try Self.takeFailure(&state)
            return state.values.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }

    /// A summary that names how many values are stored, never the values.
    public var description: String {
        "InMemorySecureStorage(\(state.withLock { $0.values.count }) values)"
    }

    /// An empty mirror, so that `dump` shows no stored value.
    public var customMirror: Mirror {
        Mirror(self, children: [])
    }

    private static func takeFailure(_ state: inout State) throws(SecureStorageError) {
        if !state.pendingFailures.isEmpty {
            throw state.pendingFailures.removeFirst()
        }
    }
}
