import Foundation
import PlugboardModel
import PlugboardPluginAPI
import PlugboardTestSupport
import Synchronization
import Testing

@testable import PlugboardBoardSecureStorage
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
    let secrets: BoardSecureStorage

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.file("board.sqlite")
        admin = try Principal(osUser: "tester")
        board = try Board.create(at: path, by: admin)
        secrets = try BoardSecureStorage.initialize(board: board, by: admin, environment: Self.noEnvironment).secrets
        for id in [Self.calendar, Self.mail] {
            let manifest = try PluginManifest.parse(Data("{\"id\":\"\(id)\",\"name\":\"N\",\"version\":\"1.0.0\"}".utf8))
            _ = try board.register(manifest, by: admin)
        }
    }

    var keyFile: String { path + ".key" }

    /// The board file as someone with `sqlite3` reads and edits it, in a process of their own.
    func attacker() -> BoardSQL { BoardSQL(path) }

    /// The bytes of the board file and of its WAL, shared-memory and journal files that exist now.
    func files() -> [String: Data] { Self.files(of: path) }

    /// The bytes of the board file at `path` and of its WAL, shared-memory and journal files that exist now.
    static func files(of path: String) -> [String: Data] {
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

    /// The dump is `sqlite3`'s (``BoardSQL/dump()``), read in a process of its own from the committed state.
    func state() throws -> State {
        State(dump: try attacker().dump(), files: files().filter { !$0.key.hasSuffix("-shm") })
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

@Suite("Secure storage on the board", .timeLimit(.hangGuard))
struct BoardSecretsTests {
    let calendar = BoardFixture.calendar
    let mail = BoardFixture.mail

    // MARK: Plaintext never reaches the files

    @Test func plaintextNeverReachesTheBoardFileItsWALOrTheAuditLog() async throws {
        // The fixture lives in this scope only: when it ends, the board and its connection go away.
        var fixture: BoardFixture! = try BoardFixture()
        let marker = "PLAINTEXT-\(UUID().uuidString)"
        let spiMarker = "SPI-PLAINTEXT-\(UUID().uuidString)"
        let keyName = "KEYNAME-\(UUID().uuidString)"
        _ = try fixture.secrets.setSecret(Data(marker.utf8), forKey: keyName, pluginID: calendar, by: fixture.admin)
        _ = try fixture.secrets.setSecret(Data((marker + "-2").utf8), forKey: keyName, pluginID: calendar, by: fixture.admin)
        try await fixture.secrets.storage(forPlugin: mail).set(Data(spiMarker.utf8), forKey: "token")
        #expect(try fixture.secrets.secret(forKey: keyName, pluginID: calendar, by: fixture.admin) == Data((marker + "-2").utf8))
        _ = try fixture.secrets.rotateDataKey(pluginID: calendar, reencrypt: true, by: fixture.admin)

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

        // The board closed (its last reference dropped), its WAL checkpointed into the file; the folder stays.
        let (directory, path) = (fixture.directory, fixture.path)
        fixture = nil
        let closed = BoardFixture.files(of: path)
        #expect(closed[path + "-wal"].map(\.isEmpty) != false, "the closed board's WAL should be checkpointed and emptied")
        withExtendedLifetime(directory) {}
        #expect(!closed.isEmpty)
        for (file, bytes) in closed {
            #expect(!contains(bytes, Data(marker.utf8)), "plaintext in \(file)")
            #expect(!contains(bytes, Data(spiMarker.utf8)), "plaintext in \(file)")
        }
        #expect(closed.values.contains { contains($0, Data(keyName.utf8)) })
    }

    @Test func everyBoardConnectionRunsWithSecureDelete() throws {
        let fixture = try BoardFixture()
        #expect(try fixture.board.secureDeleteIsOn())
        let readOnly = try Board.open(at: fixture.path, readOnly: true)
        #expect(try readOnly.secureDeleteIsOn())
    }

    // MARK: Integrity

    @Test func flippingAnyByteOfAStoredCiphertextNonceOrWrappedKeyIsAnIntegrityError() async throws {
        let fixture = try BoardFixture()
        let value = Data("correct horse".utf8)
        _ = try fixture.secrets.setSecret(value, forKey: "k", pluginID: calendar, by: fixture.admin)
        let spi = try fixture.secrets.storage(forPlugin: calendar)
        let attacker = fixture.attacker()

        let sealed = try #require(
            try await attacker.data("SELECT sealed FROM secret_values WHERE plugin_id = ? AND key = 'k'", .text(calendar)))
        let wrapped = try #require(
            try await attacker.data("SELECT wrapped_key FROM secret_data_keys WHERE plugin_id = ? AND version = 1", .text(calendar)))
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
                try await attacker.execute(target.sql, .blob(flipping(target.original, byte: index, bit: bit)))
                let error = boardError {
                    _ = try fixture.secrets.secret(forKey: "k", pluginID: calendar, by: fixture.admin)
                }
                #expect(error?.code == .integrity, "\(target.what) byte \(index): \(String(describing: error))")
                let spiError = await secureStorageError { _ = try await spi.data(forKey: "k") }
                #expect(spiError?.code == .integrityFailure, "\(target.what) byte \(index)")
            }
            try await attacker.execute(target.sql, .blob(target.original))
            #expect(try fixture.secrets.secret(forKey: "k", pluginID: calendar, by: fixture.admin) == value)
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
        func text(_ sql: String) async throws -> String {
            try #require(try await fixture.attacker().string(sql))
        }
        let row = "WHERE plugin_id = '\(calendar)' AND key = 'token'"
        let indexEntry = "WHERE tbl = 'secret_values' AND key = json_array('\(calendar)', 'token')"
        // The whole row as a backup holds it (sealed value and time, as an `UPDATE … SET` list), and its index entry.
        func savedRow() async throws -> (set: String, digest: String) {
            (
                try await text(
                    "SELECT 'sealed = X''' || hex(sealed) || ''', updated_at = ''' || updated_at || '''' FROM secret_values \(row);"),
                try await text("SELECT digest FROM state_digests \(indexEntry);")
            )
        }
        func setIndexedDigest(_ digest: String) -> String { "UPDATE state_digests SET digest = '\(digest)' \(indexEntry);" }

        let old = try await savedRow()
        try await spi.set(Data("v2".utf8), forKey: "token")
        let current = try await savedRow()
        for _ in 0..<3 { #expect(try await spi.data(forKey: "token") == Data("v2".utf8)) }

        try await fixture.attacker().execute("UPDATE secret_values SET \(old.set) \(row);")
        let copied = await secureStorageError { _ = try await spi.data(forKey: "token") }
        #expect(
            copied?.code == .integrityFailure && copied?.message.contains("does not match the audit log") == true,
            "\(String(describing: copied))")

        try await fixture.attacker().execute(setIndexedDigest(old.digest))
        let indexEdited = await secureStorageError { _ = try await spi.data(forKey: "token") }
        #expect(
            indexEdited?.code == .integrityFailure && indexEdited?.message.contains("cannot be proven") == true,
            "\(String(describing: indexEdited))")

        try await fixture.attacker().execute(setIndexedDigest(current.digest) + "UPDATE secret_values SET \(current.set) \(row);")
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
        let bucket = try await Self.bucket(
            fixture,
            """
            SELECT bucket FROM state_buckets WHERE bucket NOT IN
              (SELECT bucket FROM state_digests WHERE tbl IN ('secret_values', 'secret_data_keys')) ORDER BY bucket LIMIT 1;
            """)
        try await fixture.attacker().execute(
            "PRAGMA ignore_check_constraints = ON; UPDATE state_buckets SET hash = '\(editedHash)' WHERE bucket = \(bucket);")
        try await spi.set(Data("v3".utf8), forKey: "token")

        // Read by other connections than the fixture's: the root the last row recorded, and the root of the stored hashes.
        let recorded = try await fixture.attacker().string("SELECT state_root FROM audit_log ORDER BY seq DESC LIMIT 1")
        let stored = try Board.open(at: fixture.path, readOnly: true).read { db in try StateQueries.storedRoot(db) }
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
        _ = try fixture.board.register(manifests, by: fixture.admin)
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

}
