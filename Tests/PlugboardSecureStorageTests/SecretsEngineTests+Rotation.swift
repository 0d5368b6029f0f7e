import Foundation
import PlugboardPluginAPI
import PlugboardStore
import Testing

@testable import PlugboardSecureStorage

/// Rotation, re-encryption, shredding, isolation and concurrent writes.
extension SecretsEngineTests {
    @Test func aFailedMasterKeyRotationChangesNothing() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("a".utf8), forKey: "k", pluginID: calendar)
        try fixture.engine.setValue(Data("b".utf8), forKey: "k", pluginID: mail)
        let before = fixture.backend.snapshot
        fixture.backend.failNext(.updateDataKey, after: 1)  // the second rewrap fails
        let error = secureStorageError { try fixture.engine.rotateMasterKey(to: .generate()) }
        #expect(error?.code == .unavailable)
        #expect(fixture.backend.snapshot == before)
        #expect(fixture.engine.masterKeyIdentifier == fixture.masterKey.identifier)
        #expect(try fixture.engine.value(forKey: "k", pluginID: mail) == Data("b".utf8))
    }

    @Test func anotherEnginesRotationMakesThisOneRefuseCleanly() throws {
        let fixture = try Fixture()
        try fixture.engine.setValue(Data("a".utf8), forKey: "k", pluginID: calendar)
        let admin = try SecureStorageEngine(backend: fixture.backend, masterKey: fixture.masterKey)
        try admin.rotateMasterKey(to: .generate())
        let before = fixture.backend.snapshot
        let error = secureStorageError { try fixture.engine.setValue(Data("b".utf8), forKey: "k", pluginID: calendar) }
        #expect(error?.code == .wrongMasterKey)
        #expect(fixture.backend.snapshot == before)
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

        let values = fixture.backend.snapshot.values
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
        for record in fixture.backend.snapshot.values.values {
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
        #expect(Set(fixture.backend.snapshot.values.values.map(\.dataKeyVersion)) == [2])
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
        let versions = (0..<7).map { fixture.backend.snapshot.values[.init(pluginID: calendar, key: "k\($0)")]!.dataKeyVersion }
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
        #expect(fixture.backend.snapshot.values.values.allSatisfy { $0.dataKeyVersion >= 2 })
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
        let engine = try await SecureStorageEngine.open(backend: fixture.backend, keyProvider: StaticKeyProvider(fixture.masterKey))
        #expect(engine.masterKeyIdentifier == fixture.masterKey.identifier)
        await #expect(throws: SecureStorageError.self) {
            _ = try await SecureStorageEngine.open(backend: fixture.backend, keyProvider: StaticKeyProvider(.generate()))
        }
    }
}
