import Foundation
import GRDB
import PlugboardModel
import PlugboardPluginAPI
import PlugboardTestSupport
import Synchronization
import Testing

@testable import PlugboardSecureStorage
@testable import PlugboardStore

/// A real board in a temporary folder, with its secure storage initialised from a key file and two registered
/// plug-ins.
final class BoardFixture {
    static let calendar = "com.example.calendar"
    static let mail = "com.example.mail"
    /// An environment with no `PLUGBOARD_MASTER_KEY`, whatever the test process has: the key file is used.
    static let noEnvironment = EnvironmentKeyProvider(environment: [:])

    let directory: TemporaryDirectory
    let path: String
    let admin: Principal
    let board: Board
    let secrets: BoardSecretStore

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.file("board.sqlite")
        admin = try Principal(osUser: "tester")
        board = try Board.create(at: path, actor: admin)
        secrets = try BoardSecretStore.initialize(board: board, actor: admin, environment: Self.noEnvironment).secrets
        for id in [Self.calendar, Self.mail] {
            let manifest = try PluginManifest.parse(Data("{\"id\":\"\(id)\",\"name\":\"N\",\"version\":\"1.0.0\"}".utf8))
            _ = try board.register(manifest, actor: admin)
        }
    }

    var keyFile: String { path + ".key" }

    /// A second connection to the board file, as someone with `sqlite3` would open it.
    func attacker() throws -> DatabaseQueue { try DatabaseQueue(path: path) }

    /// The bytes of the board file and of its WAL, shared-memory and journal files that exist now.
    func files() -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-wal", "-shm", "-journal"] {
            // Read by a child process: this process holds connections to the board (see FileBytes).
            if let data = try? FileBytes.readIfPresent(path + suffix) { files[path + suffix] = data }
        }
        return files
    }

    /// Every audit row as text.
    func auditText() throws -> String {
        try board.auditRecords(AuditQuery()).map { "\($0)" }.joined(separator: "\n")
    }

    /// Everything in the board, for before/after comparisons: every table's rows, and the bytes of the board file,
    /// its WAL and journal (not the shared-memory index, which readers update).
    struct State: Equatable {
        let dump: String
        let files: [String: Data]
    }

    func state() throws -> State {
        let dump = try board.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"").map { "\(table): \($0)" }.joined(separator: "\n")
            }.joined(separator: "\n")
        }
        return State(dump: dump, files: files().filter { !$0.key.hasSuffix("-shm") })
    }

    func closeBoard() throws {
        try (board.writer as? DatabaseQueue)?.close()
    }
}

/// Runs `body` and returns the `BoardError` it threw.
@discardableResult
func boardError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> BoardError? {
    thrown(BoardError.self, sourceLocation: sourceLocation, body)
}

/// Whether `needle` occurs in `haystack`.
func contains(_ haystack: Data, _ needle: Data) -> Bool {
    haystack.range(of: needle) != nil
}

@Suite("Secure storage on the board")
struct BoardSecretsTests {
    let calendar = BoardFixture.calendar
    let mail = BoardFixture.mail

    // MARK: Plaintext never reaches the files

    @Test func plaintextNeverReachesTheBoardFileItsWALOrTheAuditLog() async throws {
        let fixture = try BoardFixture()
        let marker = "PLAINTEXT-\(UUID().uuidString)"
        let spiMarker = "SPI-PLAINTEXT-\(UUID().uuidString)"
        let keyName = "KEYNAME-\(UUID().uuidString)"
        _ = try fixture.secrets.setSecret(Data(marker.utf8), forKey: keyName, pluginID: calendar, actor: fixture.admin)
        _ = try fixture.secrets.setSecret(Data((marker + "-2").utf8), forKey: keyName, pluginID: calendar, actor: fixture.admin)
        try await fixture.secrets.storage(forPlugin: mail).set(Data(spiMarker.utf8), forKey: "token")
        #expect(try fixture.secrets.secret(forKey: keyName, pluginID: calendar, actor: fixture.admin) == Data((marker + "-2").utf8))
        _ = try fixture.secrets.rotateDataKey(pluginID: calendar, reencrypt: true, actor: fixture.admin)

        // While the connection is open, the WAL holds the recent pages.
        let open = fixture.files()
        #expect((open[fixture.path + "-wal"]?.count ?? 0) > 0, "the WAL should hold the recent writes")
        for (file, bytes) in open {
            #expect(!contains(bytes, Data(marker.utf8)), "plaintext in \(file)")
            #expect(!contains(bytes, Data(spiMarker.utf8)), "plaintext in \(file)")
        }
        // Key names are not secret: they are stored in clear (and this shows the scan finds what is there).
        #expect(open.values.contains { contains($0, Data(keyName.utf8)) })
        let audit = try fixture.auditText()
        #expect(audit.contains(keyName))
        #expect(!audit.contains(marker) && !audit.contains(spiMarker))

        try fixture.closeBoard()
        let closed = fixture.files()
        #expect(!closed.isEmpty)
        for (file, bytes) in closed {
            #expect(!contains(bytes, Data(marker.utf8)), "plaintext in \(file)")
            #expect(!contains(bytes, Data(spiMarker.utf8)), "plaintext in \(file)")
        }
        #expect(closed.values.contains { contains($0, Data(keyName.utf8)) })
    }

