import Foundation
import PlugboardModel
import PlugboardPluginAPI
import PlugboardTestSupport
import Synchronization
import Testing

@testable import PlugboardBoardSecureStorage
@testable import PlugboardSecureStorage
@testable import PlugboardStore

/// Master key files, rotation, shredding, isolation between plug-ins, audit rows and permissions.
extension BoardSecretsTests {
    @Test func initialisationCreatesAPrivateKeyFileAndIsIdempotent() throws {
        let fixture = try BoardFixture()
        #expect(try permissions(of: fixture.keyFile) == 0o600)
        #expect(try permissions(of: fixture.path) & 0o077 == 0)
        if FileManager.default.fileExists(atPath: fixture.path + "-wal") {
            #expect(try permissions(of: fixture.path + "-wal") & 0o077 == 0)
        }
        #expect(try KeyFileProvider(path: fixture.keyFile).loadMasterKey().identifier == fixture.secrets.masterKeyIdentifier)
        #expect(try fixture.board.masterKeyIdentifier() == fixture.secrets.masterKeyIdentifier)
        let inits = try fixture.board.auditRecords(AuditQuery()).filter { $0.action == "keys.init" }
        #expect(inits.count == 1)
        #expect(inits.first?.afterJSON == "{\"key_id\":\"\(fixture.secrets.masterKeyIdentifier)\",\"source\":\"key_file\"}")

        let before = try fixture.state()
        let again = try BoardSecureStorage.initialize(board: fixture.board, by: fixture.admin, environment: BoardFixture.noEnvironment)
        #expect(again.setup.changed == false)
        #expect(try fixture.state() == before)
    }

    @Test func aKeyFileReadableByOthersIsRefused() throws {
        let fixture = try BoardFixture()
        chmod(fixture.keyFile, 0o644)
        let error = boardError { _ = try BoardSecureStorage.open(board: fixture.board, environment: BoardFixture.noEnvironment) }
        #expect(error?.code == .masterKey)
        #expect(error?.message.contains("run chmod 600 \(fixture.keyFile)") == true, "\(String(describing: error))")
    }

    @Test func aMissingKeyFileSaysToRestoreIt() throws {
        let fixture = try BoardFixture()
        try FileManager.default.removeItem(atPath: fixture.keyFile)
        let error = boardError { _ = try BoardSecureStorage.open(board: fixture.board, environment: BoardFixture.noEnvironment) }
        #expect(error?.message.contains("restore the key file from your backup") == true)
        #expect(error?.message.contains(fixture.secrets.masterKeyIdentifier) == true)
    }

