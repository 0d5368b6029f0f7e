import Crypto
import Foundation
import PlugboardPluginAPI
import PlugboardStore
import PlugboardTestSupport
import PlugboardTesting
import Testing

@testable import PlugboardSecureStorage

/// Every way Swift can print a value.
func renderings(of value: Any) -> [String] {
    var dumped = ""
    dump(value, to: &dumped)
    return [String(describing: value), String(reflecting: value), "\(value)", dumped]
}

/// The forms in which key bytes could leak: base64, lowercase and uppercase hex, the raw byte list.
func leakForms(of bytes: Data) -> [String] {
    [
        bytes.base64EncodedString(), String(bytes.base64EncodedString().prefix(12)),
        hex(bytes), String(hex(bytes).prefix(12)), hex(bytes).uppercased(),
        bytes.map(String.init).joined(separator: ", "),
    ]
}

@Suite("No secret in descriptions, dumps or errors", .timeLimit(.hangGuard))
struct RedactionTests {
    @Test func masterKeysAreRedacted() throws {
        let key = MasterKey.generate()
        let raw = key.withUnsafeBytes { Data($0) }
        let engine = try Fixture().engine
        for subject in [key, StaticKeyProvider(key), engine] as [Any] {
            for rendering in renderings(of: subject) {
                for leak in leakForms(of: raw) {
                    #expect(!rendering.contains(leak), "\(rendering)")
                }
            }
        }
        #expect(key.description == "MasterKey(<redacted>, id: \(key.identifier))")
        #expect(Mirror(reflecting: key).children.isEmpty)
    }

    @Test func dataKeysAreRedacted() {
        let dataKey = DataKey.generate(pluginID: "com.example.calendar", version: 2)
        let raw = dataKey.key.withUnsafeBytes { Data($0) }
        for rendering in renderings(of: dataKey) {
            #expect(rendering.contains("redacted") || rendering.contains("pluginID"))
            for leak in leakForms(of: raw) {
                #expect(!rendering.contains(leak), "\(rendering)")
            }
        }
    }

    @Test func theEnvironmentProviderNeverShowsTheValue() {
        let encoded = MasterKey.generate().withUnsafeBytes { Data($0).base64EncodedString() }
        let provider = EnvironmentKeyProvider(environment: ["PLUGBOARD_MASTER_KEY": encoded])
        for rendering in renderings(of: provider) + renderings(of: DefaultKeyProvider(boardPath: "/b", environment: provider)) {
            #expect(!rendering.contains(encoded))
            #expect(!rendering.contains(String(encoded.prefix(10))))
        }
    }

    @Test func storagesDoNotDumpValues() async throws {
        let secret = "SUPER-SECRET-VALUE-1234"
        let fake = InMemorySecureStorage()
        try await fake.set(Data(secret.utf8), forKey: "k")
        let real = try Fixture().engine.storage(forPlugin: "p")
        try await real.set(Data(secret.utf8), forKey: "k")
        for subject in [fake, real] as [Any] {
            for rendering in renderings(of: subject) {
                #expect(!rendering.contains(secret), "\(rendering)")
                #expect(!rendering.contains(hex(Data(secret.utf8)).prefix(12)), "\(rendering)")
            }
        }
    }

    @Test func errorsNeverContainValues() async throws {
        let secret = "SUPER-SECRET-VALUE-1234"
        let fixture = try Fixture()
        let storage = try fixture.engine.storage(forPlugin: "p")
        var errors: [SecureStorageError] = []

        try await storage.set(["password": secret], forKey: "json")
        if let error = await secureStorageError({ _ = try await storage.value(Int.self, forKey: "json") }) {
            #expect(error.code == .decodingFailed)
            errors.append(error)
        }
        try await storage.set(Data(secret.utf8), forKey: "raw")
        fixture.backend.modify { $0.values[.init(pluginID: "p", key: "raw")]!.sealedBox[20] ^= 1 }
        if let error = await secureStorageError({ _ = try await storage.data(forKey: "raw") }) {
            #expect(error.code == .integrityFailure)
            errors.append(error)
        }
        try fixture.engine.shredDataKeys(pluginID: "p")
        if let error = await secureStorageError({ _ = try await storage.data(forKey: "json") }) {
            #expect(error.code == .keysShredded)
            errors.append(error)
        }
        if let error = await secureStorageError({
            try await storage.set(Data(repeating: 0x41, count: SecureStorageLimits.maximumValueByteCount + 1), forKey: "big")
        }) {
            #expect(error.code == .valueTooLarge)
            errors.append(error)
        }
        #expect(errors.count == 4)
        for error in errors {
            for rendering in renderings(of: error) {
                #expect(!rendering.contains(secret), "\(rendering)")
                #expect(!rendering.contains("AAAAAAAA"), "\(rendering)")
            }
        }
    }

    @Test func anEncodingFailureDoesNotQuoteTheValue() async throws {
        struct Unencodable: Encodable {
            let secret = "SUPER-SECRET-VALUE-1234"
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(secret, .init(codingPath: [], debugDescription: "bad \(secret)"))
            }
        }
        let error = await secureStorageError { try await InMemorySecureStorage().set(Unencodable(), forKey: "k") }
        #expect(error?.code == .encodingFailed)
        #expect(error?.message.contains("SUPER-SECRET") == false)
    }
}
