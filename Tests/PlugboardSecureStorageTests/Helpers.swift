import Foundation
import PlugboardPluginAPI
import PlugboardStore
import Synchronization
import Testing

@testable import PlugboardSecureStorage

/// Runs `body` and returns the error of type `E` it threw, recording an issue if it threw nothing or another error.
@discardableResult
func thrown<E: Error>(_ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> E? {
    do {
        try body()
        Issue.record("expected a \(E.self), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as E {
        return error
    } catch {
        Issue.record("expected a \(E.self), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// The async form of ``thrown(_:sourceLocation:_:)``.
@discardableResult
func thrown<E: Error>(_ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async -> E? {
    do {
        try await body()
        Issue.record("expected a \(E.self), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as E {
        return error
    } catch {
        Issue.record("expected a \(E.self), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// The `SecureStorageError` that `body` throws.
@discardableResult
func secureStorageError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> SecureStorageError? {
    thrown(SecureStorageError.self, sourceLocation: sourceLocation, body)
}

/// The `SecureStorageError` that `body` throws, for async code.
@discardableResult
func secureStorageError(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async -> SecureStorageError? {
    await thrown(SecureStorageError.self, sourceLocation: sourceLocation, body)
}

/// The `KeyProviderError` that `body` throws.
@discardableResult
func keyProviderError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> KeyProviderError? {
    thrown(KeyProviderError.self, sourceLocation: sourceLocation, body)
}

/// An engine on a fresh in-memory backend.
struct Fixture {
    let backend: InMemorySecureStorageBackend
    let masterKey: MasterKey
    let engine: SecureStorageEngine

    init(threshold: Int = SecureStorageConfiguration.defaultDataKeyRotationThreshold) throws {
        backend = InMemorySecureStorageBackend()
        masterKey = MasterKey.generate()
        engine = try SecureStorageEngine.initialize(
            backend: backend, masterKey: masterKey,
            configuration: .init(dataKeyRotationThreshold: threshold))
    }
}

/// A fresh directory that is removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("plugboard-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// The permission bits of the file at `path`.
func permissions(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as! NSNumber).intValue
}

/// Writes `text` to `path` with `mode`.
func writeFile(_ text: String, to path: String, mode: Int) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
}

/// Lowercase hexadecimal.
func hex(_ data: some Sequence<UInt8>) -> String {
    data.map { String(format: "%02x", $0) }.joined()
}

/// Bytes from hexadecimal.
func bytes(hex: String) -> Data {
    var data = Data()
    var index = hex.startIndex
    while index < hex.endIndex {
        let next = hex.index(index, offsetBy: 2)
        data.append(UInt8(hex[index..<next], radix: 16)!)
        index = next
    }
    return data
}

/// `data` with bit `bit` of byte `index` flipped.
func flipping(_ data: Data, byte index: Int, bit: Int) -> Data {
    var copy = data
    copy[copy.startIndex + index] ^= UInt8(1) << UInt8(bit)
    return copy
}

/// A backend that records the name of every call it forwards, to check what the engine touches.
final class RecordingBackend: SecureStorageBackend {
    let inner: InMemorySecureStorageBackend
    private let log = Mutex<[String]>([])

    init(_ inner: InMemorySecureStorageBackend) { self.inner = inner }

    var calls: [String] { log.withLock { $0 } }
    func reset() { log.withLock { $0.removeAll() } }
    fileprivate func record(_ call: String) { log.withLock { $0.append(call) } }

    func read<T>(_ body: (any SecureStorageBackendReader) throws -> T) throws -> T {
        try inner.read { try body(Recorder(inner: $0, log: self)) }
    }

    func write<T>(_ body: (any SecureStorageBackendWriter) throws -> T) throws -> T {
        try inner.write { try body(Recorder(inner: $0, log: self)) }
    }

    private struct Recorder: SecureStorageBackendWriter {
        let inner: any SecureStorageBackendReader
        let log: RecordingBackend
        var writer: any SecureStorageBackendWriter { inner as! any SecureStorageBackendWriter }

        func keyCheckValue() throws -> Data? {
            log.record("keyCheckValue")
            return try inner.keyCheckValue()
        }
        func dataKey(pluginID: String, version: Int) throws -> DataKeyRecord? {
            log.record("dataKey")
            return try inner.dataKey(pluginID: pluginID, version: version)
        }
        func dataKeys(pluginID: String) throws -> [DataKeyRecord] {
            log.record("dataKeys")
            return try inner.dataKeys(pluginID: pluginID)
        }
        func allDataKeys() throws -> [DataKeyRecord] {
            log.record("allDataKeys")
            return try inner.allDataKeys()
        }
        func sealedValue(pluginID: String, key: String) throws -> SealedValueRecord? {
            log.record("sealedValue")
            return try inner.sealedValue(pluginID: pluginID, key: key)
        }
        func sealedValues(pluginID: String) throws -> [SealedValueRecord] {
            log.record("sealedValues")
            return try inner.sealedValues(pluginID: pluginID)
        }
        func valueKeys(pluginID: String) throws -> [String] {
            log.record("valueKeys")
            return try inner.valueKeys(pluginID: pluginID)
        }
        func setKeyCheckValue(_ value: Data) throws {
            log.record("setKeyCheckValue")
            try writer.setKeyCheckValue(value)
        }
        func insertDataKey(_ record: DataKeyRecord) throws {
            log.record("insertDataKey")
            try writer.insertDataKey(record)
        }
        func updateDataKey(_ record: DataKeyRecord) throws {
            log.record("updateDataKey")
            try writer.updateDataKey(record)
        }
        func saveSealedValue(_ record: SealedValueRecord) throws {
            log.record("saveSealedValue")
            try writer.saveSealedValue(record)
        }
        func deleteSealedValue(pluginID: String, key: String) throws -> Bool {
            log.record("deleteSealedValue")
            return try writer.deleteSealedValue(pluginID: pluginID, key: key)
        }
        func deleteSealedValues(pluginID: String) throws -> Int {
            log.record("deleteSealedValues")
            return try writer.deleteSealedValues(pluginID: pluginID)
        }
    }
}
