import Foundation
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// `StateDigest.BucketEntries`, the lines of a bucket a connection keeps between its changes, must hash as the bucket
/// hashed from scratch (`StateDigest.bucketHash`, which sorts) after any sequence of digests set and lines removed.
@Suite("state proof: kept bucket entries", .timeLimit(.hangGuard))
struct StateBucketEntriesTests {
    /// Tables and keys whose bytes are prefixes of one another (`plugin` and `plugin_versions`, `["a"]` and `["a",1]`),
    /// differ past ASCII, or sort apart from Swift's `String` order, so that a line goes before, between and after
    /// others and every later line moves.
    static let tables = ["plugin", "plugin_versions", "secret_values", "flags"]
    static let keys: [String] = {
        var keys = [#"["a"]"#, #"["a",1]"#, #"["ab"]"#, #"["A"]"#, #"["é"]"#, #"["e\u0301"]"#, #"["z","k"]"#, "[]"]
        for index in 0..<24 { keys.append("[\"com.example.p\(index)\",\"\(String(repeating: "k", count: index % 7))\"]") }
        return keys
    }()

    @Test func keptLinesHashAsTheBucketFromScratchAfterEveryChange() {
        var entries = StateDigest.BucketEntries()
        var reference: [StateEntity: String] = [:]
        #expect(entries.hash == StateDigest.emptyBucket)
        let entities = Self.tables.flatMap { table in Self.keys.map { StateEntity(table: table, key: $0) } }
        for step in 0..<2500 {
            // A fixed walk over the entities (Knuth's multiplicative hash), removing a line a third of the time so
            // that the bucket fills and empties again.
            let mixed = (step &* 2_654_435_761) >> 7
            let entity = entities[mixed % entities.count]
            let digest: String? = mixed % 3 == 0 ? nil : String(format: "%064d", step)
            entries.set(entity, digest)
            reference[entity] = digest
            let expected = StateDigest.bucketHash(reference.map { ($0.key, $0.value) })
            guard entries.hash == expected else {
                Issue.record("step \(step): setting \(entity) to \(digest ?? "nothing") hashes apart from the bucket from scratch")
                return
            }
        }
        #expect(reference.count > 40, "the bucket should have filled: \(reference.count) lines")
    }
}
