import Foundation
import GRDB
import GRDBSQLite

/// The state proof's operations: what a change commits to, and how the log's digests are checked against the rows.
enum StateLedger {
    /// What one change commits to: the digests of the rows it touched, after it, and the state root.
    struct Commitment {
        /// The `state_changes` text (nil when the change touched no row of ``StateTables``).
        let changes: String?
        /// The board-wide state root after the change.
        let root: String
        /// The 256 stored bucket hashes after the change.
        let buckets: StateDigest.BucketLines
        /// The digests of the rows the change touched (nil for a row it removed), now in the index.
        let digests: [StateEntity: String?]
        /// The buckets whose stored hashes the change wrote.
        let touchedBuckets: Set<Int>
        /// The entries of the buckets this change and the ones before it hashed, as they are after it (at most
        /// ``StateCache/keptBucketEntries`` buckets).
        let bucketEntries: [Int: StateDigest.BucketEntries]
    }

    /// Computes the digests of the rows this change touched (of every row with `baseline`), updates the index of
    /// digests and buckets, and returns what the change's last audit row records. Runs inside the change's
    /// transaction, after its body. `schema` gives (and keeps) the columns of each table; `kept`, when known, is what
    /// the connection's last change left of the index in the state of the file before this change: the stored bucket
    /// hashes, which are otherwise read, and the entries of some buckets, which are otherwise read from the index.
    static func commit(_ db: Database, baseline: Bool, schema: inout StateCache.Schema, kept: StateCache.Buckets?) throws
        -> Commitment
    {
        var changes: [StateEntity: String?] = [:]
        if baseline {
            var current: [StateEntity: String] = [:]
            for table in StateTables.all where try db.tableExists(table.name) {
                try StateQueries.forEachDigest(db, table) { key, digest in current[StateEntity(table: table.name, key: key)] = digest }
            }
            for entity in try StateQueries.allIndexed(db).keys where current[entity] == nil { changes[entity] = .some(nil) }
            for (entity, digest) in current { changes[entity] = digest }
        } else {
            for entity in try StateQueries.touched(db) {
                changes[entity] = .some(try StateQueries.digest(db, entity, columns: try schema.columns(db, entity.table)))
            }
        }
        try StateQueries.clearTouched(db)

        var changesByBucket: [Int: [(StateEntity, String?)]] = [:]
        // Buckets where the index held an entry of this change in another bucket than its key's (an edit behind the
        // board's back): what is kept of them no longer follows from the change, so they are read from the index.
        var misplaced = Set<Int>()
        for (entity, digest) in changes {
            let bucket = StateDigest.bucket(entity)
            if let indexed = try StateQueries.setIndexed(db, entity, bucket: bucket, digest: digest), indexed != bucket {
                misplaced.formUnion([bucket, indexed])
            }
            changesByBucket[bucket, default: []].append((entity, digest))
        }
        var buckets = try kept?.hashes ?? StateDigest.BucketLines(reading: { try StateQueries.forEachBucketHash(db, $0) })
        var entries = kept?.entries ?? [:]
        for bucket in misplaced { entries[bucket] = nil }
        // Bounded memory: room is made for the buckets this change touches by dropping others; past the bound, a
        // bucket is hashed from the index without keeping its entries.
        let touchedBuckets = Set(changesByBucket.keys)
        var excess = entries.count + touchedBuckets.subtracting(entries.keys).count - StateCache.keptBucketEntries
        for bucket in entries.keys where excess > 0 && !touchedBuckets.contains(bucket) {
            entries[bucket] = nil
            excess -= 1
        }
        // The buckets whose entries are not known are read from the index: one at a time, or all in one pass over it
        // when there are more than ``onePassBuckets``.
        let unread = touchedBuckets.subtracting(entries.keys)
        var passHashes: [Int: String] = [:]
        if unread.count > onePassBuckets {
            let room = max(0, StateCache.keptBucketEntries - entries.count)
            let pass = try StateQueries.indexedBuckets(db, unread, keeping: Set(unread.subtracting(misplaced).sorted().prefix(room)))
            passHashes = pass.hashes
            entries.merge(pass.entries) { _, read in read }
        }
        for (bucket, bucketChanges) in changesByBucket {
            let hash: String
            if let read = passHashes[bucket] {
                hash = read
            } else if var known = entries.removeValue(forKey: bucket) {
                // The index's entries before this change, with what it wrote to the index above.
                for (entity, digest) in bucketChanges { known.set(entity, digest) }
                hash = known.hash
                entries[bucket] = known
            } else {
                let read = try StateQueries.indexedBucket(db, bucket)
                hash = read.entries.hash
                if read.keepable, !misplaced.contains(bucket), entries.count < StateCache.keptBucketEntries {
                    entries[bucket] = read.entries
                }
            }
            try StateQueries.setBucketHash(db, bucket, hash)
            buckets.set(bucket, hash)
        }
        return Commitment(
            changes: StateDigest.changesText(changes), root: buckets.root, buckets: buckets, digests: changes,
            touchedBuckets: touchedBuckets, bucketEntries: entries)
    }

