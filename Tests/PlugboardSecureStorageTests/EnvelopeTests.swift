import Crypto
import Foundation
import PlugboardPluginAPI
import PlugboardTestSupport
import Testing

@testable import PlugboardSecureStorage

@Suite("Envelope primitives", .timeLimit(.hangGuard))
struct EnvelopeTests {
    let masterKey = MasterKey.generate()
    let dataKey = DataKey.generate(pluginID: "com.example.calendar", version: 3)
    let value = Data("correct horse battery staple".utf8)

    @Test func sealedValueRoundTrips() throws {
        let sealed = Envelope.seal(value, forKey: "oauth-token", with: dataKey)
        #expect(try Envelope.open(sealed, forKey: "oauth-token", with: dataKey) == value)
        #expect(sealed.count == 1 + 12 + value.count + 16)
        #expect(sealed.first == 0x01)
        #expect(sealed.range(of: value) == nil)
    }

    @Test func emptyValueRoundTrips() throws {
        let sealed = Envelope.seal(Data(), forKey: "k", with: dataKey)
        #expect(sealed.count == 29)
        #expect(try Envelope.open(sealed, forKey: "k", with: dataKey) == Data())
    }

    @Test func everySealUsesAFreshNonce() {
        let first = Envelope.seal(value, forKey: "k", with: dataKey)
        let second = Envelope.seal(value, forKey: "k", with: dataKey)
        #expect(first != second)
        #expect(first[1..<13] != second[1..<13])
    }

    @Test func wrappedKeyRoundTrips() throws {
        let wrapped = Envelope.wrap(dataKey, under: masterKey)
        #expect(wrapped.count == Envelope.wrappedKeyByteCount)
        #expect(wrapped.first == 0x01)
        let unwrapped = try Envelope.unwrap(wrapped, pluginID: "com.example.calendar", version: 3, under: masterKey)
        #expect(unwrapped.key == dataKey.key)
        #expect(unwrapped.version == 3)
    }

    @Test func everyFlippedBitOfASealedValueIsAnIntegrityFailure() {
        let sealed = Envelope.seal(value, forKey: "oauth-token", with: dataKey)
        // Format byte, nonce (1..<13), ciphertext, tag (last 16): every bit of every byte.
        for index in 0..<sealed.count {
            for bit in 0..<8 {
                let tampered = flipping(sealed, byte: index, bit: bit)
                let error = secureStorageError { _ = try Envelope.open(tampered, forKey: "oauth-token", with: dataKey) }
                #expect(error?.code == .integrityFailure, "byte \(index) bit \(bit)")
            }
        }
    }

    @Test func truncatedOrExtendedSealedValuesAreIntegrityFailures() {
        let sealed = Envelope.seal(value, forKey: "k", with: dataKey)
        for length in 0..<sealed.count {
            let error = secureStorageError { _ = try Envelope.open(sealed.prefix(length), forKey: "k", with: dataKey) }
            #expect(error?.code == .integrityFailure, "length \(length)")
        }
        let error = secureStorageError { _ = try Envelope.open(sealed + [0], forKey: "k", with: dataKey) }
        #expect(error?.code == .integrityFailure)
    }

    @Test func everyFlippedBitOfAWrappedKeyIsAnIntegrityFailure() {
        let wrapped = Envelope.wrap(dataKey, under: masterKey)
        for index in 0..<wrapped.count {
            for bit in 0..<8 {
                let tampered = flipping(wrapped, byte: index, bit: bit)
                let error = secureStorageError {
                    _ = try Envelope.unwrap(tampered, pluginID: "com.example.calendar", version: 3, under: masterKey)
                }
                #expect(error?.code == .integrityFailure, "byte \(index) bit \(bit)")
            }
        }
        for length in 0..<wrapped.count {
            let error = secureStorageError {
                _ = try Envelope.unwrap(
                    wrapped.prefix(length), pluginID: "com.example.calendar", version: 3, under: masterKey)
            }
            #expect(error?.code == .integrityFailure, "length \(length)")
        }
    }

