import Foundation
import PlugboardPluginAPI
import PlugboardStore
import Testing

@testable import PlugboardSecureStorage

@Suite("Secrets engine")
struct SecretsEngineTests {
    let calendar = "com.example.calendar"
    let mail = "com.example.mail"

    // MARK: Initialisation and the master key check

    @Test func initialiseStoresTheKeyCheckValueAndIsIdempotent() throws {
        let fixture = try Fixture()
        #expect(fixture.vault.snapshot.keyCheckValue == fixture.masterKey.keyCheckValue)
        #expect(fixture.vault.snapshot.keyCheckValue?.count == 33)
        let before = fixture.vault.snapshot
        _ = try SecretStore.initialize(vault: fixture.vault, masterKey: fixture.masterKey)
        #expect(fixture.vault.snapshot == before)
        #expect(fixture.engine.masterKeyIdentifier == fixture.masterKey.identifier)
    }

    @Test func openingAnUninitialisedBoardIsRefused() {
        let error = secureStorageError {
            _ = try SecretStore(vault: InMemorySecretVault(), masterKey: .generate())
        }
        #expect(error?.code == .notInitialized)
    }

    @Test func initialisingABoardWithKeysButNoKeyCheckValueIsRefused() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        fixture.vault.modify { $0.keyCheckValue = nil }
        let before = fixture.vault.snapshot
        let error = secureStorageError {
            _ = try SecretStore.initialize(vault: fixture.vault, masterKey: .generate())
        }
        #expect(error?.code == .integrityFailure)
        #expect(fixture.vault.snapshot == before)
    }

    @Test func aWrongMasterKeyIsRefusedAtOpenAndAtInitialise() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        let before = fixture.vault.snapshot
        let wrong = MasterKey.generate()
        for attempt in [
            { _ = try SecretStore(vault: fixture.vault, masterKey: wrong) },
            { _ = try SecretStore.initialize(vault: fixture.vault, masterKey: wrong) },
        ] as [() throws -> Void] {
            let error = secureStorageError(attempt)
            #expect(error?.code == .wrongMasterKey)
            #expect(error?.message.contains("does not belong to this board") == true)
            #expect(error?.message.contains(fixture.masterKey.identifier) == true)
            #expect(error?.message.contains(wrong.identifier) == true)
        }
        #expect(fixture.vault.snapshot == before)
    }

    /// Every operation of an engine whose key is no longer the board's is refused after reading only the key check
    /// value, and changes nothing.
    @Test func aWrongMasterKeyIsRefusedBeforeAnythingIsReadOrWritten() throws {
        let inner = InMemorySecretVault()
        let vault = RecordingVault(inner)
        let key = MasterKey.generate()
        let engine = try SecretStore.initialize(vault: vault, masterKey: key)
        try engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        try engine.setValue(Data("w".utf8), forKey: "k", pluginID: mail)
        // Another process re-keys the board.
        try SecretStore(vault: inner, masterKey: key).rotateMasterKey(to: .generate())
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
            vault.reset()
            let error = secureStorageError(operation)
            #expect(error?.code == .wrongMasterKey, "\(name)")
            #expect(vault.calls == ["keyCheckValue"], "\(name)")
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
        let record = try #require(fixture.vault.snapshot.values[.init(pluginID: calendar, key: "password")])
        #expect(record.sealedBox.range(of: secret) == nil)
        #expect(record.dataKeyVersion == 1)
        let dataKeys = try fixture.engine.dataKeys(pluginID: calendar)
        #expect(dataKeys.map(\.state) == [.active])
        #expect(dataKeys.map(\.encryptionCount) == [1])
        #expect(dataKeys[0].wrappedKey?.count == Envelope.wrappedKeyByteCount)
    }

    @Test func aFailingVaultLeavesEverythingUnchanged() throws {
        let fixture = try Fixture()
        let before = fixture.vault.snapshot
        // The data key is created, then saving the value fails: the new data key must go too.
        fixture.vault.failNext(.saveSealedValue)
        let error = secureStorageError {
            try fixture.engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        }
        #expect(error?.code == .unavailable)
        #expect(fixture.vault.snapshot == before)
        try fixture.engine.setValue(Data("v".utf8), forKey: "k", pluginID: calendar)
        #expect(try fixture.engine.value(forKey: "k", pluginID: calendar) == Data("v".utf8))
    }

    // MARK: Binding to the slot

    @Test func aValueMovedToAnotherKeyNameDoesNotOpen() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("a".utf8), forKey: "a", pluginID: calendar)
        try fixture.engine.setValue(Data("b".utf8), forKey: "b", pluginID: calendar)
        fixture.vault.modify { snapshot in
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
        fixture.vault.modify { snapshot in
            var moved = snapshot.values[.init(pluginID: calendar, key: "token")]!
            moved.pluginID = mail
            snapshot.values[.init(pluginID: mail, key: "token")] = moved
        }
        let error = secureStorageError { _ = try fixture.engine.value(forKey: "token", pluginID: mail) }
        #expect(error?.code == .integrityFailure)
        // Copy calendar's data key over mail's as well: the wrapped key is bound to calendar.
        fixture.vault.modify { snapshot in
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
            fixture.vault.modify { $0.values[.init(pluginID: calendar, key: "k")]!.dataKeyVersion = version }
            let error = secureStorageError { _ = try fixture.engine.value(forKey: "k", pluginID: calendar) }
            #expect(error?.code == .integrityFailure, "version \(version)")
        }
    }

    @Test func wrappedKeysSwappedBetweenVersionsDoNotOpen() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("old".utf8), forKey: "old", pluginID: calendar)
        try fixture.engine.rotateDataKey(pluginID: calendar)
        try fixture.engine.setValue(Data("new".utf8), forKey: "new", pluginID: calendar)
        fixture.vault.modify { snapshot in
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

    @Test func everyFlippedBitInTheVaultIsAnIntegrityFailure() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("value".utf8), forKey: "k", pluginID: calendar)
        let original = fixture.vault.snapshot
        let valueID = InMemorySecretVault.ValueID(pluginID: calendar, key: "k")
        let keyID = InMemorySecretVault.DataKeyID(pluginID: calendar, version: 1)
        let sealed = original.values[valueID]!.sealedBox
        let wrapped = original.dataKeys[keyID]!.wrappedKey!
        for index in 0..<sealed.count {
            fixture.vault.modify {
                $0 = original
                $0.values[valueID]!.sealedBox = flipping(sealed, byte: index, bit: index % 8)
            }
            let error = secureStorageError { _ = try fixture.engine.value(forKey: "k", pluginID: calendar) }
            #expect(error?.code == .integrityFailure, "sealed byte \(index)")
        }
        for index in 0..<wrapped.count {
            fixture.vault.modify {
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
        let before = fixture.vault.snapshot

        let newKey = MasterKey.generate()
        let count = try engine.rotateMasterKey(to: newKey)

        #expect(count == 3)  // calendar v1 and v2, mail v1; the shredded key is not rewrapped
        let after = fixture.vault.snapshot
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
        let refused = secureStorageError { _ = try SecretStore(vault: fixture.vault, masterKey: fixture.masterKey) }
        #expect(refused?.code == .wrongMasterKey)
        let reopened = try SecretStore(vault: fixture.vault, masterKey: newKey)
        #expect(try reopened.value(forKey: "key9", pluginID: calendar) == Data("calendar-new".utf8))
    }

    @Test func aFailedMasterKeyRotationChangesNothing() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("a".utf8), forKey: "k", pluginID: calendar)
        try fixture.engine.setValue(Data("b".utf8), forKey: "k", pluginID: mail)
        let before = fixture.vault.snapshot
        fixture.vault.failNext(.updateDataKey, after: 1)  // the second rewrap fails
        let error = secureStorageError { try fixture.engine.rotateMasterKey(to: .generate()) }
        #expect(error?.code == .unavailable)
        #expect(fixture.vault.snapshot == before)
        #expect(fixture.engine.masterKeyIdentifier == fixture.masterKey.identifier)
        #expect(try fixture.engine.value(forKey: "k", pluginID: mail) == Data("b".utf8))
    }

    @Test func anotherEnginesRotationMakesThisOneRefuseCleanly() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("a".utf8), forKey: "k", pluginID: calendar)
        let admin = try SecretStore(vault: fixture.vault, masterKey: fixture.masterKey)
        try admin.rotateMasterKey(to: .generate())
        let before = fixture.vault.snapshot
        let error = secureStorageError { try fixture.engine.setValue(Data("b".utf8), forKey: "k", pluginID: calendar) }
        #expect(error?.code == .wrongMasterKey)
        #expect(fixture.vault.snapshot == before)
    }

    // MARK: Data key rotation

    @Test func dataKeyRotationKeepsOldValuesReadableAndSealsNewOnesWithTheNewVersion() throws {
        let fixture = try Fixture()
        let engine = fixture.engine
        try engine.setValue(Data("old".utf8), forKey: "old", pluginID: calendar)
        let rotation = try engine.rotateDataKey(pluginID: calendar)
        #expect(rotation.previousVersion == 1)
        #expect(rotation.newVersion == 2)
        #expect(rotation.reencryption == nil)
        try engine.setValue(Data("new".utf8), forKey: "new", pluginID: calendar)

        let values = fixture.vault.snapshot.values
        #expect(values[.init(pluginID: calendar, key: "old")]?.dataKeyVersion == 1)
        #expect(values[.init(pluginID: calendar, key: "new")]?.dataKeyVersion == 2)
        #expect(try engine.value(forKey: "old", pluginID: calendar) == Data("old".utf8))
        #expect(try engine.value(forKey: "new", pluginID: calendar) == Data("new".utf8))
        let keys = try engine.dataKeys(pluginID: calendar)
        #expect(keys.map(\.version) == [1, 2])
        #expect(keys.map(\.state) == [.retired, .active])
        #expect(keys[0].retiredAt != nil)
        // Rotating a plug-in with no key yet creates version 1; another plug-in is untouched.
        #expect(try engine.rotateDataKey(pluginID: mail).newVersion == 1)
        #expect(try engine.dataKeys(pluginID: calendar).count == 2)
    }

    @Test func reencryptionMovesEveryValueToTheNewestDataKey() throws {
        let fixture = try Fixture()
        let engine = fixture.engine
        for index in 0..<4 {
            try engine.setValue(Data("v\(index)".utf8), forKey: "k\(index)", pluginID: calendar)
            try engine.rotateDataKey(pluginID: calendar)
        }
        // Values on versions 1...4, active key is 5.
        let report = try engine.reencryptValues(pluginID: calendar)
        #expect(report.reencryptedValueCount == 4)
        #expect(report.unreadableKeys.isEmpty)
        for record in fixture.vault.snapshot.values.values {
            #expect(record.dataKeyVersion == 5)
        }
        for index in 0..<4 {
            #expect(try engine.value(forKey: "k\(index)", pluginID: calendar) == Data("v\(index)".utf8))
        }
        #expect(try engine.dataKeys(pluginID: calendar).last?.encryptionCount == 4)
        // Nothing left to move.
        #expect(try engine.reencryptValues(pluginID: calendar).reencryptedValueCount == 0)
    }

    @Test func rotateWithReencryptMovesValuesInOneStep() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("a".utf8), forKey: "a", pluginID: calendar)
        try fixture.engine.setValue(Data("b".utf8), forKey: "b", pluginID: calendar)
        let rotation = try fixture.engine.rotateDataKey(pluginID: calendar, reencrypt: true)
        #expect(rotation.newVersion == 2)
        #expect(rotation.reencryption?.reencryptedValueCount == 2)
        #expect(Set(fixture.vault.snapshot.values.values.map(\.dataKeyVersion)) == [2])
        #expect(try fixture.engine.value(forKey: "b", pluginID: calendar) == Data("b".utf8))
    }

    @Test func dataKeysRotateAutomaticallyAtTheThreshold() throws {
        let fixture = try Fixture(threshold: 3)
        let engine = fixture.engine
        for index in 0..<7 {
            try engine.setValue(Data("v\(index)".utf8), forKey: "k\(index)", pluginID: calendar)
        }
        let keys = try engine.dataKeys(pluginID: calendar)
        #expect(keys.map(\.version) == [1, 2, 3])
        #expect(keys.map(\.encryptionCount) == [3, 3, 1])
        #expect(keys.map(\.state) == [.retired, .retired, .active])
        let versions = (0..<7).map { fixture.vault.snapshot.values[.init(pluginID: calendar, key: "k\($0)")]!.dataKeyVersion }
        #expect(versions == [1, 1, 1, 2, 2, 2, 3])
        for index in 0..<7 {
            #expect(try engine.value(forKey: "k\(index)", pluginID: calendar) == Data("v\(index)".utf8))
        }
        // Overwriting one key many times counts too.
        for _ in 0..<5 { try engine.setValue(Data("x".utf8), forKey: "same", pluginID: mail) }
        #expect(try engine.dataKeys(pluginID: mail).map(\.encryptionCount) == [3, 2])
    }

    @Test func reencryptionRespectsTheThreshold() throws {
        let fixture = try Fixture(threshold: 3)
        let engine = fixture.engine
        for index in 0..<3 { try engine.setValue(Data("v\(index)".utf8), forKey: "k\(index)", pluginID: calendar) }
        try engine.setValue(Data("v3".utf8), forKey: "k3", pluginID: calendar)  // version 2, count 1
        let report = try engine.reencryptValues(pluginID: calendar)
        #expect(report.reencryptedValueCount == 3)
        #expect(try engine.dataKeys(pluginID: calendar).map(\.encryptionCount).allSatisfy { $0 <= 3 })
        for index in 0..<4 {
            #expect(try engine.value(forKey: "k\(index)", pluginID: calendar) == Data("v\(index)".utf8))
        }
        #expect(fixture.vault.snapshot.values.values.allSatisfy { $0.dataKeyVersion >= 2 })
    }

    // MARK: Shredding

    @Test func shreddingMakesValuesUnreadableWithAClearError() throws {
        let fixture = try Fixture()
        let engine = fixture.engine
        try engine.setValue(Data("a".utf8), forKey: "a", pluginID: calendar)
        try engine.rotateDataKey(pluginID: calendar)
        try engine.setValue(Data("b".utf8), forKey: "b", pluginID: calendar)
        try engine.setValue(Data("m".utf8), forKey: "a", pluginID: mail)

        let report = try engine.shredDataKeys(pluginID: calendar)
        #expect(report.shreddedVersions == [1, 2])
        #expect(report.unreadableValueCount == 2)
        for record in try engine.dataKeys(pluginID: calendar) {
            #expect(record.state == .shredded)
            #expect(record.wrappedKey == nil)
        }
        for key in ["a", "b"] {
            let error = secureStorageError { _ = try engine.value(forKey: key, pluginID: calendar) }
            #expect(error?.code == .keysShredded)
            #expect(error?.message.contains("shredded") == true)
            #expect(error?.message.contains("'\(key)'") == true)
        }
        #expect(try engine.keys(pluginID: calendar) == ["a", "b"])
        #expect(try engine.value(forKey: "a", pluginID: mail) == Data("m".utf8))
        // Shredding again is a no-op.
        #expect(try engine.shredDataKeys(pluginID: calendar).shreddedVersions == [])
        // Re-encryption cannot move what cannot be opened.
        #expect(try engine.reencryptValues(pluginID: calendar).unreadableKeys == ["a", "b"])
        // The namespace stays usable: a new write starts a new version, never reusing one.
        try engine.setValue(Data("fresh".utf8), forKey: "a", pluginID: calendar)
        #expect(try engine.value(forKey: "a", pluginID: calendar) == Data("fresh".utf8))
        #expect(try engine.dataKeys(pluginID: calendar).map(\.version) == [1, 2, 3])
        #expect(try engine.removeValue(forKey: "b", pluginID: calendar))
        #expect(try engine.keys(pluginID: calendar) == ["a"])
    }

    @Test func removeAllValuesKeepsDataKeys() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("a".utf8), forKey: "a", pluginID: calendar)
        try fixture.engine.setValue(Data("b".utf8), forKey: "b", pluginID: calendar)
        try fixture.engine.setValue(Data("m".utf8), forKey: "a", pluginID: mail)
        #expect(try fixture.engine.removeAllValues(pluginID: calendar) == 2)
        #expect(try fixture.engine.keys(pluginID: calendar) == [])
        #expect(try fixture.engine.keys(pluginID: mail) == ["a"])
        #expect(try fixture.engine.dataKeys(pluginID: calendar).count == 1)
    }

    // MARK: Namespaces

    @Test func aStorageReachesOnlyItsOwnPlugin() async throws {
        let fixture = try Fixture()
        let a = try fixture.engine.storage(forPlugin: calendar)
        let b = try fixture.engine.storage(forPlugin: mail)
        try await a.set(Data("calendar secret".utf8), forKey: "token")
        #expect(try await b.data(forKey: "token") == nil)
        #expect(try await b.keys() == [])
        try await b.set(Data("mail secret".utf8), forKey: "token")
        #expect(try await a.data(forKey: "token") == Data("calendar secret".utf8))
        try await b.removeValue(forKey: "token")
        #expect(try await a.keys() == ["token"])
        #expect(a.pluginID == calendar)
    }

    @Test func invalidNamespacesAreRefused() {
        for id in ["", "a\u{0}b", String(repeating: "p", count: 257)] {
            let error = secureStorageError { _ = try Fixture().engine.storage(forPlugin: id) }
            #expect(error?.code == .invalidNamespace)
            let direct = secureStorageError { _ = try Fixture().engine.keys(pluginID: id) }
            #expect(direct?.code == .invalidNamespace)
        }
    }

    // MARK: Concurrency and providers

    @Test func concurrentWritesAreAllCountedAndReadable() async throws {
        let fixture = try Fixture(threshold: 10)
        let storage = try fixture.engine.storage(forPlugin: calendar)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask { try await storage.set(Data("v\(index)".utf8), forKey: "k\(index)") }
            }
            try await group.waitForAll()
        }
        let keys = try fixture.engine.dataKeys(pluginID: calendar)
        #expect(keys.map(\.encryptionCount).reduce(0, +) == 50)
        #expect(keys.count == 5)
        for index in 0..<50 {
            #expect(try await storage.data(forKey: "k\(index)") == Data("v\(index)".utf8))
        }
    }

    @Test func openWithAKeyProvider() async throws {
        let fixture = try Fixture()
        let engine = try await SecretStore.open(vault: fixture.vault, keyProvider: StaticKeyProvider(fixture.masterKey))
        #expect(engine.masterKeyIdentifier == fixture.masterKey.identifier)
        await #expect(throws: SecureStorageError.self) {
            _ = try await SecretStore.open(vault: fixture.vault, keyProvider: StaticKeyProvider(.generate()))
        }
    }
}