    /// Past this many buckets to read from the index, a change reads them in one pass over the whole index
    /// (``StateQueries/indexedBuckets(_:_:keeping:)``) rather than one look-up by bucket each: a look-up through the
    /// index by bucket reads each entry's row again, so a quarter of the buckets costs about as much as the pass.
    static let onePassBuckets = 64

    /// The state root of the index, for audit rows written outside a change (refusals): the state did not change.
    static func currentRoot(_ db: Database) throws -> String {
        try StateQueries.storedRoot(db)
    }

    // MARK: Verification

    /// Compares the digests the log expects (replayed from its rows) with the board's rows and with the index.
    /// Returns the problems, each naming a table and a row, and the root of the rows as they are.
    static func compare(_ db: Database, expected: [StateEntity: String], recordedRoot: String?) throws -> (
        problems: [String], root: String, rows: Int
    ) {
        // The usual case: rows, log and index agree. Each row and each index entry is looked up in the log's map as it
        // is read (no map of the rows or of the index is built); the index, read in key order, then gives the bucket
        // hashes without sorting. Only when something differs is the slow path below needed, to name what differs.
        // Without the index (its tables dropped: the structure check names that), the rows are compared with the log alone.
        let hasIndex = try db.tableExists("state_digests") && db.tableExists("state_buckets")
        if hasIndex, let rows = try agreeingRowCount(db, expected: expected), let buckets = try indexBucketHashes(db) {
            let root = StateDigest.root(buckets)
            if recordedRoot == nil || recordedRoot == root, try StateQueries.bucketHashes(db) == buckets {
                return ([], root, rows)
            }
        }
        var problems: [String] = []
        var actual: [StateEntity: String] = [:]
        actual.reserveCapacity(expected.count)
        for table in StateTables.all where try db.tableExists(table.name) {
            try StateQueries.forEachDigest(db, table) { key, digest in actual[StateEntity(table: table.name, key: key)] = digest }
        }
        let indexed = hasIndex ? try StateQueries.allIndexed(db) : expected
        for entity in actual == expected ? [] : Set(actual.keys).union(expected.keys).sorted() {
            if let problem = difference(db, entity, logged: expected[entity], current: actual[entity]) { problems.append(problem) }
        }
        let actualBuckets = StateDigest.bucketHashes(of: actual)
        let root = StateDigest.root(actualBuckets)
        if problems.isEmpty, let recordedRoot, recordedRoot != root {
            problems.append("the state root of the rows (\(root)) differs from the one the log recorded last (\(recordedRoot))")
        }
        if !hasIndex {
            // Named by the structure check.
        } else if indexed != expected {
            let differing = Set(indexed.keys).union(expected.keys).filter { indexed[$0] != expected[$0] }.sorted()
            problems.append(
                "state_digests: the index of digests differs from the log for \(differing.count) row(s) (first: \(differing[0].table) \(differing[0].readableKey)); hosts check against it"
            )
        } else if try StateQueries.bucketHashes(db) != (problems.isEmpty ? actualBuckets : StateDigest.bucketHashes(of: expected)) {
            problems.append("state_buckets: the bucket hashes differ from the log's digests; hosts check against them")
        }
        return (problems, root, actual.count)
    }

