import Foundation
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// A change that touches more than `StateLedger.onePassBuckets` buckets rehashes them from one pass over the index
/// (`StateQueries.indexedBuckets`), and keeps some of their entries for the board's later changes. Every stored bucket
/// hash must then be the hash of its entries, whether the next change reads its buckets one by one, from what was
/// kept, or in another pass, and `audit verify` must be content.
@Suite("state proof: buckets read in one pass", .timeLimit(.hangGuard))
struct StateBucketPassTests {
    static let admin = try! Principal(osUser: "alice")

    /// An OSV document for `number` that affects `plugin` from 1.0.0, published at `modified`.
    static func document(_ number: Int, plugin: String, modified: String = "2026-11-20T10:00:00Z") -> (text: String, file: String) {
        let id = "PBSA-2026-\(String(format: "%05d", number))"
        let text = """
            {"schema_version": "1.7.0", "id": "\(id)", "modified": "\(modified)", "aliases": ["CVE-2026-\(20000 + number)"],
             "database_specific": {"severity": "HIGH"},
             "affected": [{"package": {"ecosystem": "Plugboard", "name": "\(plugin)"},
                           "ranges": [{"type": "SEMVER", "events": [{"introduced": "1.0.0"}, {"fixed": "2.0.0"}]}]}]}
            """
        return (text, "\(id).json")
    }

    static func mismatchedBuckets(_ board: Board) throws -> [Int] {
        try board.read { db in
            try (0..<256).filter { try StateQueries.indexedBucketHash(db, $0) != StateQueries.bucketHash(db, $0) }
        }
    }

    @Test func bucketsReadInOnePassHashAsTheIndexInEveryLaterChange() throws {
        let board = try Board.inMemory(by: Self.admin)
        let plugins = (0..<20).map { "com.example.pass\($0)" }
        _ = try board.register(plugins.map { try StoreOperationTests.manifest($0, "1.0.0") }, by: Self.admin)

        // 200 advisories and their ranges: far more buckets than one pass needs.
        _ = try board.importAdvisories((0..<200).map { Self.document($0, plugin: plugins[$0 % plugins.count]) }, by: Self.admin)
        #expect(try Self.mismatchedBuckets(board).isEmpty)

        // Small changes after it: their buckets come from the entries kept, or are read one by one.
        _ = try board.importAdvisories([Self.document(3, plugin: plugins[0], modified: "2026-11-21T10:00:00Z")], by: Self.admin)
        _ = try board.withdrawAdvisory("PBSA-2026-00007", reason: "a false positive", by: Self.admin)
        // Another large change, with entries kept from the ones before: updated rows, new rows, a pass again.
        _ = try board.importAdvisories(
            (150..<300).map { Self.document($0, plugin: plugins[($0 + 1) % plugins.count], modified: "2026-11-22T10:00:00Z") },
            by: Self.admin)
        _ = try board.setAdvisoryAction("PBSA-2026-00160", .stop, environment: "default", by: Self.admin)

        #expect(try Self.mismatchedBuckets(board).isEmpty)
        let verification = try board.verifyAudit()
        #expect(verification.ok, "\(verification.problems)")
        #expect(try board.advisories(affecting: false).count == 300)
    }
}
