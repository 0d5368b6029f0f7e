import GRDB
import Synchronization

/// What a board's connection keeps between its changes so that a change does not read it again from the file: facts
/// of the schema (whether the state proof is there, this connection's triggers, the columns of each table of policy),
/// the 256 stored bucket hashes of the state proof, and the entries of the buckets its recent changes touched.
///
/// Nothing here is trusted without a check that costs one `PRAGMA`:
/// - schema facts belong to one `PRAGMA schema_version` of the main database (it moves with every change of the
///   schema, whichever connection makes it), and are kept only once the change that read them committed, so that a
///   rolled-back change (a failed migration, triggers installed and then rolled back) never leaves a fact behind;
/// - bucket hashes and entries belong to one state of the file as this connection sees it (``ProvenRows/FileState``:
///   `PRAGMA data_version`, which moves when any other connection commits, and the connection's own count of
///   changed rows), and are kept only after the change that wrote them committed. A change that finds the file in
///   another state (another process wrote, or this connection wrote outside a change) reads the stored hashes and
///   the index again, so an edit of `state_buckets` or `state_digests` behind the board's back is seen exactly as
///   without the cache.
final class StateCache: Sendable {
    /// Facts of one version of the schema.
    struct Schema: Sendable {
        /// `PRAGMA schema_version` they belong to.
        let version: Int64
        /// Whether the state proof's tables exist (migration 0006).
        var tracked: Bool?
        /// Whether this connection's triggers that note touched rows are installed.
        var triggers = false
        /// The digested columns of each table of policy, by table.
        var columns: [String: [String]] = [:]
    }

    /// The stored bucket hashes in one state of the file, and the index's entries of the buckets recent changes
    /// touched.
    struct Buckets: Sendable {
        let state: ProvenRows.FileState
        let hashes: StateDigest.BucketLines
        let entries: [Int: StateDigest.BucketEntries]
    }

    /// At most this many buckets' entries are kept (about 20 KB each on a board of 10,000 plug-ins, 1.3 MB in all).
    static let keptBucketEntries = 64

    private let schema = Mutex<Schema?>(nil)
    private let buckets = Mutex<Buckets?>(nil)

    /// The schema's facts for the version `db` has now (empty facts when none are kept for it).
    func schema(_ db: Database) throws -> Schema {
        let version = try StateQueries.schemaVersion(db)
        return schema.withLock { $0?.version == version ? $0! : Schema(version: version) }
    }

    /// The bucket hashes and entries kept for `state`, or nil.
    func buckets(in state: ProvenRows.FileState) -> Buckets? {
        buckets.withLock { $0?.state == state ? $0! : nil }
    }

    /// Keeps what a committed change learned, in place of what was kept.
    func keep(schema facts: Schema?, buckets hashes: Buckets?) {
        if let facts { schema.withLock { $0 = facts } }
        if let hashes { buckets.withLock { $0 = hashes } }
    }
}

extension StateCache.Schema {
    /// Whether the state proof's tables exist, from the facts or from `db`.
    mutating func isTracked(_ db: Database) throws -> Bool {
        if let tracked { return tracked }
        let tracked = try StateQueries.isTracked(db)
        self.tracked = tracked
        return tracked
    }

    /// The digested columns of `table`, from the facts or from `db`.
    mutating func columns(_ db: Database, _ table: String) throws -> [String] {
        if let columns = columns[table] { return columns }
        let read = try StateQueries.columns(db, table)
        columns[table] = read
        return read
    }
}