    /// The number of rows of policy when every row and every index entry has the digest `expected` gives it, and
    /// both have as many entries as `expected` (keys are unique in both, so the three maps are then equal); `nil`
    /// otherwise.
    private static func agreeingRowCount(_ db: Database, expected: [StateEntity: String]) throws -> Int? {
        var rows = 0
        var agree = true
        for table in StateTables.all where try db.tableExists(table.name) {
            try StateQueries.forEachDigest(db, table) { key, digest in
                rows += 1
                if agree, expected[StateEntity(table: table.name, key: key)] != digest { agree = false }
            }
        }
        guard agree, rows == expected.count else { return nil }
        var entries = 0
        try StateQueries.forEachIndexed(db) { entity, digest in
            entries += 1
            if agree, expected[entity] != digest { agree = false }
        }
        return agree && entries == expected.count ? rows : nil
    }

    /// How a row differs from what the log recorded (`logged`, nil when the log has no such row), or nil when it does not.
    static func difference(_ db: Database, _ entity: StateEntity, logged: String?, current: String?) -> String? {
        switch (logged, current) {
        case (nil, .some): return "\(entity.table): row \(entity.readableKey) was added without an audit row"
        case (.some, nil): return "\(entity.table): row \(entity.readableKey) was removed outside the log"
        case (.some(let logged), .some(let current)) where logged != current:
            return "\(entity.table): \(describeChange(db, entity)) outside the log"
        default: return nil
        }
    }

    /// The rows of `table` whose key begins with `prefix` (every row when it is empty) compared with the index entries
    /// of the same keys: one sentence per row added, changed or removed behind the log's back. A host proves this way
    /// what it must see whole (every kill switch; a release's dependencies, versions and signatures), where a row
    /// missing from its reads would otherwise go unnoticed.
    static func rangeProblems(_ db: Database, table name: String, prefix: [any DatabaseValueConvertible]) throws -> [String] {
        guard let table = StateTables.byName[name], prefix.count <= table.key.count else { return [] }
        var rows: [String: String] = [:]
        let columns = try StateQueries.columns(db, name)
        let condition = prefix.isEmpty ? "" : " WHERE " + table.key.prefix(prefix.count).map { "\($0) = ?" }.joined(separator: " AND ")
        let statement = try db.cachedStatement(
            sql: "SELECT \(table.keyExpression()), \(columns.joined(separator: ", ")) FROM main.\(name)\(condition)")
        try statement.setArguments(StatementArguments(prefix))
        try StateQueries.forEachRow(db, statement) { handle in
            let key = sqlite3_column_text(handle, 0).map { String(cString: $0) } ?? ""
            rows[key] = StateDigest.rowDigest(table: name, columns: columns, statement: handle, offset: 1)
            return true
        }
        var indexed: [String: String] = [:]
        var arguments: [any DatabaseValueConvertible] = [name]
        if !prefix.isEmpty {
            // The keys that begin `["a","1.0.0",` sort between that text and the same text ending in the byte after `,`.
            let open = String(try StateQueries.key(db, prefix).dropLast()) + ","
            arguments += [open, String(open.dropLast()) + "-"]
        }
        let index = try db.cachedStatement(
            sql: "SELECT key, digest FROM state_digests WHERE tbl = ?" + (prefix.isEmpty ? "" : " AND key > ? AND key < ?"))
        try index.setArguments(StatementArguments(arguments))
        try StateQueries.forEachRow(db, index) { handle in
            func text(_ column: Int32) -> String { sqlite3_column_text(handle, column).map { String(cString: $0) } ?? "" }
            indexed[text(0)] = text(1)
            return true
        }
        guard rows != indexed else { return [] }
        return Set(rows.keys).union(indexed.keys).sorted().compactMap { key in
            difference(db, StateEntity(table: name, key: key), logged: indexed[key], current: rows[key])
        }
    }