    @Test func aFailedInitialisationRemovesTheKeyFileItCreated() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("board.sqlite")
        let board = try Board.create(at: path, by: try Principal(osUser: "tester"))
        let before = try BoardSQL(board.path).int("SELECT count(*) FROM secret_master_key")
        #expect(before == 0)
        let error = boardError {
            _ = try BoardSecureStorage.initialize(
                board: board, by: try Principal(osUser: "mallory"), environment: BoardFixture.noEnvironment)
        }
        #expect(error?.code == .notAllowed)
        #expect(!FileManager.default.fileExists(atPath: path + ".key"))
        let setup = try BoardSecureStorage.initialize(
            board: board, by: try Principal(osUser: "tester"), environment: BoardFixture.noEnvironment
        )
        .setup
        #expect(setup.changed && setup.createdKeyFile)
        #expect(try permissions(of: path + ".key") == 0o600)
    }

    @Test func theEnvironmentKeyIsUsedWithoutAKeyFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("board.sqlite")
        let key = MasterKey.generate()
        let env = EnvironmentKeyProvider(environment: ["PLUGBOARD_MASTER_KEY": key.withUnsafeBytes { Data($0).base64EncodedString() }])
        let actor = try Principal(osUser: "tester")
        let board = try Board.create(at: path, by: actor)
        let setup = try BoardSecureStorage.initialize(board: board, by: actor, environment: env).setup
        #expect(setup.source == .environment(variable: "PLUGBOARD_MASTER_KEY"))
        #expect(setup.keyID == key.identifier && !setup.createdKeyFile)
        #expect(!FileManager.default.fileExists(atPath: path + ".key"))
        #expect(try BoardSecureStorage.open(board: board, environment: env).masterKeyIdentifier == key.identifier)
        // Master rotation cannot write the variable: only the key file procedure refuses.
        let secrets = try BoardSecureStorage.open(board: board, environment: env)
        #expect(boardError { _ = try secrets.rotateMasterKeyFile(by: actor) }?.message.contains("PLUGBOARD_MASTER_KEY") == true)
    }

    // MARK: Rotation and shredding

    @Test func rotationsKeepEveryValueReadable() throws {
        let fixture = try BoardFixture()
        let values = [(calendar, "a", "1"), (calendar, "b", "2"), (mail, "a", "3")]
        func checkAll(_ secrets: BoardSecureStorage, sourceLocation: SourceLocation = #_sourceLocation) throws {
            for (plugin, key, value) in values {
                #expect(
                    try secrets.secret(forKey: key, pluginID: plugin, by: fixture.admin) == Data(value.utf8),
                    sourceLocation: sourceLocation)
            }
        }
        for (plugin, key, value) in values {
            _ = try fixture.secrets.setSecret(Data(value.utf8), forKey: key, pluginID: plugin, by: fixture.admin)
        }

        // Master key, given by the caller.
        let oldKey = try KeyFileProvider(path: fixture.keyFile).loadMasterKey()
        let newKey = MasterKey.generate()
        let rotated = try fixture.secrets.rotateMasterKey(to: newKey, by: fixture.admin)
        #expect(rotated.message.contains("rewrapped 2 data key(s)"))
        try checkAll(fixture.secrets)
        try checkAll(try BoardSecureStorage(board: fixture.board, masterKey: newKey))
        #expect(boardError { _ = try BoardSecureStorage(board: fixture.board, masterKey: oldKey) }?.code == .masterKey)

        // Master key kept in the key file: .next, transaction, rename.
        try KeyFileProvider.replace(at: fixture.keyFile, with: newKey)
        let fromFile = try BoardSecureStorage.open(board: fixture.board, environment: BoardFixture.noEnvironment)
        _ = try fromFile.rotateMasterKeyFile(by: fixture.admin)
        #expect(!FileManager.default.fileExists(atPath: fixture.keyFile + ".next"))
        #expect(try permissions(of: fixture.keyFile) == 0o600)
        let reopened = try BoardSecureStorage.open(board: fixture.board, environment: BoardFixture.noEnvironment)
        #expect(reopened.masterKeyIdentifier != newKey.identifier)
        try checkAll(fromFile)
        try checkAll(reopened)

        // Data keys: a new version seals new values, old versions still open old ones; --reencrypt moves them.
        let rotation = try reopened.rotateDataKey(pluginID: calendar, by: fixture.admin)
        #expect(rotation.message.contains("version 2 seals new values"))
        _ = try reopened.setSecret(Data("4".utf8), forKey: "c", pluginID: calendar, by: fixture.admin)
        try checkAll(reopened)
        #expect(try fixture.board.secretEntries(pluginID: calendar).map(\.dataKeyVersion) == [1, 1, 2])
        _ = try reopened.rotateDataKey(pluginID: calendar, reencrypt: true, by: fixture.admin)
        #expect(try fixture.board.secretEntries(pluginID: calendar).map(\.dataKeyVersion) == [3, 3, 3])
        try checkAll(reopened)
        #expect(try reopened.secret(forKey: "c", pluginID: calendar, by: fixture.admin) == Data("4".utf8))

        let actions = try fixture.board.auditRecords(AuditQuery()).map(\.action)
        #expect(actions.filter { $0 == "keys.rotate_master" }.count == 2)
        #expect(actions.filter { $0 == "keys.rotate_data_key" }.count == 2)
        #expect(try fixture.board.verifyAudit().ok)
    }

    @Test func anInterruptedKeyFileRotationSaysWhereTheKeyIs() throws {
        let fixture = try BoardFixture()
        // Steps 1 and 2 of the rotation, then a "crash" before the rename.
        let newKey = MasterKey.generate()
        try KeyFileProvider.write(newKey, to: fixture.keyFile + ".next")
        _ = try fixture.secrets.rotateMasterKey(to: newKey, by: fixture.admin)
        let error = boardError { _ = try BoardSecureStorage.open(board: fixture.board, environment: BoardFixture.noEnvironment) }
        #expect(error?.message.contains("run mv \(fixture.keyFile).next \(fixture.keyFile)") == true, "\(String(describing: error))")
        // A leftover .next that the board does not use blocks the next rotation until removed.
        try KeyFileProvider.move(fixture.keyFile + ".next", to: fixture.keyFile)
        let secrets = try BoardSecureStorage.open(board: fixture.board, environment: BoardFixture.noEnvironment)
        try KeyFileProvider.write(MasterKey.generate(), to: fixture.keyFile + ".next")
        let before = try fixture.state()
        #expect(boardError { _ = try secrets.rotateMasterKeyFile(by: fixture.admin) }?.code == .conflict)
        #expect(try fixture.state() == before)
    }

    @Test func shreddingMakesValuesUnreadableWithAClearError() async throws {
        let fixture = try BoardFixture()
        _ = try fixture.secrets.setSecret(Data("v1".utf8), forKey: "a", pluginID: calendar, by: fixture.admin)
        _ = try fixture.secrets.rotateDataKey(pluginID: calendar, by: fixture.admin)
        _ = try fixture.secrets.setSecret(Data("v2".utf8), forKey: "b", pluginID: calendar, by: fixture.admin)
        _ = try fixture.secrets.setSecret(Data("m".utf8), forKey: "a", pluginID: mail, by: fixture.admin)
        let result = try fixture.secrets.shredDataKeys(pluginID: calendar, reason: "plug-in retired", by: fixture.admin)
        #expect(result.changed && result.message.contains("version(s) 1, 2"))
        // The WAL was checkpointed away, so the erased wrapped keys do not linger there.
        #expect((fixture.files()[fixture.path + "-wal"]?.count ?? 0) == 0)

        for key in ["a", "b"] {
            let error = boardError { _ = try fixture.secrets.secret(forKey: key, pluginID: calendar, by: fixture.admin) }
            #expect(error?.code == .conflict)
            #expect(
                error?.message
                    == "the secret '\(key)' of \(calendar) can no longer be decrypted because its data key was shredded; delete it (plugboard secret delete) or set it again"
            )
        }
        let spiError = await secureStorageError { _ = try await fixture.secrets.storage(forPlugin: calendar).data(forKey: "a") }
        #expect(spiError?.code == .keysShredded)
        #expect(try fixture.board.secretEntries(pluginID: calendar).map(\.readable) == [false, false])
        // The wrapped keys are gone from the board.
        let wrapped = try await fixture.attacker().int(
            "SELECT count(*) FROM secret_data_keys WHERE plugin_id = ? AND wrapped_key IS NOT NULL", .text(calendar))
        #expect(wrapped == 0)
        // Other plug-ins are untouched; the shredded plug-in can start again with a new data key.
        #expect(try fixture.secrets.secret(forKey: "a", pluginID: mail, by: fixture.admin) == Data("m".utf8))
        _ = try fixture.secrets.setSecret(Data("new".utf8), forKey: "a", pluginID: calendar, by: fixture.admin)
        #expect(try fixture.secrets.secret(forKey: "a", pluginID: calendar, by: fixture.admin) == Data("new".utf8))
        #expect(try fixture.board.dataKeyEntries(pluginID: calendar).map(\.state) == ["shredded", "shredded", "active"])
        // Shredding again with no live key changes nothing.
        _ = try fixture.secrets.shredDataKeys(pluginID: calendar, by: fixture.admin)
        let before = try fixture.state()
        #expect(try fixture.secrets.shredDataKeys(pluginID: calendar, by: fixture.admin).changed == false)
        #expect(try fixture.state() == before)

        let shred = try #require(try fixture.board.auditRecords(AuditQuery()).first { $0.action == "keys.shred" })
        #expect(shred.reason == "plug-in retired")
        #expect(shred.afterJSON == "{\"live_versions\":[],\"shredded_versions\":[1,2],\"unreadable_values\":2}")
    }

    // MARK: Namespaces

    @Test func onePluginCannotReadAnothersValuesThroughTheSPI() async throws {
        let fixture = try BoardFixture()
        let calendarStorage = try fixture.secrets.storage(forPlugin: calendar)
        let mailStorage = try fixture.secrets.storage(forPlugin: mail)
        try await calendarStorage.set(Data("calendar secret".utf8), forKey: "token")
        try await calendarStorage.set(Data("x".utf8), forKey: "\(mail)/token")
        #expect(try await mailStorage.data(forKey: "token") == nil)
        #expect(try await mailStorage.keys().isEmpty)
        #expect(try await calendarStorage.keys() == ["com.example.mail/token", "token"])
        try await mailStorage.removeValue(forKey: "token")
        #expect(try await calendarStorage.data(forKey: "token") == Data("calendar secret".utf8))
        // The SPI's writes are recorded as `secret.write` rows that name the plug-in and the keys, never a value, so
        // that the audit log proves the sealed rows too.
        let writes = try fixture.board.auditRecords(AuditQuery()).filter { $0.action == "secret.write" }
        #expect(writes.filter { $0.targetID == calendar }.count == 2)
        #expect(writes.allSatisfy { !($0.afterJSON ?? "").contains("calendar secret") })
        #expect(writes.first?.afterJSON?.contains("\"token\"") == true)
        #expect(try fixture.board.verifyAudit().ok)

        #expect(boardError { _ = try fixture.secrets.storage(forPlugin: "com.example.unknown") }?.code == .notFound)
        #expect(boardError { _ = try fixture.secrets.storage(forPlugin: "Not An Id") }?.code == .invalidInput)
    }

    @Test func aReadOnlyBoardGivesAClearErrorOnWrite() async throws {
        let fixture = try BoardFixture()
        let readOnly = try Board.open(at: fixture.path, readOnly: true)
        let secrets = try BoardSecureStorage.open(board: readOnly, environment: BoardFixture.noEnvironment)
        let error = await secureStorageError { try await secrets.storage(forPlugin: calendar).set(Data("v".utf8), forKey: "k") }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("read-only") == true)
    }

    // MARK: Audit and permissions

    @Test func eachChangeAndItsAuditRowAreOneTransaction() throws {
        let fixture = try BoardFixture()
        _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: calendar, by: fixture.admin)
        // Make the audit append fail: the change it belongs to must not be kept.
        try fixture.attacker().execute(
            "CREATE TRIGGER audit_fails BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit unavailable'); END")
        let before = try fixture.state()
        let changes: [(String, () throws -> Void)] = [
            ("set", { _ = try fixture.secrets.setSecret(Data("w".utf8), forKey: "k", pluginID: self.calendar, by: fixture.admin) }),
            ("set new", { _ = try fixture.secrets.setSecret(Data("w".utf8), forKey: "new", pluginID: self.mail, by: fixture.admin) }),
            ("get", { _ = try fixture.secrets.secret(forKey: "k", pluginID: self.calendar, by: fixture.admin) }),
            ("delete", { _ = try fixture.secrets.deleteSecret(forKey: "k", pluginID: self.calendar, by: fixture.admin) }),
            ("rotate master", { _ = try fixture.secrets.rotateMasterKey(to: .generate(), by: fixture.admin) }),
            ("rotate data key", { _ = try fixture.secrets.rotateDataKey(pluginID: self.calendar, reencrypt: true, by: fixture.admin) }),
            ("shred", { _ = try fixture.secrets.shredDataKeys(pluginID: self.calendar, by: fixture.admin) }),
        ]
        for (name, change) in changes {
            #expect(boardError(change) != nil, "\(name)")
            #expect(try fixture.state() == before, "\(name)")
        }
        try fixture.attacker().execute("DROP TRIGGER audit_fails")
        #expect(try fixture.secrets.secret(forKey: "k", pluginID: calendar, by: fixture.admin) == Data("v".utf8))
    }

    @Test func auditRowsNameKeysAndVersionsNeverValues() throws {
        let fixture = try BoardFixture()
        let secret = "SECRET-\(UUID().uuidString)"
        _ = try fixture.secrets.setSecret(Data(secret.utf8), forKey: "api-token", pluginID: calendar, by: fixture.admin)
        #expect(
            try fixture.secrets.setSecret(Data(secret.utf8), forKey: "api-token", pluginID: calendar, by: fixture.admin).changed == false
        )
        _ = try fixture.secrets.setSecret(Data((secret + "2").utf8), forKey: "api-token", pluginID: calendar, by: fixture.admin)
        _ = try fixture.secrets.secret(forKey: "api-token", pluginID: calendar, by: fixture.admin)
        _ = try fixture.secrets.deleteSecret(forKey: "api-token", pluginID: calendar, by: fixture.admin)
        #expect(try fixture.secrets.deleteSecret(forKey: "api-token", pluginID: calendar, by: fixture.admin).changed == false)

        let rows = try fixture.board.auditRecords(AuditQuery(target: calendar)).filter { $0.action.hasPrefix("secret.") }
        #expect(rows.map(\.action) == ["secret.set", "secret.set", "secret.get", "secret.delete"])
        #expect(
            rows.map(\.beforeJSON) == [
                "{\"data_key_version\":null,\"key\":\"api-token\"}", "{\"data_key_version\":1,\"key\":\"api-token\"}", nil,
                "{\"data_key_version\":1,\"key\":\"api-token\"}",
            ])
        #expect(
            rows.map(\.afterJSON) == [
                "{\"data_key_version\":1,\"key\":\"api-token\"}", "{\"data_key_version\":1,\"key\":\"api-token\"}",
                "{\"data_key_version\":1,\"key\":\"api-token\"}", "{\"data_key_version\":null,\"key\":\"api-token\"}",
            ])
        #expect(rows.allSatisfy { $0.targetType == "plugin" && $0.targetID == calendar && $0.by == "tester" })
        let text = try fixture.auditText()
        #expect(!text.contains(secret))
        #expect(!text.contains(Data(secret.utf8).base64EncodedString().prefix(16)))
        #expect(try fixture.board.verifyAudit().ok)
    }

    @Test func permissionsFollowTheRegistryRoles() throws {
        let fixture = try BoardFixture()
        let mallory = try Principal(osUser: "mallory")
        let maintainer = try Principal(osUser: "maria")
        _ = try fixture.board.addOwner(calendar, principal: "maria", role: .maintainer, by: fixture.admin)
        _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: calendar, by: fixture.admin)

        let refused: [(String, () throws -> Void)] = [
            ("set", { _ = try fixture.secrets.setSecret(Data("w".utf8), forKey: "k", pluginID: self.calendar, by: mallory) }),
            ("get", { _ = try fixture.secrets.secret(forKey: "k", pluginID: self.calendar, by: mallory) }),
            ("delete", { _ = try fixture.secrets.deleteSecret(forKey: "k", pluginID: self.calendar, by: mallory) }),
            ("rotate data key", { _ = try fixture.secrets.rotateDataKey(pluginID: self.calendar, by: mallory) }),
            ("shred", { _ = try fixture.secrets.shredDataKeys(pluginID: self.calendar, by: mallory) }),
            ("rotate master (maintainer)", { _ = try fixture.secrets.rotateMasterKey(to: .generate(), by: maintainer) }),
        ]
        for (name, attempt) in refused {
            let error = boardError(attempt)
            #expect(error?.code == .notAllowed, "\(name)")
        }
        let refusals = try fixture.board.auditRecords(AuditQuery()).filter { $0.outcome == "refused" }
        #expect(
            refusals.map(\.action) == [
                "secret.set", "secret.get", "secret.delete", "keys.rotate_data_key", "keys.shred", "keys.rotate_master",
            ])
        #expect(try fixture.secrets.secret(forKey: "k", pluginID: calendar, by: fixture.admin) == Data("v".utf8))

        // A maintainer may do everything but rotate the master key.
        _ = try fixture.secrets.setSecret(Data("m".utf8), forKey: "k", pluginID: calendar, by: maintainer)
        #expect(try fixture.secrets.secret(forKey: "k", pluginID: calendar, by: maintainer) == Data("m".utf8))
        _ = try fixture.secrets.rotateDataKey(pluginID: calendar, reencrypt: true, by: maintainer)
        _ = try fixture.secrets.shredDataKeys(pluginID: calendar, by: maintainer)
        // But not on another plug-in.
        #expect(
            boardError { _ = try fixture.secrets.setSecret(Data("m".utf8), forKey: "k", pluginID: self.mail, by: maintainer) }?.code
                == .notAllowed)
    }

    @Test func invalidInputWritesNothing() throws {
        let fixture = try BoardFixture()
        let before = try fixture.state()
        let cases: [(String, BoardError.Code, () throws -> Void)] = [
            (
                "empty key", .invalidInput,
                { _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "", pluginID: self.calendar, by: fixture.admin) }
            ),
            (
                "control character", .invalidInput,
                { _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "a\nb", pluginID: self.calendar, by: fixture.admin) }
            ),
            (
                "too large", .invalidInput,
                {
                    _ = try fixture.secrets.setSecret(
                        Data(count: SecureStorageLimits.maximumValueByteCount + 1), forKey: "k", pluginID: self.calendar,
                        by: fixture.admin)
                }
            ),
            (
                "bad plug-in id", .invalidInput,
                { _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: "Bad Id", by: fixture.admin) }
            ),
            (
                "same key", .invalidInput,
                {
                    _ = try fixture.secrets.rotateMasterKey(
                        to: try KeyFileProvider(path: fixture.keyFile).loadMasterKey(), by: fixture.admin)
                }
            ),
            (
                "empty reason", .invalidInput,
                { _ = try fixture.secrets.shredDataKeys(pluginID: self.calendar, reason: " ", by: fixture.admin) }
            ),
        ]
        for (name, code, attempt) in cases {
            #expect(boardError(attempt)?.code == code, "\(name)")
        }
        #expect(try fixture.state() == before)
    }
}
