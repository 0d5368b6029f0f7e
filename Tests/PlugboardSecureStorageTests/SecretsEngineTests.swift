import Foundation
import PlugboardPluginAPI
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardSecureStorage

@Suite("Secrets engine", .timeLimit(.hangGuard))
struct SecretsEngineTests {
    let calendar = "com.example.calendar"
    let mail = "com.example.mail"

    // MARK: Initialisation and the master key check

    @Test func initialiseStoresTheKeyCheckValueAndIsIdempotent() throws {
        let fixture = try Fixture()
        #expect(fixture.backend.snapshot.keyCheckValue == fixture.masterKey.keyCheckValue)
        #expect(fixture.backend.snapshot.keyCheckValue?.count == 33)
        let before = fixture.backend.snapshot
        _ = try SecureStorageEngine.initialize(backend: fixture.backend, masterKey: fixture.masterKey)
        #expect(fixture.backend.snapshot == before)
        #expect(fixture.engine.masterKeyIdentifier == fixture.masterKey.identifier)
    }

    @Test func openingAnUninitialisedBoardIsRefused() {
        let error = secureStorageError {
            _ = try SecureStorageEngine(backend: InMemorySecureStorageBackend(), masterKey: .generate())
        }
        #expect(error?.code == .notInitialized)
    }