    /// "row X was changed", or for a kill switch what happened to it.
    private static func describeChange(_ db: Database, _ entity: StateEntity) -> String {
        if entity.table == "kill_switches",
            let row = try? Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT scope, plugin_id, version, revived_at FROM kill_switches WHERE id = json_extract(?, '$[0]')"),
                arguments: [entity.key])
        {
            let target: String =
                row["scope"] == "all"
                ? "all plug-ins" : [row["plugin_id"], row["version"]].compactMap { $0 as String? }.joined(separator: "@")
            let revived = (row["revived_at"] as String?) != nil
            return "the kill switch on \(target) (row \(entity.readableKey)) was \(revived ? "revived or edited" : "edited")"
        }
        return "row \(entity.readableKey) was changed"
    }

    // MARK: Hosts

    /// Checks that `entities` (rows a host relies on) have the digests the index of the log's digests gives them (none
    /// when the index has none). Returns one sentence per problem. The index itself is proven by ``HeadProof``.
    static func check(_ db: Database, _ entities: [StateEntity]) throws -> [String] {
        var problems: [String] = []
        var columns: [String: [String]] = [:]
        for entity in entities {
            if columns[entity.table] == nil { columns[entity.table] = try StateQueries.columns(db, entity.table) }
            let current = try StateQueries.digest(db, entity, columns: columns[entity.table]!)
            if let problem = difference(db, entity, logged: try StateQueries.indexedDigest(db, entity), current: current) {
                problems.append(problem)
            }
        }
        return problems
    }

    /// The 256 bucket hashes of the index as it is (by its stored bucket numbers); nil when a bucket number is out of
    /// range. One pass over the table in its primary-key order, (tbl, key) as bytes, which is the order of each
    /// bucket's lines: every line goes straight into its bucket's hash, with no sorting and no strings made.
    static func indexBucketHashes(_ db: Database) throws -> [String]? {
        var hashers = StateDigest.BucketHashers()
        var inRange = true
        try StateQueries.forEachRow(db, sql: "SELECT bucket, tbl, key, digest FROM state_digests ORDER BY tbl, key") { handle in
            let bucket = Int(sqlite3_column_int64(handle, 0))
            inRange = (0..<256).contains(bucket)
            if inRange {
                hashers.add(
                    bucket: bucket, table: StateQueries.bytes(handle, 1), key: StateQueries.bytes(handle, 2),
                    digest: StateQueries.bytes(handle, 3))
            }
            return inRange
        }
        return inRange ? hashers.finalize() : nil
    }

    /// Proves one row read outside a change against the log: its digest is the index's, its bucket hashes to the
    /// stored bucket hash, the buckets to the state root of the last audit row, and that row is intact. Nil when
    /// proven, when the board predates the proof, or when the current change wrote the row; otherwise a sentence.
    /// Costs one bucket of the index (about 1/256 of it), not a pass over the log; with `proven`, nothing again for a
    /// row, bucket or root already proven while the file was in the same state (see ``ProvenRows``); `state` is that
    /// state when the caller already read it in this transaction.
    static func proveRow(_ db: Database, _ entity: StateEntity, proven: ProvenRows? = nil, state: ProvenRows.FileState? = nil)
        throws -> String?
    {
        var proofs = try proven.map { $0.proofs(in: try state ?? ProvenRows.state(db)) } ?? ProvenRows.Proofs()
        if proofs.rows.contains(entity) { return nil }
        guard try StateQueries.isTracked(db) else {
            return try StateQueries.expectsProof(db) ? "cannot be proven: the state proof's tables were dropped behind the audit log" : nil
        }
        if try StateQueries.wasTouched(db, entity) { return nil }
        let columns = try StateQueries.columns(db, entity.table)
        if try StateQueries.digest(db, entity, columns: columns) != StateQueries.indexedDigest(db, entity) {
            return "does not match the audit log: it was edited or copied back outside Plugboard"
        }
        let unproven = "cannot be proven: the index of the audit log's digests was edited"
        let bucket = StateDigest.bucket(entity)
        if !proofs.buckets.contains(bucket) {
            guard try StateQueries.indexedBucketHash(db, bucket) == (try StateQueries.bucketHash(db, bucket)) else {
                return unproven
            }
            proofs.buckets.insert(bucket)
        }
        if !proofs.root {
            guard let recorded = try StateQueries.lastRecordedRoot(db), try StateQueries.storedRoot(db) == recorded.root,
                let record = try AuditQueries.record(db, seq: recorded.seq), AuditLog.isIntact(record)
            else { return unproven }
            proofs.root = true
        }
        proofs.rows.insert(entity)
        proven?.keep(proofs)
        return nil
    }
}