    @Test func everyBoardConnectionRunsWithSecureDelete() throws {
        let fixture = try BoardFixture()
        #expect(try fixture.board.read { db in try Int.fetchOne(db, sql: "PRAGMA secure_delete") } == 1)
        let readOnly = try Board.open(at: fixture.path, readOnly: true)
        #expect(try readOnly.read { db in try Int.fetchOne(db, sql: "PRAGMA secure_delete") } == 1)
    }

    // MARK: Integrity

    @Test func flippingAnyByteOfAStoredCiphertextNonceOrWrappedKeyIsAnIntegrityError() async throws {
        let fixture = try BoardFixture()
        let value = Data("correct horse".utf8)
        _ = try fixture.secrets.setSecret(value, forKey: "k", pluginID: calendar, actor: fixture.admin)
        let spi = try fixture.secrets.storage(forPlugin: calendar)
        let attacker = try fixture.attacker()

        let sealed = try #require(
            try await attacker.read { db in
                try Data.fetchOne(db, sql: "SELECT sealed FROM secret_values WHERE plugin_id = ? AND key = 'k'", arguments: [calendar])
            })
        let wrapped = try #require(
            try await attacker.read { db in
                try Data.fetchOne(
                    db, sql: "SELECT wrapped_key FROM secret_data_keys WHERE plugin_id = ? AND version = 1", arguments: [calendar])
            })
        #expect(sealed.count == 1 + 12 + value.count + 16)
        #expect(wrapped.count == 61)

        let targets: [(what: String, sql: String, original: Data)] = [
            ("sealed value", "UPDATE secret_values SET sealed = ? WHERE plugin_id = '\(calendar)' AND key = 'k'", sealed),
            ("wrapped key", "UPDATE secret_data_keys SET wrapped_key = ? WHERE plugin_id = '\(calendar)' AND version = 1", wrapped),
        ]
        for target in targets {
            // Every byte: format byte, nonce, ciphertext, tag.
            for index in 0..<target.original.count {
                let bit = index % 8
                try await attacker.write { db in
                    try db.execute(sql: target.sql, arguments: [flipping(target.original, byte: index, bit: bit)])
                }
                let error = boardError {
                    _ = try fixture.secrets.secret(forKey: "k", pluginID: calendar, actor: fixture.admin)
                }
                #expect(error?.code == .integrity, "\(target.what) byte \(index): \(String(describing: error))")
                let spiError = await secureStorageError { _ = try await spi.data(forKey: "k") }
                #expect(spiError?.code == .integrityFailure, "\(target.what) byte \(index)")
            }
            try await attacker.write { db in try db.execute(sql: target.sql, arguments: [target.original]) }
            #expect(try fixture.secrets.secret(forKey: "k", pluginID: calendar, actor: fixture.admin) == value)
        }
        // No failed read was recorded as a successful one.
        let gets = try fixture.board.auditRecords(AuditQuery()).filter { $0.action == "secret.get" }
        #expect(gets.count == 2)
    }

    /// A board keeps the proofs of the rows it read while the file stays unchanged (`ProvenRows`), so that reading a
    /// value again costs no second proof. A copy-back by another process between two reads of the same store must
    /// still be refused at the second read, and so must an edit of the index of digests that makes the copy agree
    /// with it; putting the row back makes the value readable again.
    @Test func aValueCopiedBackByAnotherProcessAfterItWasReadIsRefusedAtTheNextRead() async throws {
        let fixture = try BoardFixture()
        let spi = try fixture.secrets.storage(forPlugin: calendar)
        try await spi.set(Data("v1".utf8), forKey: "token")
        func hex(_ sql: String) throws -> String {
            try #require(try Self.sqlite3(fixture.path, sql).split(separator: "\n").first.map(String.init))
        }
        let row = "WHERE plugin_id = '\(calendar)' AND key = 'token'"
        let indexEntry = "WHERE tbl = 'secret_values' AND key = json_array('\(calendar)', 'token')"
        // The whole row as a backup holds it (sealed value and time, as an `UPDATE … SET` list), and its index entry.
        func savedRow() throws -> (set: String, digest: String) {
            (
                try hex("SELECT 'sealed = X''' || hex(sealed) || ''', updated_at = ''' || updated_at || '''' FROM secret_values \(row);"),
                try hex("SELECT digest FROM state_digests \(indexEntry);")
            )
        }
        func setIndexedDigest(_ digest: String) -> String { "UPDATE state_digests SET digest = '\(digest)' \(indexEntry);" }

        let old = try savedRow()
        try await spi.set(Data("v2".utf8), forKey: "token")
        let current = try savedRow()
        for _ in 0..<3 { #expect(try await spi.data(forKey: "token") == Data("v2".utf8)) }

        _ = try Self.sqlite3(fixture.path, "UPDATE secret_values SET \(old.set) \(row);")
        let copied = await secureStorageError { _ = try await spi.data(forKey: "token") }
        #expect(
            copied?.code == .integrityFailure && copied?.message.contains("does not match the audit log") == true,
            "\(String(describing: copied))")

        _ = try Self.sqlite3(fixture.path, setIndexedDigest(old.digest))
        let indexEdited = await secureStorageError { _ = try await spi.data(forKey: "token") }
        #expect(
            indexEdited?.code == .integrityFailure && indexEdited?.message.contains("cannot be proven") == true,
            "\(String(describing: indexEdited))")

        _ = try Self.sqlite3(fixture.path, setIndexedDigest(current.digest) + "UPDATE secret_values SET \(current.set) \(row);")
        #expect(try await spi.data(forKey: "token") == Data("v2".utf8))
    }

    /// A board keeps the stored bucket hashes of the state proof between its own changes (`StateCache`), so that a
    /// change does not read all 256 again. Another process's edit of a bucket the next change does not touch must be
    /// seen as without the cache: the next audit row records the root of the buckets as they are stored, and
    /// `audit verify` names the edit. The edit is another 64-digit hash, or (with SQLite's checks turned off) a hash of
    /// another length, which must not upset the change either.
    @Test(arguments: [String(repeating: "0", count: 64), "abc"])
    func bucketHashesKeptBetweenChangesAreReadAgainAfterAnotherProcessWrote(editedHash: String) async throws {
        let (fixture, spi) = try await Self.boardWithTwoPuts()
        // A bucket the next put does not touch (not the value's, not its data key's).
        let bucket = try Self.bucket(
            fixture,
            """
            SELECT bucket FROM state_buckets WHERE bucket NOT IN
              (SELECT bucket FROM state_digests WHERE tbl IN ('secret_values', 'secret_data_keys')) ORDER BY bucket LIMIT 1;
            """)
        _ = try Self.sqlite3(
            fixture.path, "PRAGMA ignore_check_constraints = ON; UPDATE state_buckets SET hash = '\(editedHash)' WHERE bucket = \(bucket);")
        try await spi.set(Data("v3".utf8), forKey: "token")

        let reader = try DatabaseQueue(path: fixture.path)
        let (recorded, stored) = try await reader.read { db in
            (
                try String.fetchOne(db, sql: "SELECT state_root FROM audit_log ORDER BY seq DESC LIMIT 1"),
                try StateQueries.storedRoot(db)
            )
        }
        #expect(recorded == stored, "the last audit row's root is not the root of the stored bucket hashes")
        let verification = try fixture.board.verifyAudit()
        #expect(!verification.ok && verification.problems.contains { $0.contains("state_buckets") }, "\(verification.problems)")
    }

    /// A board keeps the index's entries of the buckets its changes touch (`StateCache`), so that a write rehashes a
    /// bucket from memory instead of reading it back. On a board whose buckets hold several entries, writes that add
    /// lines before, between and after others and remove them must leave every stored bucket hash the hash of its
    /// entries as they are, and `audit verify` content.
    @Test func bucketEntriesKeptBetweenChangesHashAsTheIndex() async throws {
        let fixture = try BoardFixture()
        let manifests = try (0..<300).map { index in
            try PluginManifest.parse(Data("{\"id\":\"com.example.fill\(index)\",\"name\":\"N\",\"version\":\"1.0.0\"}".utf8))
        }
        _ = try fixture.board.register(manifests, actor: fixture.admin)
        let spi = try fixture.secrets.storage(forPlugin: calendar)
        for round in 0..<90 {
            try await spi.set(Data("v\(round)".utf8), forKey: "k\(round % 30)")
            if round % 3 == 2 { try await spi.removeValue(forKey: "k\((round * 7) % 30)") }
        }
        let mismatched = try fixture.board.read { db in
            try (0..<256).filter { try StateQueries.indexedBucketHash(db, $0) != StateQueries.bucketHash(db, $0) }
        }
        #expect(mismatched.isEmpty, "stored bucket hashes differ from their entries in buckets \(mismatched)")
        let verification = try fixture.board.verifyAudit()
        #expect(verification.ok, "\(verification.problems)")
    }

    /// Another process's edit of the index in a bucket the next change touches must be hashed with it, as without
    /// the kept entries: the stored hash is the hash of the entries as they are.
    @Test func bucketEntriesKeptBetweenChangesAreReadAgainAfterAnotherProcessWrote() async throws {
        let (fixture, spi) = try await Self.boardWithTwoPuts()
        let bucket = try Self.bucket(fixture, "SELECT bucket FROM state_digests WHERE tbl = 'secret_values';")
        _ = try Self.sqlite3(
            fixture.path,
            "INSERT INTO state_digests (tbl, key, bucket, digest) VALUES ('secret_values', '[\"a\",\"b\"]', \(bucket), '\(String(repeating: "0", count: 64))');"
        )
        try await spi.set(Data("v3".utf8), forKey: "token")
        let (indexed, stored) = try fixture.board.read { db in
            (try StateQueries.indexedBucketHash(db, bucket), try StateQueries.bucketHash(db, bucket))
        }
        #expect(indexed == stored, "the stored hash of bucket \(bucket) leaves out the entry another process added")
    }

    /// An index entry another process moved to another bucket than its key's is updated where it lies (the upsert
    /// keeps its bucket): the bucket of its key must then be hashed from the index at every change, not from kept
    /// entries that would hold the entry the index does not, through puts and the removal.
    @Test func bucketEntriesAreNotKeptForAnEntryAnotherProcessMovedToAnotherBucket() async throws {
        let (fixture, spi) = try await Self.boardWithTwoPuts()
        let bucket = try Self.bucket(fixture, "SELECT bucket FROM state_digests WHERE tbl = 'secret_values';")
        _ = try Self.sqlite3(fixture.path, "UPDATE state_digests SET bucket = \((bucket + 1) % 256) WHERE tbl = 'secret_values';")
        for step in ["v3", "v4", "v5", "removed"] {
            if step == "removed" {
                try await spi.removeValue(forKey: "token")
            } else {
                try await spi.set(Data(step.utf8), forKey: "token")
            }
            let (indexed, stored) = try fixture.board.read { db in
                (try StateQueries.indexedBucketHash(db, bucket), try StateQueries.bucketHash(db, bucket))
            }
            #expect(indexed == stored, "after \(step): bucket \(bucket) is stored as \(stored), its entries hash to \(indexed)")
        }
    }

    /// A store's write leaves what it wrote proven for its next read (`ProvenRows.carry`): the sealed row and its data
    /// key, their buckets and the state root, in the state of the file the next read sees. Another process's write
    /// in between moves that state (the copy-back tests above).
    @Test func aPutLeavesItsRowsProvenForTheStoresNextRead() async throws {
        let fixture = try BoardFixture()
        let spi = try fixture.secrets.storage(forPlugin: calendar)
        try await spi.set(Data("v1".utf8), forKey: "token")
        let proofs = try fixture.board.readTransaction { db in fixture.board.provenRows.proofs(in: try ProvenRows.state(db)) }
        let value = StateEntity(table: "secret_values", key: "[\"\(calendar)\",\"token\"]")
        let dataKey = StateEntity(table: "secret_data_keys", key: "[\"\(calendar)\",1]")
        #expect(proofs.root && proofs.rows.isSuperset(of: [value, dataKey]), "\(proofs.rows)")
        #expect(proofs.buckets.isSuperset(of: [StateDigest.bucket(value), StateDigest.bucket(dataKey)]))
        #expect(try await spi.data(forKey: "token") == Data("v1".utf8))
    }

    /// A change that installed this connection's triggers and was then rolled back must not leave them taken for
    /// installed: the next change checks again, installs them, and its rows are noted and proven.
    @Test func triggersOfARolledBackChangeAreInstalledAgainByTheNextChange() async throws {
        let fixture = try BoardFixture()
        // A board opened anew: its connection has no triggers yet. Its first change fails after installing them.
        let board = try Board.open(at: fixture.path)
        #expect(throws: BoardError.self) {
            _ = try board.kill(.plugin("com.example.not-registered"), reason: "test", actor: fixture.admin)
        }
        let secrets = try BoardSecretStore.open(board: board, environment: BoardFixture.noEnvironment)
        try await secrets.storage(forPlugin: calendar).set(Data("after".utf8), forKey: "k")
        let verification = try board.verifyAudit()
        #expect(verification.ok, "\(verification.problems)")
        #expect(try await secrets.storage(forPlugin: calendar).data(forKey: "k") == Data("after".utf8))
    }

    /// Runs `sql` with the `sqlite3` shell in a process of its own, and returns its output.
    /// A board whose calendar plug-in put `token` twice, so that its connection keeps what the state proof caches.
    static func boardWithTwoPuts() async throws -> (BoardFixture, any SecureStorage) {
        let fixture = try BoardFixture()
        let spi = try fixture.secrets.storage(forPlugin: BoardFixture.calendar)
        try await spi.set(Data("v1".utf8), forKey: "token")
        try await spi.set(Data("v2".utf8), forKey: "token")
        return (fixture, spi)
    }

    /// The bucket number `sql` selects, read by another process.
    static func bucket(_ fixture: BoardFixture, _ sql: String) throws -> Int {
        try #require(Int(try sqlite3(fixture.path, sql).trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    static func sqlite3(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-bail", path, ".timeout 10000", sql]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = Result { () throws(POSIXError) in try out.fileHandleForReading.readAll() }
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "sqlite3 failed: \(sql)")
        return String(decoding: try data.get(), as: UTF8.self)
    }

    @Test func aCiphertextCopiedToAnotherKeyOrPluginDoesNotOpen() async throws {
        let fixture = try BoardFixture()
        for (plugin, key, value) in [(calendar, "a", "calendar-a"), (calendar, "b", "calendar-b"), (mail, "a", "mail-a")] {
            _ = try fixture.secrets.setSecret(Data(value.utf8), forKey: key, pluginID: plugin, actor: fixture.admin)
        }
        let attacker = try fixture.attacker()
        // Same plug-in, same data key version, another key name.
        try await attacker.write { db in
            try db.execute(
                sql: """
                    UPDATE secret_values SET sealed = (SELECT sealed FROM secret_values WHERE plugin_id = ?1 AND key = 'a')
                    WHERE plugin_id = ?1 AND key = 'b'
                    """, arguments: [calendar])
        }
        #expect(boardError { _ = try fixture.secrets.secret(forKey: "b", pluginID: calendar, actor: fixture.admin) }?.code == .integrity)
        // Another plug-in, same key name.
        try await attacker.write { db in
            try db.execute(
                sql: """
                    UPDATE secret_values SET sealed = (SELECT sealed FROM secret_values WHERE plugin_id = ?1 AND key = 'a')
                    WHERE plugin_id = ?2 AND key = 'a'
                    """, arguments: [calendar, mail])
        }
        let spiError = await secureStorageError { _ = try await fixture.secrets.storage(forPlugin: mail).data(forKey: "a") }
        #expect(spiError?.code == .integrityFailure)
        // A wrapped data key copied to another plug-in does not unwrap there.
        try await attacker.write { db in
            try db.execute(
                sql: """
                    UPDATE secret_data_keys SET wrapped_key = (SELECT wrapped_key FROM secret_data_keys WHERE plugin_id = ?1 AND version = 1)
                    WHERE plugin_id = ?2 AND version = 1
                    """, arguments: [calendar, mail])
        }
        #expect(boardError { _ = try fixture.secrets.secret(forKey: "a", pluginID: mail, actor: fixture.admin) }?.code == .integrity)
        // The untouched value still opens.
        #expect(try fixture.secrets.secret(forKey: "a", pluginID: calendar, actor: fixture.admin) == Data("calendar-a".utf8))
    }

    // MARK: The master key

    @Test func aWrongMasterKeyIsRefusedBeforeAnythingChanges() throws {
        let fixture = try BoardFixture()
        _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: calendar, actor: fixture.admin)
        let before = try fixture.state()
        let wrong = MasterKey.generate()
        let error = boardError {
            _ = try BoardSecretStore(board: fixture.board, masterKey: wrong, source: .keyFile(path: "/elsewhere.key"))
        }
        #expect(error?.code == .masterKey)
        #expect(error?.message.hasPrefix("this master key does not belong to this board (") == true, "\(String(describing: error))")
        #expect(error?.message.contains(wrong.identifier) == true)
        #expect(error?.message.contains(fixture.secrets.masterKeyIdentifier) == true)
        let env = EnvironmentKeyProvider(environment: ["PLUGBOARD_MASTER_KEY": wrong.withUnsafeBytes { Data($0).base64EncodedString() }])
        #expect(
            boardError { _ = try BoardSecretStore.open(board: fixture.board, environment: env) }?.message.contains("PLUGBOARD_MASTER_KEY")
                == true)
        #expect(try fixture.state() == before)
    }

    /// An instance still holding the old key after another one rotated: every operation is refused in its
    /// transaction, before anything is read or written, and without an audit row.
    @Test func aStaleMasterKeyIsRefusedInsideEveryTransaction() throws {
        let fixture = try BoardFixture()
        _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: calendar, actor: fixture.admin)
        let other = try BoardSecretStore.open(board: fixture.board, environment: BoardFixture.noEnvironment)
        _ = try other.rotateMasterKey(to: .generate(), actor: fixture.admin)
        let before = try fixture.state()
        let stale = fixture.secrets
        let attempts: [(String, () throws -> Void)] = [
            ("set", { _ = try stale.setSecret(Data("w".utf8), forKey: "k", pluginID: self.calendar, actor: fixture.admin) }),
            ("get", { _ = try stale.secret(forKey: "k", pluginID: self.calendar, actor: fixture.admin) }),
            ("delete", { _ = try stale.deleteSecret(forKey: "k", pluginID: self.calendar, actor: fixture.admin) }),
            ("rotate master", { _ = try stale.rotateMasterKey(to: .generate(), actor: fixture.admin) }),
            ("rotate data key", { _ = try stale.rotateDataKey(pluginID: self.calendar, actor: fixture.admin) }),
            ("shred", { _ = try stale.shredDataKeys(pluginID: self.calendar, actor: fixture.admin) }),
        ]
        for (name, attempt) in attempts {
            let error = boardError(attempt)
            #expect(error?.code == .masterKey, "\(name)")
            #expect(error?.message.hasPrefix("this master key does not belong to this board (") == true, "\(name)")
        }
        #expect(try fixture.state() == before)
    }

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
        let again = try BoardSecretStore.initialize(board: fixture.board, actor: fixture.admin, environment: BoardFixture.noEnvironment)
        #expect(again.setup.changed == false)
        #expect(try fixture.state() == before)
    }

    @Test func aKeyFileReadableByOthersIsRefused() throws {
        let fixture = try BoardFixture()
        chmod(fixture.keyFile, 0o644)
        let error = boardError { _ = try BoardSecretStore.open(board: fixture.board, environment: BoardFixture.noEnvironment) }
        #expect(error?.code == .masterKey)
        #expect(error?.message.contains("run chmod 600 \(fixture.keyFile)") == true, "\(String(describing: error))")
    }

    @Test func aMissingKeyFileSaysToRestoreIt() throws {
        let fixture = try BoardFixture()
        try FileManager.default.removeItem(atPath: fixture.keyFile)
        let error = boardError { _ = try BoardSecretStore.open(board: fixture.board, environment: BoardFixture.noEnvironment) }
        #expect(error?.message.contains("restore the key file from your backup") == true)
        #expect(error?.message.contains(fixture.secrets.masterKeyIdentifier) == true)
    }

    @Test func aFailedInitialisationRemovesTheKeyFileItCreated() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("board.sqlite")
        let board = try Board.create(at: path, actor: try Principal(osUser: "tester"))
        let before = try DatabaseQueue(path: board.path).read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM secret_master_key") }
        #expect(before == 0)
        let error = boardError {
            _ = try BoardSecretStore.initialize(
                board: board, actor: try Principal(osUser: "mallory"), environment: BoardFixture.noEnvironment)
        }
        #expect(error?.code == .notAllowed)
        #expect(!FileManager.default.fileExists(atPath: path + ".key"))
        let setup = try BoardSecretStore.initialize(
            board: board, actor: try Principal(osUser: "tester"), environment: BoardFixture.noEnvironment
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
        let board = try Board.create(at: path, actor: actor)
        let setup = try BoardSecretStore.initialize(board: board, actor: actor, environment: env).setup
        #expect(setup.source == .environment(variable: "PLUGBOARD_MASTER_KEY"))
        #expect(setup.keyID == key.identifier && !setup.createdKeyFile)
        #expect(!FileManager.default.fileExists(atPath: path + ".key"))
        #expect(try BoardSecretStore.open(board: board, environment: env).masterKeyIdentifier == key.identifier)
        // Master rotation cannot write the variable: only the key file procedure refuses.
        let secrets = try BoardSecretStore.open(board: board, environment: env)
        #expect(boardError { _ = try secrets.rotateMasterKeyFile(actor: actor) }?.message.contains("PLUGBOARD_MASTER_KEY") == true)
    }

    // MARK: Rotation and shredding

    @Test func rotationsKeepEveryValueReadable() throws {
        let fixture = try BoardFixture()
        let values = [(calendar, "a", "1"), (calendar, "b", "2"), (mail, "a", "3")]
        func checkAll(_ secrets: BoardSecretStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
            for (plugin, key, value) in values {
                #expect(
                    try secrets.secret(forKey: key, pluginID: plugin, actor: fixture.admin) == Data(value.utf8),
                    sourceLocation: sourceLocation)
            }
        }
        for (plugin, key, value) in values {
            _ = try fixture.secrets.setSecret(Data(value.utf8), forKey: key, pluginID: plugin, actor: fixture.admin)
        }

        // Master key, given by the caller.
        let oldKey = try KeyFileProvider(path: fixture.keyFile).loadMasterKey()
        let newKey = MasterKey.generate()
        let rotated = try fixture.secrets.rotateMasterKey(to: newKey, actor: fixture.admin)
        #expect(rotated.message.contains("rewrapped 2 data key(s)"))
        try checkAll(fixture.secrets)
        try checkAll(try BoardSecretStore(board: fixture.board, masterKey: newKey))
        #expect(boardError { _ = try BoardSecretStore(board: fixture.board, masterKey: oldKey) }?.code == .masterKey)

        // Master key kept in the key file: .next, transaction, rename.
        try KeyFileProvider.replace(at: fixture.keyFile, with: newKey)
        let fromFile = try BoardSecretStore.open(board: fixture.board, environment: BoardFixture.noEnvironment)
        _ = try fromFile.rotateMasterKeyFile(actor: fixture.admin)
        #expect(!FileManager.default.fileExists(atPath: fixture.keyFile + ".next"))
        #expect(try permissions(of: fixture.keyFile) == 0o600)
        let reopened = try BoardSecretStore.open(board: fixture.board, environment: BoardFixture.noEnvironment)
        #expect(reopened.masterKeyIdentifier != newKey.identifier)
        try checkAll(fromFile)
        try checkAll(reopened)

        // Data keys: a new version seals new values, old versions still open old ones; --reencrypt moves them.
        let rotation = try reopened.rotateDataKey(pluginID: calendar, actor: fixture.admin)
        #expect(rotation.message.contains("version 2 seals new values"))
        _ = try reopened.setSecret(Data("4".utf8), forKey: "c", pluginID: calendar, actor: fixture.admin)
        try checkAll(reopened)
        #expect(try fixture.board.secretEntries(pluginID: calendar).map(\.dataKeyVersion) == [1, 1, 2])
        _ = try reopened.rotateDataKey(pluginID: calendar, reencrypt: true, actor: fixture.admin)
        #expect(try fixture.board.secretEntries(pluginID: calendar).map(\.dataKeyVersion) == [3, 3, 3])
        try checkAll(reopened)
        #expect(try reopened.secret(forKey: "c", pluginID: calendar, actor: fixture.admin) == Data("4".utf8))

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
        _ = try fixture.secrets.rotateMasterKey(to: newKey, actor: fixture.admin)
        let error = boardError { _ = try BoardSecretStore.open(board: fixture.board, environment: BoardFixture.noEnvironment) }
        #expect(error?.message.contains("run mv \(fixture.keyFile).next \(fixture.keyFile)") == true, "\(String(describing: error))")
        // A leftover .next that the board does not use blocks the next rotation until removed.
        try KeyFileProvider.move(fixture.keyFile + ".next", to: fixture.keyFile)
        let secrets = try BoardSecretStore.open(board: fixture.board, environment: BoardFixture.noEnvironment)
        try KeyFileProvider.write(MasterKey.generate(), to: fixture.keyFile + ".next")
        let before = try fixture.state()
        #expect(boardError { _ = try secrets.rotateMasterKeyFile(actor: fixture.admin) }?.code == .conflict)
        #expect(try fixture.state() == before)
    }

    @Test func shreddingMakesValuesUnreadableWithAClearError() async throws {
        let fixture = try BoardFixture()
        _ = try fixture.secrets.setSecret(Data("v1".utf8), forKey: "a", pluginID: calendar, actor: fixture.admin)
        _ = try fixture.secrets.rotateDataKey(pluginID: calendar, actor: fixture.admin)
        _ = try fixture.secrets.setSecret(Data("v2".utf8), forKey: "b", pluginID: calendar, actor: fixture.admin)
        _ = try fixture.secrets.setSecret(Data("m".utf8), forKey: "a", pluginID: mail, actor: fixture.admin)
        let result = try fixture.secrets.shredDataKeys(pluginID: calendar, reason: "plug-in retired", actor: fixture.admin)
        #expect(result.changed && result.message.contains("version(s) 1, 2"))
        // The WAL was checkpointed away, so the erased wrapped keys do not linger there.
        #expect((fixture.files()[fixture.path + "-wal"]?.count ?? 0) == 0)

        for key in ["a", "b"] {
            let error = boardError { _ = try fixture.secrets.secret(forKey: key, pluginID: calendar, actor: fixture.admin) }
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
        let wrapped = try await fixture.attacker().read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM secret_data_keys WHERE plugin_id = ? AND wrapped_key IS NOT NULL", arguments: [calendar])
        }
        #expect(wrapped == 0)
        // Other plug-ins are untouched; the shredded plug-in can start again with a new data key.
        #expect(try fixture.secrets.secret(forKey: "a", pluginID: mail, actor: fixture.admin) == Data("m".utf8))
        _ = try fixture.secrets.setSecret(Data("new".utf8), forKey: "a", pluginID: calendar, actor: fixture.admin)
        #expect(try fixture.secrets.secret(forKey: "a", pluginID: calendar, actor: fixture.admin) == Data("new".utf8))
        #expect(try fixture.board.dataKeyEntries(pluginID: calendar).map(\.state) == ["shredded", "shredded", "active"])
        // Shredding again with no live key changes nothing.
        _ = try fixture.secrets.shredDataKeys(pluginID: calendar, actor: fixture.admin)
        let before = try fixture.state()
        #expect(try fixture.secrets.shredDataKeys(pluginID: calendar, actor: fixture.admin).changed == false)
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
        let secrets = try BoardSecretStore.open(board: readOnly, environment: BoardFixture.noEnvironment)
        let error = await secureStorageError { try await secrets.storage(forPlugin: calendar).set(Data("v".utf8), forKey: "k") }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("read-only") == true)
    }

    // MARK: Audit and permissions

    @Test func eachChangeAndItsAuditRowAreOneTransaction() throws {
        let fixture = try BoardFixture()
        _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: calendar, actor: fixture.admin)
        // Make the audit append fail: the change it belongs to must not be kept.
        try fixture.attacker().write { db in
            try db.execute(sql: "CREATE TRIGGER audit_fails BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit unavailable'); END")
        }
        let before = try fixture.state()
        let changes: [(String, () throws -> Void)] = [
            ("set", { _ = try fixture.secrets.setSecret(Data("w".utf8), forKey: "k", pluginID: self.calendar, actor: fixture.admin) }),
            ("set new", { _ = try fixture.secrets.setSecret(Data("w".utf8), forKey: "new", pluginID: self.mail, actor: fixture.admin) }),
            ("get", { _ = try fixture.secrets.secret(forKey: "k", pluginID: self.calendar, actor: fixture.admin) }),
            ("delete", { _ = try fixture.secrets.deleteSecret(forKey: "k", pluginID: self.calendar, actor: fixture.admin) }),
            ("rotate master", { _ = try fixture.secrets.rotateMasterKey(to: .generate(), actor: fixture.admin) }),
            ("rotate data key", { _ = try fixture.secrets.rotateDataKey(pluginID: self.calendar, reencrypt: true, actor: fixture.admin) }),
            ("shred", { _ = try fixture.secrets.shredDataKeys(pluginID: self.calendar, actor: fixture.admin) }),
        ]
        for (name, change) in changes {
            #expect(boardError(change) != nil, "\(name)")
            #expect(try fixture.state() == before, "\(name)")
        }
        try fixture.attacker().write { db in try db.execute(sql: "DROP TRIGGER audit_fails") }
        #expect(try fixture.secrets.secret(forKey: "k", pluginID: calendar, actor: fixture.admin) == Data("v".utf8))
    }

    @Test func auditRowsNameKeysAndVersionsNeverValues() throws {
        let fixture = try BoardFixture()
        let secret = "SECRET-\(UUID().uuidString)"
        _ = try fixture.secrets.setSecret(Data(secret.utf8), forKey: "api-token", pluginID: calendar, actor: fixture.admin)
        #expect(
            try fixture.secrets.setSecret(Data(secret.utf8), forKey: "api-token", pluginID: calendar, actor: fixture.admin).changed == false
        )
        _ = try fixture.secrets.setSecret(Data((secret + "2").utf8), forKey: "api-token", pluginID: calendar, actor: fixture.admin)
        _ = try fixture.secrets.secret(forKey: "api-token", pluginID: calendar, actor: fixture.admin)
        _ = try fixture.secrets.deleteSecret(forKey: "api-token", pluginID: calendar, actor: fixture.admin)
        #expect(try fixture.secrets.deleteSecret(forKey: "api-token", pluginID: calendar, actor: fixture.admin).changed == false)

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
        #expect(rows.allSatisfy { $0.targetType == "plugin" && $0.targetID == calendar && $0.actor == "tester" })
        let text = try fixture.auditText()
        #expect(!text.contains(secret))
        #expect(!text.contains(Data(secret.utf8).base64EncodedString().prefix(16)))
        #expect(try fixture.board.verifyAudit().ok)
    }

    @Test func permissionsFollowTheRegistryRoles() throws {
        let fixture = try BoardFixture()
        let mallory = try Principal(osUser: "mallory")
        let maintainer = try Principal(osUser: "maria")
        _ = try fixture.board.addOwner(calendar, principal: "maria", role: .maintainer, actor: fixture.admin)
        _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: calendar, actor: fixture.admin)

        let refused: [(String, () throws -> Void)] = [
            ("set", { _ = try fixture.secrets.setSecret(Data("w".utf8), forKey: "k", pluginID: self.calendar, actor: mallory) }),
            ("get", { _ = try fixture.secrets.secret(forKey: "k", pluginID: self.calendar, actor: mallory) }),
            ("delete", { _ = try fixture.secrets.deleteSecret(forKey: "k", pluginID: self.calendar, actor: mallory) }),
            ("rotate data key", { _ = try fixture.secrets.rotateDataKey(pluginID: self.calendar, actor: mallory) }),
            ("shred", { _ = try fixture.secrets.shredDataKeys(pluginID: self.calendar, actor: mallory) }),
            ("rotate master (maintainer)", { _ = try fixture.secrets.rotateMasterKey(to: .generate(), actor: maintainer) }),
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
        #expect(try fixture.secrets.secret(forKey: "k", pluginID: calendar, actor: fixture.admin) == Data("v".utf8))

        // A maintainer may do everything but rotate the master key.
        _ = try fixture.secrets.setSecret(Data("m".utf8), forKey: "k", pluginID: calendar, actor: maintainer)
        #expect(try fixture.secrets.secret(forKey: "k", pluginID: calendar, actor: maintainer) == Data("m".utf8))
        _ = try fixture.secrets.rotateDataKey(pluginID: calendar, reencrypt: true, actor: maintainer)
        _ = try fixture.secrets.shredDataKeys(pluginID: calendar, actor: maintainer)
        // But not on another plug-in.
        #expect(
            boardError { _ = try fixture.secrets.setSecret(Data("m".utf8), forKey: "k", pluginID: self.mail, actor: maintainer) }?.code
                == .notAllowed)
    }

    @Test func invalidInputWritesNothing() throws {
        let fixture = try BoardFixture()
        let before = try fixture.state()
        let cases: [(String, BoardError.Code, () throws -> Void)] = [
            (
                "empty key", .invalidInput,
                { _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "", pluginID: self.calendar, actor: fixture.admin) }
            ),
            (
                "control character", .invalidInput,
                { _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "a\nb", pluginID: self.calendar, actor: fixture.admin) }
            ),
            (
                "too large", .invalidInput,
                {
                    _ = try fixture.secrets.setSecret(
                        Data(count: SecureStorageLimits.maximumValueByteCount + 1), forKey: "k", pluginID: self.calendar,
                        actor: fixture.admin)
                }
            ),
            (
                "bad plug-in id", .invalidInput,
                { _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: "Bad Id", actor: fixture.admin) }
            ),
            (
                "same key", .invalidInput,
                {
                    _ = try fixture.secrets.rotateMasterKey(
                        to: try KeyFileProvider(path: fixture.keyFile).loadMasterKey(), actor: fixture.admin)
                }
            ),
            (
                "empty reason", .invalidInput,
                { _ = try fixture.secrets.shredDataKeys(pluginID: self.calendar, reason: " ", actor: fixture.admin) }
            ),
        ]
        for (name, code, attempt) in cases {
            #expect(boardError(attempt)?.code == code, "\(name)")
        }
        #expect(try fixture.state() == before)
    }
}