    @Test func aSealedValueOpensOnlyForItsKeyNamePluginAndVersion() {
        let sealed = Envelope.seal(value, forKey: "oauth-token", with: dataKey)
        // The same key bytes under another owner or version: only the associated data differs.
        let otherPlugin = DataKey(pluginID: "com.example.mail", version: 3, key: dataKey.key)
        let otherVersion = DataKey(pluginID: "com.example.calendar", version: 4, key: dataKey.key)
        let attempts: [(String, DataKey)] = [
            ("oauth-token2", dataKey), ("OAuth-token", dataKey), ("", dataKey),
            ("oauth-token", otherPlugin), ("oauth-token", otherVersion),
        ]
        for (key, opener) in attempts {
            let error = secureStorageError { _ = try Envelope.open(sealed, forKey: key, with: opener) }
            #expect(error?.code == .integrityFailure, "\(key) \(opener)")
        }
    }

    @Test func aWrappedKeyOpensOnlyForItsPluginVersionAndMasterKey() {
        let wrapped = Envelope.wrap(dataKey, under: masterKey)
        let attempts: [(String, Int, MasterKey)] = [
            ("com.example.mail", 3, masterKey), ("com.example.calendar", 2, masterKey),
            ("com.example.calendar", 0, masterKey), ("com.example.calendar", -3, masterKey),
            ("com.example.calendar", 3, MasterKey.generate()),
        ]
        for (plugin, version, key) in attempts {
            let error = secureStorageError { _ = try Envelope.unwrap(wrapped, pluginID: plugin, version: version, under: key) }
            #expect(error?.code == .integrityFailure, "\(plugin) \(version)")
        }
    }

    @Test func associatedDataIsLengthPrefixedSoFieldsCannotBeShuffled() {
        #expect(
            Envelope.valueAssociatedData(pluginID: "a|b", key: "c", dataKeyVersion: 1)
                != Envelope.valueAssociatedData(pluginID: "a", key: "b|c", dataKeyVersion: 1))
        #expect(
            Envelope.valueAssociatedData(pluginID: "ab", key: "c", dataKeyVersion: 1)
                != Envelope.valueAssociatedData(pluginID: "a", key: "bc", dataKeyVersion: 1))
        #expect(
            Envelope.valueAssociatedData(pluginID: "p", key: "k", dataKeyVersion: 1)
                != Envelope.valueAssociatedData(pluginID: "p", key: "k", dataKeyVersion: 256))
    }

    // MARK: Vectors computed independently (Python `cryptography`: HKDF, HMAC, AESGCM) from the documented formats.

    static let vectorMasterKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="  // bytes 0...31

    @Test func keyCheckValueMatchesTheIndependentVector() throws {
        let key = try MasterKey(base64Encoded: Self.vectorMasterKey)
        #expect(hex(key.keyCheckValue) == "016eacb3a3a3f97d168bb6ed6f2670869366697784e291e35e34266b10b90868c2")
        #expect(key.identifier == "6eacb3a3a3f97d16")
        #expect(key.matches(keyCheckValue: key.keyCheckValue))
        #expect(!MasterKey.generate().matches(keyCheckValue: key.keyCheckValue))
    }

    @Test func associatedDataMatchesTheIndependentVector() {
        #expect(
            hex(Envelope.dataKeyAssociatedData(pluginID: "com.example.calendar", version: 3))
                == "00000010706c7567626f6172642f64656b2f763100000014636f6d2e6578616d706c652e63616c656e646172"
                + "000000080000000000000003")
        #expect(
            hex(Envelope.valueAssociatedData(pluginID: "com.example.calendar", key: "oauth-token", dataKeyVersion: 3))
                == "00000012706c7567626f6172642f76616c75652f763100000014636f6d2e6578616d706c652e63616c656e646172"
                + "0000000b6f617574682d746f6b656e000000080000000000000003")
    }

    @Test func wrappedKeyAndSealedValueFromAnotherImplementationOpen() throws {
        let key = try MasterKey(base64Encoded: Self.vectorMasterKey)
        let wrapped = bytes(
            hex: "016465666768696a6b6c6d6e6fa56f15c395682faae135a099bc04a120b4e2348a6dd4a236b1610cad1c5b5940b922"
                + "5dd8556eb683919606c9112121be")
        let dataKey = try Envelope.unwrap(wrapped, pluginID: "com.example.calendar", version: 3, under: key)
        #expect(dataKey.key.withUnsafeBytes { Data($0) } == Data((0..<32).map { UInt8(0xA0 + $0 % 16) }))
        let sealed = bytes(hex: "01c8c9cacbcccdcecfd0d1d2d3710c500c56d514c27ea26190301be0bbc6345b05ac")
        #expect(try Envelope.open(sealed, forKey: "oauth-token", with: dataKey) == Data("t0k3n".utf8))
    }
}
