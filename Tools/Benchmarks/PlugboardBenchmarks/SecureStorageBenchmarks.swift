import Benchmark
import BenchmarkContexts
import Crypto
import Foundation
import GRDB
import PlugboardBoardSecureStorage
import PlugboardModel
import PlugboardPluginAPI
import PlugboardSecureStorage
import PlugboardStore

/// A plug-in's secure storage on a scratch board (what `BoardSecureStorage.storage(forPlugin:)` hands a plug-in), and
/// what it is measured against: a plaintext row of the same size in a plain SQLite file opened the way a board is
/// (one GRDB `DatabaseQueue`, WAL, `secure_delete`), and AES-GCM alone on the same bytes.
final class SecureStorageFixture {
    let scratch: ScratchBoard
    let storage: any SecureStorage
    let plain: DatabaseQueue
    let key = SymmetricKey(size: .bits256)
    let value: Data
    let sealed: AES.GCM.SealedBox

    /// A board with the bench plug-in, `others` more registered plug-ins (a registry's rows make the state proof's
    /// buckets fuller, which a put hashes again) and `auditRows` more audit rows (a long log: its indexes outgrow
    /// SQLite's page cache).
    init(size: Int, others: Int = 0, auditRows: Int = 0) throws {
        scratch = try ScratchBoard("secrets")
        try scratch.register("com.example.bench", "1.0.0")
        if others > 0 {
            let manifests = try (0..<others).map { index in
                try PluginManifest.parse(Data("{\"id\":\"com.example.p\(index)\",\"name\":\"P\(index)\",\"version\":\"1.0.0\"}".utf8))
            }
            _ = try scratch.board.register(manifests, by: Fixtures.admin)
        }
        for start in stride(from: 0, to: auditRows, by: 1000) {
            // The rows a plug-in's puts leave, 1,000 to a change.
            let entries = (start..<min(start + 1000, auditRows)).map { index in
                AuditEntry(
                    action: .secretWrite, targetType: "plugin", targetID: "com.example.p\(index % 10_000)",
                    after: .object(["data_key_versions": .array([.int(1)]), "keys": .array([.string("k")])]))
            }
            try scratch.board.appendAuditEntries(entries, by: Fixtures.admin)
        }
        let secrets = try BoardSecureStorage.initialize(
            board: scratch.board, by: Fixtures.admin, environment: EnvironmentKeyProvider(variableName: "PLUGBOARD_BENCH_NO_KEY")
        ).secrets
        storage = try secrets.storage(forPlugin: "com.example.bench")
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        plain = try DatabaseQueue(path: scratch.folder.appendingPathComponent("plain.sqlite").path, configuration: configuration)
        try plain.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
        }
        var generator = SplitMixBytes(seed: UInt64(size))
        value = Data((0..<size).map { _ in generator.next() })
        sealed = try AES.GCM.seal(value, using: key)
    }

    func putPlain() throws {
        try plain.write { db in try db.execute(sql: "INSERT OR REPLACE INTO kv (key, value) VALUES ('k', ?)", arguments: [value]) }
    }

    func getPlain() throws -> Data? {
        try plain.read { db in try Data.fetchOne(db, sql: "SELECT value FROM kv WHERE key = 'k'") }
    }
}

/// Bytes of a seeded generator (the values are not all zeros, which compress or page differently).
struct SplitMixBytes {
    private var generator: SplitMix64
    init(seed: UInt64) { generator = SplitMix64(seed: seed) }
    mutating func next() -> UInt8 { UInt8(truncatingIfNeeded: generator.next()) }
}

func secureStorageBenchmarks() {
    let sizes: [(String, Int)] = [("64B", 64), ("4KiB", 4 << 10), ("1MiB", 1 << 20)]
    for (label, size) in sizes {
        let configuration = Benchmark.Configuration(
            metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 5, maxDuration: .seconds(2),
            maxIterations: size >= 1 << 20 ? 200 : 2000)

        // Each measure: its name, what one iteration does, and what the fixture needs first (a stored value to read).
        let measures: [(String, (SecureStorageFixture) async throws -> Void, (SecureStorageFixture) async throws -> Void)] = [
            ("secure.put", { try await $0.storage.set($0.value, forKey: "k") }, { _ in }),
            ("secure.get", { blackHole(try await $0.storage.data(forKey: "k")) }, { try await $0.storage.set($0.value, forKey: "k") }),
            // A read right after the same store's write: the write's proofs carry over, so the read proves nothing again.
            (
                "secure.put-get",
                {
                    try await $0.storage.set($0.value, forKey: "k")
                    blackHole(try await $0.storage.data(forKey: "k"))
                }, { _ in }
            ),
            ("plain-row.put", { try $0.putPlain() }, { _ in }),
            ("plain-row.get", { blackHole(try $0.getPlain()) }, { try $0.putPlain() }),
            ("aes-gcm.seal", { blackHole(try AES.GCM.seal($0.value, using: $0.key)) }, { _ in }),
            ("aes-gcm.open", { blackHole(try AES.GCM.open($0.sealed, using: $0.key)) }, { _ in }),
        ]
        for (name, body, prepare) in measures {
            // The secure put and get of 64 B also on a board of 10,000 registered plug-ins: a plug-in's secure
            // storage should not cost more because the registry is large. The put also after 200,000 audit rows.
            var boards: [(suffix: String, others: Int, auditRows: Int)] = [("", 0, 0)]
            if size == 64 && name.hasPrefix("secure.") { boards.append((".registry-10k", 10_000, 0)) }
            if size == 64 && name == "secure.put" { boards.append((".audit-200k", 0, 200_000)) }
            for board in boards {
                Benchmark("\(name).\(label)\(board.suffix)", configuration: configuration) { benchmark, fixture in
                    for _ in benchmark.scaledIterations { try await body(fixture) }
                } setup: {
                    let fixture = try SecureStorageFixture(size: size, others: board.others, auditRows: board.auditRows)
                    try await prepare(fixture)
                    return fixture
                } teardown: {
                    ScratchBoard.removeAll()
                }
            }
        }
    }
}
