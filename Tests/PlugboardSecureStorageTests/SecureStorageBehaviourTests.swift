import Foundation
import PlugboardPluginAPI
import PlugboardTestSupport
import PlugboardTesting
import Testing

@testable import PlugboardSecureStorage

/// The implementations that must behave the same: the fake plug-in authors test with, and the real one.
enum Implementation: String, CaseIterable, CustomTestStringConvertible {
    case inMemoryFake
    case envelope

    var testDescription: String { rawValue }

    /// Two storages of two different plug-in namespaces.
    func makePair() throws -> (any SecureStorage, any SecureStorage) {
        switch self {
        case .inMemoryFake:
            return (InMemorySecureStorage(), InMemorySecureStorage())
        case .envelope:
            let engine = try SecureStorageEngine.initialize(backend: InMemorySecureStorageBackend(), masterKey: .generate())
            return (try engine.storage(forPlugin: "com.example.a"), try engine.storage(forPlugin: "com.example.b"))
        }
    }

    func make() throws -> any SecureStorage { try makePair().0 }
}

private struct Credentials: Codable, Equatable {
    var user: String
    var password: String
    var scopes: [String]
}

@Suite("SecureStorage behaviour, shared by every implementation", .timeLimit(.hangGuard))
struct SecureStorageBehaviourTests {
    @Test(arguments: Implementation.allCases)
    func aMissingKeyHasNoValue(_ implementation: Implementation) async throws {
        let storage = try implementation.make()
        #expect(try await storage.data(forKey: "missing") == nil)
        #expect(try await storage.value(String.self, forKey: "missing") == nil)
        #expect(try await storage.keys() == [])
    }

    @Test(arguments: Implementation.allCases)
    func valuesRoundTripAndOverwrite(_ implementation: Implementation) async throws {
        let storage = try implementation.make()
        try await storage.set(Data("first".utf8), forKey: "token")
        #expect(try await storage.data(forKey: "token") == Data("first".utf8))
        try await storage.set(Data("second".utf8), forKey: "token")
        #expect(try await storage.data(forKey: "token") == Data("second".utf8))
        try await storage.set(Data(), forKey: "empty")
        #expect(try await storage.data(forKey: "empty") == Data())
        let binary = Data((0...255).map { UInt8($0) })
        try await storage.set(binary, forKey: "binary")
        #expect(try await storage.data(forKey: "binary") == binary)
        #expect(try await storage.keys() == ["binary", "empty", "token"])
    }

    @Test(arguments: Implementation.allCases)
    func removingAValue(_ implementation: Implementation) async throws {
        let storage = try implementation.make()
        try await storage.set(Data("v".utf8), forKey: "a")
        try await storage.set(Data("v".utf8), forKey: "b")
        try await storage.removeValue(forKey: "a")
        #expect(try await storage.data(forKey: "a") == nil)
        #expect(try await storage.keys() == ["b"])
        try await storage.removeValue(forKey: "never-set")  // not an error
    }

    @Test(arguments: Implementation.allCases)
    func keysAreSortedByUTF8Bytes(_ implementation: Implementation) async throws {
        let storage = try implementation.make()
        for key in ["b", "é", "a", "B", "z", "a b", "日本"] {
            try await storage.set(Data(key.utf8), forKey: key)
        }
        #expect(try await storage.keys() == ["B", "a", "a b", "b", "z", "é", "日本"])
    }

    @Test(arguments: Implementation.allCases)
    func canonicallyEquivalentNamesAreOneKey(_ implementation: Implementation) async throws {
        let storage = try implementation.make()
        let decomposed = "caf\u{65}\u{301}"
        let precomposed = "caf\u{E9}"
        try await storage.set(Data("v".utf8), forKey: decomposed)
        #expect(try await storage.data(forKey: precomposed) == Data("v".utf8))
        let keys = try await storage.keys()
        #expect(keys.map { Array($0.utf8) } == [Array(precomposed.utf8)])
        try await storage.removeValue(forKey: precomposed)
        #expect(try await storage.keys() == [])
    }

    @Test(arguments: Implementation.allCases)
    func invalidKeyNamesAreRefusedEverywhere(_ implementation: Implementation) async throws {
        let storage = try implementation.make()
        let invalid = [
            "", String(repeating: "x", count: 257), String(repeating: "é", count: 129), "a\u{0}b", "line\nbreak",
            "tab\t", "\u{7F}", "\u{85}", "zero\u{200B}width", "\u{202E}evil", "\u{2028}", "\u{E000}", "\u{378}",
        ]
        for key in invalid {
            let set = await secureStorageError { try await storage.set(Data(), forKey: key) }
            #expect(set?.code == .invalidKeyName, "\(key.unicodeScalars.map(\.value))")
            let get = await secureStorageError { _ = try await storage.data(forKey: key) }
            #expect(get?.code == .invalidKeyName)
            let remove = await secureStorageError { try await storage.removeValue(forKey: key) }
            #expect(remove?.code == .invalidKeyName)
        }
        #expect(try await storage.keys() == [])
        let longest = String(repeating: "x", count: 256)
        try await storage.set(Data("ok".utf8), forKey: longest)
        try await storage.set(Data("ok".utf8), forKey: "spaces and ünïcödé are fine ✓")
        #expect(try await storage.keys().count == 2)
    }