    @Test func initialisingABoardWithKeysButNoKeyCheckValueIsRefused() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        fixture.backend.modify { $0.keyCheckValue = nil }
        let before = fixture.backend.snapshot
        let error = secureStorageError {
            _ = try SecureStorageEngine.initialize(backend: fixture.backend, masterKey: .generate())
        }
        #expect(error?.code == .integrityFailure)
        #expect(fixture.backend.snapshot == before)
    }

    @Test func aWrongMasterKeyIsRefusedAtOpenAndAtInitialise() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        let before = fixture.backend.snapshot
        let wrong = MasterKey.generate()
        for attempt in [
            { _ = try SecureStorageEngine(backend: fixture.backend, masterKey: wrong) },
            { _ = try SecureStorageEngine.initialize(backend: fixture.backend, masterKey: wrong) },
        ] as [() throws -> Void] {
            let error = secureStorageError(attempt)
            #expect(error?.code == .wrongMasterKey)
            #expect(error?.message.contains("does not belong to this board") == true)
            #expect(error?.message.contains(fixture.masterKey.identifier) == true)
            #expect(error?.message.contains(wrong.identifier) == true)
        }
        #expect(fixture.backend.snapshot == before)
    }

    /// Every operation of an engine whose key is no longer the board's is refused after reading only the key check
    /// value, and changes nothing.
    @Test func aWrongMasterKeyIsRefusedBeforeAnythingIsReadOrWritten() throws {
        let inner = InMemorySecureStorageBackend()
        let backend = RecordingBackend(inner)
        let key = MasterKey.generate()
        let engine = try SecureStorageEngine.initialize(backend: backend, masterKey: key)
        try engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        try engine.setValue(Data("w".utf8), forKey: "k", pluginID: mail)
        // Another process re-keys the board.
        try SecureStorageEngine(backend: inner, masterKey: key).rotateMasterKey(to: .generate())
        let before = inner.snapshot
        let operations: [(String, () throws -> Void)] = [
            ("verify", { try engine.verifyMasterKey() }),
            ("set", { try engine.setValue(Data("x".utf8), forKey: "k", pluginID: self.calendar) }),
            ("set new", { try engine.setValue(Data("x".utf8), forKey: "new", pluginID: "com.example.new") }),
            ("get", { _ = try engine.value(forKey: "k", pluginID: self.calendar) }),
            ("remove", { try engine.removeValue(forKey: "k", pluginID: self.calendar) }),
            ("keys", { _ = try engine.keys(pluginID: self.calendar) }),
            ("remove all", { try engine.removeAllValues(pluginID: self.calendar) }),
            ("data keys", { _ = try engine.dataKeys(pluginID: self.calendar) }),
            ("rotate master", { try engine.rotateMasterKey(to: .generate()) }),
            ("rotate data key", { try engine.rotateDataKey(pluginID: self.calendar, reencrypt: true) }),
            ("re-encrypt", { try engine.reencryptValues(pluginID: self.calendar) }),
            ("shred", { try engine.shredDataKeys(pluginID: self.calendar) }),
        ]
        for (name, operation) in operations {
            backend.reset()
            let error = secureStorageError(operation)
            #expect(error?.code == .wrongMasterKey, "\(name)")
            #expect(backend.calls == ["keyCheckValue"], "\(name)")
            #expect(inner.snapshot == before, "\(name)")
        }
    }

    // MARK: Values

    @Test func valuesRoundTripAndAreStoredSealed() throws {
        let fixture = try Fixture()
        let secret = Data("hunter2-hunter2-hunter2".utf8)
        try fixture.engine.setValue(secret, forKey: "password", pluginID: calendar)
        #expect(try fixture.engine.value(forKey: "password", pluginID: calendar) == secret)
        #expect(try fixture.engine.value(forKey: "other", pluginID: calendar) == nil)
        let record = try #require(fixture.backend.snapshot.values[.init(pluginID: calendar, key: "password")])
        #expect(record.sealedBox.range(of: secret) == nil)
        #expect(record.dataKeyVersion == 1)
        let dataKeys = try fixture.engine.dataKeys(pluginID: calendar)
        #expect(dataKeys.map(\.state) == [.active])
        #expect(dataKeys.map(\.encryptionCount) == [1])
        #expect(dataKeys[0].wrappedKey?.count == Envelope.wrappedKeyByteCount)
    }

    @Test func aFailingBackendLeavesEverythingUnchanged() throws {
        let fixture = try Fixture()
        let before = fixture.backend.snapshot
        // The data key is created, then saving the value fails: the new data key must go too.
        fixture.backend.failNext(.saveSealedValue)
        let error = secureStorageError {
            try fixture.engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        }
        #expect(error?.code == .unavailable)
        #expect(fixture.backend.snapshot == before)
        try fixture.engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        #expect(try fixture.engine.value(forKey: "k", pluginID: calendar) == Data("v".utf8))
    }

    // MARK: Binding to the slot

    @Test func aValueMovedToAnotherKeyNameDoesNotOpen() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("a".utf8), forKey: "a", pluginID: calendar)
        try fixture.engine.setValue(Data("b".utf8), forKey: "b", pluginID: calendar)
        fixture.backend.modify { snapshot in
            var moved = snapshot.values[.init(pluginID: calendar, key: "a")]!
            moved.key = "b"
            snapshot.values[.init(pluginID: calendar, key: "b")] = moved
        }
        let error = secureStorageError { _ = try fixture.engine.value(forKey: "b", pluginID: calendar) }
        #expect(error?.code == .integrityFailure)
        #expect(try fixture.engine.value(forKey: "a", pluginID: calendar) == Data("a".utf8))
    }

    @Test func aValueMovedToAnotherPluginDoesNotOpenEvenWithItsDataKey() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("secret of calendar".utf8), forKey: "token", pluginID: calendar)
        try fixture.engine.setValue(Data("secret of mail".utf8), forKey: "token", pluginID: mail)
        // Copy the value into mail's row.
        fixture.backend.modify { snapshot in
            var moved = snapshot.values[.init(pluginID: calendar, key: "token")]!
            moved.pluginID = mail
            snapshot.values[.init(pluginID: mail, key: "token")] = moved
        }
        let error = secureStorageError { _ = try fixture.engine.value(forKey: "token", pluginID: mail) }
        #expect(error?.code == .integrityFailure)
        // Copy calendar's data key over mail's as well: the wrapped key is bound to calendar.
        fixture.backend.modify { snapshot in
            var key = snapshot.dataKeys[.init(pluginID: calendar, version: 1)]!
            key.pluginID = mail
            snapshot.dataKeys[.init(pluginID: mail, version: 1)] = key
        }
        let second = secureStorageError { _ = try fixture.engine.value(forKey: "token", pluginID: mail) }
        #expect(second?.code == .integrityFailure)
    }

    @Test func aValueRelabelledWithAnotherDataKeyVersionDoesNotOpen() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("v1".utf8), forKey: "k", pluginID: calendar)
        try fixture.engine.rotateDataKey(pluginID: calendar)
        try fixture.engine.setValue(Data("v2".utf8), forKey: "other", pluginID: calendar)
        for version in [2, 0, -1, 99] {
            fixture.backend.modify { $0.values[.init(pluginID: calendar, key: "k")]!.dataKeyVersion = version }
            let error = secureStorageError { _ = try fixture.engine.value(forKey: "k", pluginID: calendar) }
            #expect(error?.code == .integrityFailure, "version \(version)")
        }
    }

    @Test func wrappedKeysSwappedBetweenVersionsDoNotOpen() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("old".utf8), forKey: "old", pluginID: calendar)
        try fixture.engine.rotateDataKey(pluginID: calendar)
        try fixture.engine.setValue(Data("new".utf8), forKey: "new", pluginID: calendar)
        fixture.backend.modify { snapshot in
            let one = snapshot.dataKeys[.init(pluginID: calendar, version: 1)]!.wrappedKey
            let two = snapshot.dataKeys[.init(pluginID: calendar, version: 2)]!.wrappedKey
            snapshot.dataKeys[.init(pluginID: calendar, version: 1)]!.wrappedKey = two
            snapshot.dataKeys[.init(pluginID: calendar, version: 2)]!.wrappedKey = one
        }
        for key in ["old", "new"] {
            let error = secureStorageError { _ = try fixture.engine.value(forKey: key, pluginID: calendar) }
            #expect(error?.code == .integrityFailure, "\(key)")
        }
        let error = secureStorageError { try fixture.engine.setValue(Data(), forKey: "x", pluginID: calendar) }
        #expect(error?.code == .integrityFailure)
    }

    @Test func everyFlippedBitInTheBackendIsAnIntegrityFailure() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("value".utf8), forKey: "k", pluginID: calendar)
        let original = fixture.backend.snapshot
        let valueID = InMemorySecureStorageBackend.ValueID(pluginID: calendar, key: "k")
        let keyID = InMemorySecureStorageBackend.DataKeyID(pluginID: calendar, version: 1)
        let sealed = original.values[valueID]!.sealedBox
        let wrapped = original.dataKeys[keyID]!.wrappedKey!
        for index in 0..<sealed.count {
            fixture.backend.modify {
                $0 = original
                $0.values[valueID]!.sealedBox = flipping(sealed, byte: index, bit: index % 8)
            }
            let error = secureStorageError { _ = try fixture.engine.value(forKey: "k", pluginID: calendar) }
            #expect(error?.code == .integrityFailure, "sealed byte \(index)")
        }
        for index in 0..<wrapped.count {
            fixture.backend.modify {
                $0 = original
                $0.dataKeys[keyID]!.wrappedKey = flipping(wrapped, byte: index, bit: index % 8)
            }
            let error = secureStorageError { _ = try fixture.engine.value(forKey: "k", pluginID: calendar) }
            #expect(error?.code == .integrityFailure, "wrapped byte \(index)")
        }
    }

    // MARK: Master key rotation

    @Test func masterKeyRotationRewrapsEveryDataKeyAndKeepsValuesReadable() throws {
        let fixture = try Fixture()
        let engine = fixture.engine
        var expected: [String: [String: Data]] = [:]
        for plugin in [calendar, mail, "com.example.gone"] {
            for index in 0..<3 {
                let value = Data("\(plugin)-\(index)".utf8)
                try engine.setValue(value, forKey: "key\(index)", pluginID: plugin)
                expected[plugin, default: [:]]["key\(index)"] = value
            }
        }
        try engine.rotateDataKey(pluginID: calendar)
        try engine.setValue(Data("calendar-new".utf8), forKey: "key9", pluginID: calendar)
        expected[calendar]!["key9"] = Data("calendar-new".utf8)
        try engine.shredDataKeys(pluginID: "com.example.gone")
        expected["com.example.gone"] = nil
        let before = fixture.backend.snapshot

        let newKey = MasterKey.generate()
        let count = try engine.rotateMasterKey(to: newKey)

        #expect(count == 3)  // calendar v1 and v2, mail v1; the shredded key is not rewrapped
        let after = fixture.backend.snapshot
        #expect(after.values == before.values)  // values are not re-encrypted
        #expect(after.keyCheckValue == newKey.keyCheckValue)
        #expect(engine.masterKeyIdentifier == newKey.identifier)
        for (plugin, values) in expected {
            for (key, value) in values {
                #expect(try engine.value(forKey: key, pluginID: plugin) == value)
            }
        }
        // The old key opens none of the rewrapped keys, the new one opens them all.
        for record in after.dataKeys.values where record.state != .shredded {
            #expect(record.wrappedKey != before.dataKeys[.init(pluginID: record.pluginID, version: record.version)]!.wrappedKey)
            let old = secureStorageError {
                _ = try Envelope.unwrap(
                    record.wrappedKey!, pluginID: record.pluginID, version: record.version, under: fixture.masterKey)
            }
            #expect(old?.code == .integrityFailure)
            _ = try Envelope.unwrap(record.wrappedKey!, pluginID: record.pluginID, version: record.version, under: newKey)
        }
        // The board now refuses the old key and accepts the new one.
        let refused = secureStorageError { _ = try SecureStorageEngine(backend: fixture.backend, masterKey: fixture.masterKey) }
        #expect(refused?.code == .wrongMasterKey)
        let reopened = try SecureStorageEngine(backend: fixture.backend, masterKey: newKey)
        #expect(try reopened.value(forKey: "key9", pluginID: calendar) == Data("calendar-new".utf8))
    }

}
