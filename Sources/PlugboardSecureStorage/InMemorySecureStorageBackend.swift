import Foundation
import PlugboardPluginAPI
import Synchronization

/// A ``SecureStorageBackend`` in memory, with the same transaction semantics as the board: a write transaction works on a
/// copy that replaces the state only if the body returns; a read transaction sees a snapshot.
///
/// For tests, ``snapshot`` exposes the whole state, ``modify(_:)`` lets a test tamper with it, and
/// ``failNext(_:after:)`` makes one write operation throw, to check that a failed operation changes nothing.
final class InMemorySecureStorageBackend: SecureStorageBackend {
    /// Identifies a data key: plug-in and version.
    struct DataKeyID: Sendable, Hashable {
        /// The plug-in.
        var pluginID: String
        /// The version.
        var version: Int
    }

    /// Identifies a value: plug-in and key name.
    struct ValueID: Sendable, Hashable {
        /// The plug-in.
        var pluginID: String
        /// The key name.
        var key: String
    }

    /// The whole state of the backend.
    struct Snapshot: Sendable, Hashable {
        /// The master key check value.
        var keyCheckValue: Data?
        /// Every data key.
        var dataKeys: [DataKeyID: DataKeyRecord] = [:]
        /// Every sealed value.
        var values: [ValueID: SealedValueRecord] = [:]
        /// Creates an empty state.
        init() {}
    }

    /// A write operation that ``failNext(_:after:)`` can make fail.
    enum Operation: Sendable, Hashable {
        /// ``SecureStorageBackendWriter/setKeyCheckValue(_:)``.
        case setKeyCheckValue
        /// ``SecureStorageBackendWriter/insertDataKey(_:)``.
        case insertDataKey
        /// ``SecureStorageBackendWriter/updateDataKey(_:)``, and ``SecureStorageBackendWriter/updateEncryptionCount(_:)``, which calls it here.
        case updateDataKey
        /// ``SecureStorageBackendWriter/saveSealedValue(_:)``.
        case saveSealedValue
        /// ``SecureStorageBackendWriter/deleteSealedValue(pluginID:key:)`` and
        /// ``SecureStorageBackendWriter/deleteSealedValues(pluginID:)``.
        case deleteSealedValue
    }

    /// The error an injected failure throws.
    struct InjectedFailure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The operation that failed.
        var operation: Operation
        /// `injected failure of <operation>`.
        var description: String { "injected failure of \(operation)" }
    }

    private struct State {
        var snapshot: Snapshot
        var failures: [Operation: Int] = [:]
    }

    private let state: Mutex<State>

    /// Creates a backend holding `snapshot`, empty by default.
    init(_ snapshot: Snapshot = Snapshot()) {
        state = Mutex(State(snapshot: snapshot))
    }

    /// A copy of the whole state.
    var snapshot: Snapshot {
        state.withLock { $0.snapshot }
    }

    /// Changes the state directly, outside the engine: for tests that tamper with stored records.
    func modify(_ body: (inout Snapshot) -> Void) {
        state.withLock { body(&$0.snapshot) }
    }

    /// Makes the next `count` calls of `operation` throw ``InjectedFailure``, which rolls the transaction back.
    /// With `after`, that many calls succeed first.
    func failNext(_ operation: Operation, after: Int = 0) {
        state.withLock { $0.failures[operation] = after + 1 }
    }

    /// Runs `body` on a snapshot of the state.
    func read<T>(_ body: (any SecureStorageBackendReader) throws -> T) throws -> T {
        try body(Transaction(snapshot: snapshot))
    }

    /// Runs `body` on a copy of the state, which replaces the state if `body` returns.
    func write<T>(_ body: (any SecureStorageBackendWriter) throws -> T) throws -> T {
        var result: T?
        try state.withLock { (state: inout State) throws in
            let transaction = Transaction(snapshot: state.snapshot)
            transaction.failures = state.failures
            defer { state.failures = transaction.failures }
            result = try body(transaction)
            state.snapshot = transaction.snapshot
        }
        return result!
    }

    /// The view a transaction's body gets. Never shared across threads.
    private final class Transaction: SecureStorageBackendWriter {
        var snapshot: Snapshot
        var failures: [Operation: Int] = [:]

        init(snapshot: Snapshot) {
            self.snapshot = snapshot
        }

        private func check(_ operation: Operation) throws {
            guard let remaining = failures[operation] else { return }
            if remaining <= 1 {
                failures[operation] = nil
                throw InjectedFailure(operation: operation)
            }
            failures[operation] = remaining - 1
        }

        func keyCheckValue() throws -> Data? { snapshot.keyCheckValue }

        func dataKey(pluginID: String, version: Int) throws -> DataKeyRecord? {
            snapshot.dataKeys[DataKeyID(pluginID: pluginID, version: version)]
        }

        func dataKeys(pluginID: String) throws -> [DataKeyRecord] {
            snapshot.dataKeys.values.filter { $0.pluginID == pluginID }.sorted { $0.version < $1.version }
        }

        func allDataKeys() throws -> [DataKeyRecord] {
            Array(snapshot.dataKeys.values)
        }

        func sealedValue(pluginID: String, key: String) throws -> SealedValueRecord? {
            snapshot.values[ValueID(pluginID: pluginID, key: key)]
        }

        func sealedValues(pluginID: String) throws -> [SealedValueRecord] {
            snapshot.values.values.filter { $0.pluginID == pluginID }
        }

        func valueKeys(pluginID: String) throws -> [String] {
            snapshot.values.values.filter { $0.pluginID == pluginID }.map(\.key)
        }

        func setKeyCheckValue(_ value: Data) throws {
            try check(.setKeyCheckValue)
            snapshot.keyCheckValue = value
        }

        func insertDataKey(_ record: DataKeyRecord) throws { try putDataKey(record, .insertDataKey, existing: false) }

        func updateDataKey(_ record: DataKeyRecord) throws { try putDataKey(record, .updateDataKey, existing: true) }

        /// Writes `record` where a data key of its plug-in and version must already exist (`existing`), or must not.
        private func putDataKey(_ record: DataKeyRecord, _ operation: Operation, existing: Bool) throws {
            try check(operation)
            let id = DataKeyID(pluginID: record.pluginID, version: record.version)
            guard (snapshot.dataKeys[id] != nil) == existing else {
                throw SecureStorageError(
                    .unavailable,
                    "data key version \(record.version) of plug-in \(record.pluginID) \(existing ? "does not exist" : "already exists")")
            }
            snapshot.dataKeys[id] = record
        }

        func saveSealedValue(_ record: SealedValueRecord) throws {
            try check(.saveSealedValue)
            snapshot.values[ValueID(pluginID: record.pluginID, key: record.key)] = record
        }

        func deleteSealedValue(pluginID: String, key: String) throws -> Bool {
            try check(.deleteSealedValue)
            return snapshot.values.removeValue(forKey: ValueID(pluginID: pluginID, key: key)) != nil
        }

        func deleteSealedValues(pluginID: String) throws -> Int {
            try check(.deleteSealedValue)
            let doomed = snapshot.values.keys.filter { $0.pluginID == pluginID }
            for id in doomed { snapshot.values[id] = nil }
            return doomed.count
        }
    }
}
