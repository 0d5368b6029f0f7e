import Foundation
import PlugboardPluginAPI
import PlugboardTestSupport
import Testing

@testable import PlugboardSecureStorage

@Suite("Key providers", .timeLimit(.hangGuard))
struct KeyProviderTests {
    // MARK: Key file

    @Test func createMakesA0600FileThatLoadsTheSameKey() throws {
        let directory = try TemporaryDirectory()
        let path = KeyFileProvider.keyFilePath(forBoardAt: directory.file("board.sqlite"))
        #expect(path.hasSuffix("/board.sqlite.key"))
        let key = try KeyFileProvider.create(at: path)
        #expect(try permissions(of: path) == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        #expect(Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines))?.count == 32)
        #expect(try KeyFileProvider(boardPath: directory.file("board.sqlite")).loadMasterKey() == key)
    }

    @Test func createNeverOverwritesAnExistingFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("board.sqlite.key")
        let key = try KeyFileProvider.create(at: path)
        let error = keyProviderError { try KeyFileProvider.create(at: path) }
        #expect(error?.code == .alreadyExists)
        #expect(try KeyFileProvider(path: path).loadMasterKey() == key)
        // Nor does it follow a link planted at the path.
        let link = directory.file("link.key")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.file("target"))
        #expect(keyProviderError { try KeyFileProvider.create(at: link) }?.code == .alreadyExists)
        #expect(!FileManager.default.fileExists(atPath: directory.file("target")))
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o620, 0o602, 0o610, 0o601, 0o666])
    func aKeyFileOthersCanReachIsRefused(mode: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("board.sqlite.key")
        try KeyFileProvider.create(at: path)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        let error = keyProviderError { _ = try KeyFileProvider(path: path).loadMasterKey() }
        #expect(error?.code == .insecurePermissions)
        #expect(error?.path == path)
        #expect(error?.message.contains("chmod 600 \(path)") == true)
        #expect(error?.message.contains(String(mode, radix: 8)) == true)
    }

    @Test(arguments: [0o600, 0o400, 0o700])
    func ownerOnlyModesAreAccepted(mode: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("board.sqlite.key")
        let key = try KeyFileProvider.create(at: path)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        #expect(try KeyFileProvider(path: path).loadMasterKey() == key)
    }

    @Test func malformedKeyFilesAreRefusedWithoutQuotingThem() throws {
        let directory = try TemporaryDirectory()
        let short = Data((0..<16).map { UInt8($0 + 65) }).base64EncodedString()
        let long = Data(repeating: 7, count: 33).base64EncodedString()
        let cases: [(String, String)] = [
            (short, "16 bytes"), (long, "33 bytes"), ("this is not base64!!", "not valid base64"),
            ("", "empty"), ("\n\n", "empty"),
        ]
        for (index, (content, fragment)) in cases.enumerated() {
            let path = directory.file("bad\(index).key")
            try writeFile(content, to: path, mode: 0o600)
            let error = keyProviderError { _ = try KeyFileProvider(path: path).loadMasterKey() }
            #expect(error?.code == .malformed, "\(fragment)")
            #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
            #expect(error?.message.contains(path) == true)
            if !content.isEmpty, content.trimmingCharacters(in: .whitespacesAndNewlines) != "" {
                #expect(error?.message.contains(content) == false)
            }
        }
    }

    @Test func surroundingWhiteSpaceIsIgnored() throws {
        let directory = try TemporaryDirectory()
        let key = MasterKey.generate()
        let encoded = key.withUnsafeBytes { Data($0).base64EncodedString() }
        let path = directory.file("spaced.key")
        try writeFile("  \(encoded)\r\n\n", to: path, mode: 0o600)
        #expect(try KeyFileProvider(path: path).loadMasterKey() == key)
    }

    @Test func aMissingFileDirectoryOrHugeFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        let missing = keyProviderError { _ = try KeyFileProvider(path: directory.file("none.key")).loadMasterKey() }
        #expect(missing?.code == .notFound)
        #expect(missing?.message.contains("plugboard init") == true)

        let folder = directory.file("folder.key")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder)
        #expect(keyProviderError { _ = try KeyFileProvider(path: folder).loadMasterKey() }?.code == .notRegularFile)

        let huge = directory.file("huge.key")
        try writeFile(String(repeating: "A", count: 10_000), to: huge, mode: 0o600)
        #expect(keyProviderError { _ = try KeyFileProvider(path: huge).loadMasterKey() }?.code == .malformed)
    }

    @Test func symbolicLinksAreRefusedUnlessAllowed() throws {
        let directory = try TemporaryDirectory()
        let target = directory.file("real.key")
        let key = try KeyFileProvider.create(at: target)
        let link = directory.file("board.sqlite.key")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let error = keyProviderError { _ = try KeyFileProvider(path: link).loadMasterKey() }
        #expect(error?.code == .symbolicLink)
        #expect(error?.message.contains(link) == true)
        #expect(try KeyFileProvider(path: link, allowsSymbolicLink: true).loadMasterKey() == key)
        // When allowed, the target's permissions are still checked.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target)
        let loose = keyProviderError { _ = try KeyFileProvider(path: link, allowsSymbolicLink: true).loadMasterKey() }
        #expect(loose?.code == .insecurePermissions)
    }

    @Test func replaceSwapsTheKeyAtomically() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("board.sqlite.key")
        try KeyFileProvider.create(at: path)
        let next = MasterKey.generate()
        try KeyFileProvider.replace(at: path, with: next)
        #expect(try KeyFileProvider(path: path).loadMasterKey() == next)
        #expect(try permissions(of: path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["board.sqlite.key"])
    }

    @Test func theAsyncRequirementReadsTheFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.key")
        let key = try KeyFileProvider.create(at: path)
        let provider: any KeyProvider = KeyFileProvider(path: path)
        #expect(try await provider.masterKey() == key)
    }

    // MARK: Environment

    @Test func theEnvironmentProviderReadsBase64Of32Bytes() throws {
        let key = MasterKey.generate()
        let encoded = key.withUnsafeBytes { Data($0).base64EncodedString() }
        let provider = EnvironmentKeyProvider(environment: ["PLUGBOARD_MASTER_KEY": encoded + "\n"])
        #expect(provider.isSet)
        #expect(try provider.loadMasterKey() == key)
        #expect(provider.variableName == "PLUGBOARD_MASTER_KEY")
    }

    @Test func environmentErrorsNeverContainTheValue() throws {
        let almost = Data(repeating: 0x5A, count: 32).base64EncodedString()
        let values: [String] = [
            Data(repeating: 0x5A, count: 16).base64EncodedString(),  // too short
            Data(repeating: 0x5A, count: 48).base64EncodedString(),  // too long
            "s3cr3t-but-not-base64!",
            String(almost.prefix(almost.count - 4)) + "%%%%",
        ]
        for value in values {
            let provider = EnvironmentKeyProvider(environment: ["PLUGBOARD_MASTER_KEY": value])
            let error = keyProviderError { _ = try provider.loadMasterKey() }
            #expect(error?.code == .malformed)
            #expect(error?.message.contains("PLUGBOARD_MASTER_KEY") == true)
            for rendering in [error?.message, error.map { "\($0)" }, error.map { String(reflecting: $0) }] {
                #expect(rendering?.contains(value) == false)
                #expect(rendering?.contains(String(value.prefix(8))) == false)
            }
        }
        let empty = keyProviderError { _ = try EnvironmentKeyProvider(environment: ["PLUGBOARD_MASTER_KEY": ""]).loadMasterKey() }
        #expect(empty?.code == .malformed)
        #expect(empty?.message.contains("empty") == true)
        let unset = keyProviderError { _ = try EnvironmentKeyProvider(environment: [:]).loadMasterKey() }
        #expect(unset?.code == .notFound)
    }

    /// Reads the real process environment without changing it (`setenv` would race with other tests' `getenv`).
    @Test func theEnvironmentProviderReadsTheProcessEnvironment() throws {
        let unset = EnvironmentKeyProvider(variableName: "PLUGBOARD_TEST_UNSET_\(UUID().uuidString.prefix(8))")
        #expect(!unset.isSet)
        #expect(keyProviderError { _ = try unset.loadMasterKey() }?.code == .notFound)
        // PATH is set, and is not a key: refused, and its value is not echoed.
        let path = try #require(ProcessInfo.processInfo.environment["PATH"])
        let notAKey = EnvironmentKeyProvider(variableName: "PATH")
        #expect(notAKey.isSet)
        let error = keyProviderError { _ = try notAKey.loadMasterKey() }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains(path) == false)
    }

    // MARK: Default and static

    @Test func theDefaultProviderPrefersTheEnvironmentThenTheKeyFile() throws {
        let directory = try TemporaryDirectory()
        let board = directory.file("board.sqlite")
        let fileKey = try KeyFileProvider.create(at: KeyFileProvider.keyFilePath(forBoardAt: board))
        let envKey = MasterKey.generate()
        let encoded = envKey.withUnsafeBytes { Data($0).base64EncodedString() }

        let fromFile = DefaultKeyProvider(boardPath: board, environment: EnvironmentKeyProvider(environment: [:]))
        #expect(try fromFile.loadMasterKey() == fileKey)
        let fromEnvironment = DefaultKeyProvider(
            boardPath: board, environment: EnvironmentKeyProvider(environment: ["PLUGBOARD_MASTER_KEY": encoded]))
        #expect(try fromEnvironment.loadMasterKey() == envKey)
        // A malformed variable is an error, never a silent fall back to the file.
        let broken = DefaultKeyProvider(
            boardPath: board, environment: EnvironmentKeyProvider(environment: ["PLUGBOARD_MASTER_KEY": ""]))
        #expect(keyProviderError { _ = try broken.loadMasterKey() }?.code == .malformed)
    }

    @Test func theStaticProviderReturnsItsKey() async throws {
        let key = MasterKey.generate()
        #expect(try await StaticKeyProvider(key).masterKey() == key)
    }

    // MARK: Master key values

    @Test func masterKeysMustBe32Bytes() {
        for count in [0, 16, 31, 33, 64] {
            let error = keyProviderError { _ = try MasterKey(bytes: Data(repeating: 1, count: count)) }
            #expect(error?.code == .malformed, "\(count)")
        }
        #expect(throws: Never.self) { _ = try MasterKey(bytes: Data(repeating: 1, count: 32)) }
    }

    @Test func identifiersTellKeysApart() throws {
        let a = MasterKey.generate()
        let b = MasterKey.generate()
        #expect(a.identifier.count == 16)
        #expect(a.identifier != b.identifier)
        #expect(a != b)
        #expect(try MasterKey(bytes: a.withUnsafeBytes { Data($0) }) == a)
        #expect(MasterKey.identifier(ofKeyCheckValue: a.keyCheckValue) == a.identifier)
        #expect(MasterKey.identifier(ofKeyCheckValue: Data([1, 2, 3])) == nil)
    }
}