    @Test(arguments: Implementation.allCases)
    func valuesLargerThanTheLimitAreRefused(_ implementation: Implementation) async throws {
        let storage = try implementation.make()
        let limit = SecureStorageLimits.maximumValueByteCount
        let error = await secureStorageError { try await storage.set(Data(count: limit + 1), forKey: "big") }
        #expect(error?.code == .valueTooLarge)
        try await storage.set(Data(count: limit), forKey: "big")
        #expect(try await storage.data(forKey: "big")?.count == limit)
    }

    @Test(arguments: Implementation.allCases)
    func codableValuesRoundTrip(_ implementation: Implementation) async throws {
        let storage = try implementation.make()
        let credentials = Credentials(user: "ada", password: "hunter2", scopes: ["read", "write"])
        try await storage.set(credentials, forKey: "credentials")
        #expect(try await storage.value(Credentials.self, forKey: "credentials") == credentials)
        try await storage.set(42, forKey: "answer")
        #expect(try await storage.value(Int.self, forKey: "answer") == 42)
        let error = await secureStorageError { _ = try await storage.value(Credentials.self, forKey: "answer") }
        #expect(error?.code == .decodingFailed)
    }

    @Test(arguments: Implementation.allCases)
    func namespacesAreIsolated(_ implementation: Implementation) async throws {
        let (a, b) = try implementation.makePair()
        try await a.set(Data("a".utf8), forKey: "shared-name")
        #expect(try await b.data(forKey: "shared-name") == nil)
        try await b.set(Data("b".utf8), forKey: "shared-name")
        #expect(try await a.data(forKey: "shared-name") == Data("a".utf8))
        try await a.removeValue(forKey: "shared-name")
        #expect(try await b.keys() == ["shared-name"])
    }
}

@Suite("InMemorySecureStorage extras", .timeLimit(.hangGuard))
struct InMemorySecureStorageTests {
    @Test func injectedFailuresAreThrownThenCleared() async throws {
        let storage = InMemorySecureStorage(["seed": Data("s".utf8)])
        storage.failNextOperations(with: SecureStorageError(.unavailable, "The KMS is down."), count: 2)
        #expect(await secureStorageError { try await storage.set(Data(), forKey: "k") }?.code == .unavailable)
        #expect(await secureStorageError { _ = try await storage.keys() }?.code == .unavailable)
        #expect(try await storage.keys() == ["seed"])
        #expect(storage.storedValues == ["seed": Data("s".utf8)])
    }
}

@Suite("Key name rules", .timeLimit(.hangGuard))
struct KeyNameTests {
    @Test func namesAreNormalisedToNFC() throws {
        let name = try SecureStorageLimits.validatedKeyName("e\u{301}")
        #expect(Array(name.utf8) == [0xC3, 0xA9])
    }

    /// Names of printable ASCII take a path of their own (no normalisation); every other ASCII character is refused
    /// there as it is on the general path.
    @Test func everyASCIICharacterIsAllowedExactlyWhenPrintable() throws {
        for byte in UInt8(0)...UInt8(127) {
            let name = "a" + String(UnicodeScalar(byte)) + "b"
            let accepted = (try? SecureStorageLimits.validatedKeyName(name)) != nil
            #expect(accepted == (0x20...0x7E).contains(byte), "\(byte)")
            #expect(((try? SecureStorageLimits.validatedNamespace(name)) != nil) == accepted, "\(byte)")
        }
        #expect(try SecureStorageLimits.validatedKeyName(String(repeating: "k", count: 256)).utf8.count == 256)
        #expect(throws: SecureStorageError.self) { try SecureStorageLimits.validatedNamespace(String(repeating: "k", count: 257)) }
    }

    @Test func theLengthLimitCountsUTF8BytesAfterNormalisation() throws {
        // 128 decomposed "é" are 384 bytes, but 256 once composed.
        let name = String(repeating: "e\u{301}", count: 128)
        #expect(try SecureStorageLimits.validatedKeyName(name).utf8.count == 256)
        #expect(throws: SecureStorageError.self) {
            try SecureStorageLimits.validatedKeyName(name + "x")
        }
    }

    @Test func errorsNameTheProblemWithoutPrintingControlCharacters() {
        let error = secureStorageError { _ = try SecureStorageLimits.validatedKeyName("bad\u{1B}[31m") }
        #expect(error?.message.contains("U+001B") == true)
        #expect(error?.message.contains("\u{1B}") == false)
    }

    @Test func errorCodesCompareAndDescribe() {
        let error = SecureStorageError(.wrongMasterKey, "message")
        #expect(error.code == .wrongMasterKey)
        #expect(error.code != .integrityFailure)
        #expect(error.code.description == "wrongMasterKey")
        #expect(error.description == "message")
        switch error.code {
        case .wrongMasterKey: break
        default: Issue.record("pattern matching on codes")
        }
    }
}
