import Foundation
import PlugboardModel
import PlugboardPluginAPI
import PlugboardTestSupport
import Synchronization
import Testing

@testable import PlugboardBoardSecureStorage
@testable import PlugboardSecureStorage
@testable import PlugboardStore

/// The proof of stored rows, ciphertexts copied elsewhere, and wrong or stale master keys.
extension BoardSecretsTests {
    /// Another process's edit of the index in a bucket the next change touches must be hashed with it, as without
    /// the kept entries: the stored hash is the hash of the entries as they are.
    @Test func bucketEntriesKeptBetweenChangesAreReadAgainAfterAnotherProcessWrote() async throws {
        let (fixture, spi) = try await Self.boardWithTwoPuts()
        let bucket = try await Self.bucket(fixture, "SELECT bucket FROM state_digests WHERE tbl = 'secret_values';")
        try await fixture.attacker().execute(
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
        let bucket = try await Self.bucket(fixture, "SELECT bucket FROM state_digests WHERE tbl = 'secret_values';")
        try await fixture.attacker().execute("UPDATE state_digests SET bucket = \((bucket + 1) % 256) WHERE tbl = 'secret_values';")
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
            _ = try board.kill(.plugin("com.example.not-registered"), reason: "test", by: fixture.admin)
        }
        let secrets = try BoardSecureStorage.open(board: board, environment: BoardFixture.noEnvironment)
        try await secrets.storage(forPlugin: calendar).set(Data("after".utf8), forKey: "k")
        let verification = try board.verifyAudit()
        #expect(verification.ok, "\(verification.problems)")
        #expect(try await secrets.storage(forPlugin: calendar).data(forKey: "k") == Data("after".utf8))
    }

    /// A board whose calendar plug-in put `token` twice, so that its connection keeps what the state proof caches.
    static func boardWithTwoPuts() async throws -> (BoardFixture, any SecureStorage) {
        let fixture = try BoardFixture()
        let spi = try fixture.secrets.storage(forPlugin: BoardFixture.calendar)
        try await spi.set(Data("v1".utf8), forKey: "token")
        try await spi.set(Data("v2".utf8), forKey: "token")
        return (fixture, spi)
    }

    /// The bucket number `sql` selects, read by another process.
    static func bucket(_ fixture: BoardFixture, _ sql: String) async throws -> Int {
        try #require(try await fixture.attacker().int(sql))
    }

    @Test func aCiphertextCopiedToAnotherKeyOrPluginDoesNotOpen() async throws {
        let fixture = try BoardFixture()
        for (plugin, key, value) in [(calendar, "a", "calendar-a"), (calendar, "b", "calendar-b"), (mail, "a", "mail-a")] {
            _ = try fixture.secrets.setSecret(Data(value.utf8), forKey: key, pluginID: plugin, by: fixture.admin)
        }
        let attacker = fixture.attacker()
        // Same plug-in, same data key version, another key name.
        try await attacker.execute(
            """
            UPDATE secret_values SET sealed = (SELECT sealed FROM secret_values WHERE plugin_id = ?1 AND key = 'a')
            WHERE plugin_id = ?1 AND key = 'b'
            """, .text(calendar))
        #expect(boardError { _ = try fixture.secrets.secret(forKey: "b", pluginID: calendar, by: fixture.admin) }?.code == .integrity)
        // Another plug-in, same key name.
        try await attacker.execute(
            """
            UPDATE secret_values SET sealed = (SELECT sealed FROM secret_values WHERE plugin_id = ?1 AND key = 'a')
            WHERE plugin_id = ?2 AND key = 'a'
            """, .text(calendar), .text(mail))
        let spiError = await secureStorageError { _ = try await fixture.secrets.storage(forPlugin: mail).data(forKey: "a") }
        #expect(spiError?.code == .integrityFailure)
        // A wrapped data key copied to another plug-in does not unwrap there.
        try await attacker.execute(
            """
            UPDATE secret_data_keys SET wrapped_key = (SELECT wrapped_key FROM secret_data_keys WHERE plugin_id = ?1 AND version = 1)
            WHERE plugin_id = ?2 AND version = 1
            """, .text(calendar), .text(mail))
        #expect(boardError { _ = try fixture.secrets.secret(forKey: "a", pluginID: mail, by: fixture.admin) }?.code == .integrity)
        // The untouched value still opens.
        #expect(try fixture.secrets.secret(forKey: "a", pluginID: calendar, by: fixture.admin) == Data("calendar-a".utf8))
    }

    // MARK: The master key

    @Test func aWrongMasterKeyIsRefusedBeforeAnythingChanges() throws {
        let fixture = try BoardFixture()
        _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: calendar, by: fixture.admin)
        let before = try fixture.state()
        let wrong = MasterKey.generate()
        let error = boardError {
            _ = try BoardSecureStorage(board: fixture.board, masterKey: wrong, source: .keyFile(path: "/elsewhere.key"))
        }
        #expect(error?.code == .masterKey)
        #expect(error?.message.hasPrefix("this master key does not belong to this board (") == true, "\(String(describing: error))")
        #expect(error?.message.contains(wrong.identifier) == true)
        #expect(error?.message.contains(fixture.secrets.masterKeyIdentifier) == true)
        let env = EnvironmentKeyProvider(environment: ["PLUGBOARD_MASTER_KEY": wrong.withUnsafeBytes { Data($0).base64EncodedString() }])
        #expect(
            boardError { _ = try BoardSecureStorage.open(board: fixture.board, environment: env) }?.message.contains("PLUGBOARD_MASTER_KEY")
                == true)
        #expect(try fixture.state() == before)
    }

    /// An instance still holding the old key after another one rotated: every operation is refused in its
    /// transaction, before anything is read or written, and without an audit row.
    @Test func aStaleMasterKeyIsRefusedInsideEveryTransaction() throws {
        let fixture = try BoardFixture()
        _ = try fixture.secrets.setSecret(Data("v".utf8), forKey: "k", pluginID: calendar, by: fixture.admin)
        let other = try BoardSecureStorage.open(board: fixture.board, environment: BoardFixture.noEnvironment)
        _ = try other.rotateMasterKey(to: .generate(), by: fixture.admin)
        let before = try fixture.state()
        let stale = fixture.secrets
        let attempts: [(String, () throws -> Void)] = [
            ("set", { _ = try stale.setSecret(Data("w".utf8), forKey: "k", pluginID: self.calendar, by: fixture.admin) }),
            ("get", { _ = try stale.secret(forKey: "k", pluginID: self.calendar, by: fixture.admin) }),
            ("delete", { _ = try stale.deleteSecret(forKey: "k", pluginID: self.calendar, by: fixture.admin) }),
            ("rotate master", { _ = try stale.rotateMasterKey(to: .generate(), by: fixture.admin) }),
            ("rotate data key", { _ = try stale.rotateDataKey(pluginID: self.calendar, by: fixture.admin) }),
            ("shred", { _ = try stale.shredDataKeys(pluginID: self.calendar, by: fixture.admin) }),
        ]
        for (name, attempt) in attempts {
            let error = boardError(attempt)
            #expect(error?.code == .masterKey, "\(name)")
            #expect(error?.message.hasPrefix("this master key does not belong to this board (") == true, "\(name)")
        }
        #expect(try fixture.state() == before)
    }
}
