import GRDB
import GRDBSQLite

/// The SQL of the state proof.
enum StateQueries {
    /// The migration that brought the state proof (its tables and the audit log's state columns).
    static let proofMigration = 6

    /// Whether the board has the state proof's tables (migration 0006 applied).
    static func isTracked(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'state_buckets')")) ?? false
    }

    /// Whether the board should have the state proof although its tables are not there: its migrations record the
    /// proof's, or an audit row records a state root. Then the tables were dropped behind the log, which is tampering,
    /// never "a board from before the proof". Asked only when ``isTracked(_:)`` is false.
    static func expectsProof(_ db: Database) throws -> Bool {
        if try SchemaProof.appliedVersions(db).contains(proofMigration) { return true }
        guard AuditQueries.hasStateColumns(db) else { return false }
        return try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM audit_log WHERE state_root IS NOT NULL)")) ?? false
    }

    /// The main database's `PRAGMA schema_version`: it moves with every change of the schema, by any connection.
    static func schemaVersion(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA main.schema_version")) ?? 0
    }

    /// Creates, on this connection, the temporary triggers that note every row a change inserts, updates or deletes
    /// in the tables of ``StateTables`` (only in tables that exist). Idempotent. They belong to this connection only:
    /// nothing another process does with the file depends on them, and `audit verify` never trusts them.
    static func installTriggers(_ db: Database) throws {
        // No unique key: an upsert's conflict policy would override a trigger's OR IGNORE. Readers deduplicate.
        // `part0` and `part1` are the key's first two values as they are (what `key` holds as JSON), for readers that
        // need them without parsing the JSON (the secret writes' audit entry).
        try db.execute(
            sql: "CREATE TEMP TABLE IF NOT EXISTS state_touched (tbl TEXT NOT NULL, key TEXT NOT NULL, part0, part1)")
        let existing = try Set(String.fetchAll(db.cachedStatement(sql: "SELECT name FROM main.sqlite_master WHERE type = 'table'")))
        for table in StateTables.all where existing.contains(table.name) {
            let name = table.name
            func note(_ prefix: String) -> String {
                let parts = (0..<2).map { $0 < table.key.count ? prefix + table.key[$0] : "NULL" }.joined(separator: ", ")
                return "INSERT INTO state_touched (tbl, key, part0, part1) VALUES ('\(name)', \(table.keyExpression(prefix)), \(parts));"
            }
            try db.execute(
                sql: """
                    CREATE TEMP TRIGGER IF NOT EXISTS state_\(name)_insert AFTER INSERT ON main.\(name) BEGIN \(note("NEW.")) END;
                    CREATE TEMP TRIGGER IF NOT EXISTS state_\(name)_update AFTER UPDATE ON main.\(name) BEGIN \(note("OLD.")) \(note("NEW.")) END;
                    CREATE TEMP TRIGGER IF NOT EXISTS state_\(name)_delete AFTER DELETE ON main.\(name) BEGIN \(note("OLD.")) END;
                    """)
        }
    }

    /// The proof's key of a row whose primary key holds `values`: SQLite's own `json_array`, as the triggers write it.
    static func key(_ db: Database, _ values: [any DatabaseValueConvertible]) throws -> String {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT json_array(" + Array(repeating: "?", count: values.count).joined(separator: ", ") + ")"),
            arguments: StatementArguments(values)) ?? "[]"
    }

    /// Whether this connection has the triggers of every table of ``StateTables`` that exists.
    static func triggersInstalled(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: triggersInstalledSQL)) ?? false
    }

    private static let triggersInstalledSQL: String = {
        let names = StateTables.all.map { "'\($0.name)'" }.joined(separator: ", ")
        return """
            SELECT (SELECT count(*) FROM temp.sqlite_master WHERE type = 'trigger' AND name GLOB 'state_*')
                 = 3 * (SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name IN (\(names)))
               AND EXISTS (SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = 'state_touched')
            """
    }()

    /// The columns of every table of ``StateTables`` that exists, by table: what a migration may change.
    static func policyShape(_ db: Database) throws -> [String: [String]] {
        var shape: [String: [String]] = [:]
        // One statement for every table (a migration reads the shape before and after itself).
        let rows = try Row.fetchCursor(db.cachedStatement(sql: policyShapeSQL))
        while let row = try rows.next() { shape[row[0], default: []].append(row[1]) }
        return shape
    }

    /// The tables of ``StateTables`` that exist and their columns, in the order of their declaration.
    private static let policyShapeSQL: String = {
        let names = StateTables.all.map { "'\($0.name)'" }.joined(separator: ", ")
        return """
            SELECT m.name, c.name FROM main.sqlite_master AS m, pragma_table_info(m.name) AS c
            WHERE m.type = 'table' AND m.name IN (\(names)) ORDER BY m.name, c.cid
            """
    }()

    /// Whether the tables of policy changed since `before` (``policyShape(_:)``) in a way that changes row digests
    /// the log has not recorded: a table with rows is new or has other columns. A table with no rows has no digest to
    /// change, whatever its columns.
    static func reshapedPolicy(_ db: Database, since before: [String: [String]]) throws -> Bool {
        for (table, columns) in try policyShape(db) where before[table] != columns {
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM main.\(table))") ?? false { return true }
        }
        return false
    }

    /// The rows noted since the last ``clearTouched(_:)``.
    static func touched(_ db: Database) throws -> [StateEntity] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT DISTINCT tbl, key FROM temp.state_touched")).map {
            StateEntity(table: $0[0], key: $0[1])
        }
    }

    /// Whether the change in progress wrote `entity` (false outside a change).
    static func wasTouched(_ db: Database, _ entity: StateEntity) throws -> Bool {
        guard try hasTouchedTable(db) else { return false }
        return try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM temp.state_touched WHERE tbl = ? AND key = ?)"),
            arguments: [entity.table, entity.key])
            ?? false
    }

    /// Whether this connection has made its table of touched rows (GRDB's `tableExists(in: "temp")` throws on a
    /// connection that never used its temp schema).
    static func hasTouchedTable(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM sqlite_temp_master WHERE type = 'table' AND name = 'state_touched')"))
            ?? false
    }

    static func clearTouched(_ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM temp.state_touched").execute()
    }

    /// The column names of `table`, in table order.
    static func columns(_ db: Database, _ table: String) throws -> [String] {
        let excluded = StateTables.byName[table]?.excluded ?? []
        return try String.fetchAll(db.cachedStatement(sql: "SELECT name FROM pragma_table_info(?) ORDER BY cid"), arguments: [table])
            .filter { !excluded.contains($0) }
    }

    /// The current digest of one row, or nil when the row does not exist.
    static func digest(_ db: Database, _ entity: StateEntity, columns: [String]) throws -> String? {
        guard let table = StateTables.byName[entity.table] else { return nil }
        let statement = try db.cachedStatement(
            sql: "SELECT \(columns.joined(separator: ", ")) FROM main.\(table.name) WHERE \(table.keyCondition)")
        try statement.setArguments([entity.key])
        // From SQLite's buffers: a value of a megabyte is hashed where it lies, never copied.
        var digest: String?
        try forEachRow(db, statement) { handle in
            digest = StateDigest.rowDigest(table: table.name, columns: columns, statement: handle, offset: 0)
            return false
        }
        return digest
    }

    /// Steps `sql` with SQLite's own API and calls `row` with the statement at each row, until it returns false: the
    /// passes over whole tables (every row of policy, the whole index) read SQLite's column buffers, which costs less
    /// than GRDB's row objects.
    static func forEachRow(_ db: Database, sql: String, _ row: (OpaquePointer) throws -> Bool) throws {
        try forEachRow(db, try db.makeStatement(sql: sql), row)
    }

    /// ``forEachRow(_:sql:_:)`` over a prepared statement (a cached one, with its arguments set); the statement is
    /// reset when it returns, so that it holds no read lock and can be used again.
    static func forEachRow(_ db: Database, _ statement: Statement, _ row: (OpaquePointer) throws -> Bool) throws {
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            guard try row(handle) else { return }
        }
    }

    /// Calls `body` with the key and digest of every row of `table`.
    static func forEachDigest(_ db: Database, _ table: StateTable, _ body: (String, String) throws -> Void) throws {
        let columns = try columns(db, table.name)
        guard !columns.isEmpty else { return }
        try forEachRow(db, sql: "SELECT \(table.keyExpression()), \(columns.joined(separator: ", ")) FROM main.\(table.name)") {
            handle in
            let key = sqlite3_column_text(handle, 0).map { String(cString: $0) } ?? ""
            try body(key, StateDigest.rowDigest(table: table.name, columns: columns, statement: handle, offset: 1))
            return true
        }
    }

    /// The indexed digest of one entity.
    static func indexedDigest(_ db: Database, _ entity: StateEntity) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT digest FROM state_digests WHERE tbl = ? AND key = ?"), arguments: [entity.table, entity.key])
    }

    /// Calls `body` with every indexed entity and digest, from SQLite's column buffers.
    static func forEachIndexed(_ db: Database, _ body: (StateEntity, String) throws -> Void) throws {
        try forEachRow(db, sql: "SELECT tbl, key, digest FROM state_digests") { handle in
            func text(_ column: Int32) -> String { sqlite3_column_text(handle, column).map { String(cString: $0) } ?? "" }
            try body(StateEntity(table: text(0), key: text(1)), text(2))
            return true
        }
    }

    /// Every indexed digest.
    static func allIndexed(_ db: Database) throws -> [StateEntity: String] {
        var result: [StateEntity: String] = [:]
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: "SELECT tbl, key, digest FROM state_digests"))
        while let row = try cursor.next() { result[StateEntity(table: row[0], key: row[1])] = row[2] }
        return result
    }

    /// Sets (or, with `nil`, removes) the indexed digest of `entity`, and returns the bucket the index holds (or
    /// held) its entry in: `bucket` unless someone moved the entry (nil when a removal found none).
    @discardableResult
    static func setIndexed(_ db: Database, _ entity: StateEntity, bucket: Int, digest: String?) throws -> Int? {
        if let digest {
            // An existing row gets its new digest in place: its bucket follows from its key, so the index by bucket is
            // not rewritten (`INSERT OR REPLACE` deleted and inserted both entries, one more page in each commit).
            return try Int.fetchOne(
                db.cachedStatement(
                    sql: """
                        INSERT INTO state_digests (tbl, key, bucket, digest) VALUES (?, ?, ?, ?)
                        ON CONFLICT (tbl, key) DO UPDATE SET digest = excluded.digest RETURNING bucket
                        """),
                arguments: [entity.table, entity.key, bucket, digest])
        } else {
            return try Int.fetchOne(
                db.cachedStatement(sql: "DELETE FROM state_digests WHERE tbl = ? AND key = ? RETURNING bucket"),
                arguments: [entity.table, entity.key])
        }
    }

    /// The hash of one bucket of the index as it is: `StateDigest.bucketHash` of its entries.
    static func indexedBucketHash(_ db: Database, _ bucket: Int) throws -> String {
        try indexedBucket(db, bucket).entries.hash
    }

    /// The entries of one bucket of the index as it is, read from SQLite's buffers in the order the index by bucket
    /// keeps them, (tbl, key) as bytes: no row objects, no strings, no sorting (a write on a board of 10,000 plug-ins
    /// reads a bucket of about 150 entries). `keepable` is false when one of its values is not text (an edit behind
    /// the board's back): SQLite would order such a value apart from the bytes that ``StateDigest/BucketEntries``
    /// compares, so the entries may be hashed but not kept for later changes.
    static func indexedBucket(_ db: Database, _ bucket: Int) throws -> (entries: StateDigest.BucketEntries, keepable: Bool) {
        let statement = try db.cachedStatement(sql: "SELECT tbl, key, digest FROM state_digests WHERE bucket = ? ORDER BY tbl, key")
        try statement.setArguments([bucket])
        var entries = StateDigest.BucketEntries()
        var keepable = true
        try forEachRow(db, statement) { handle in
            if keepable, !(0..<3).allSatisfy({ sqlite3_column_type(handle, $0) == SQLITE_TEXT }) { keepable = false }
            entries.append(table: bytes(handle, 0), key: bytes(handle, 1), digest: bytes(handle, 2))
            return true
        }
        return (entries, keepable)
    }

    /// The hashes of the index's `buckets` as it is, from one pass over `state_digests` in its primary-key order
    /// (tbl, key), which is each bucket's order, with the entries of those of `keeping` whose values are all text
    /// (see ``indexedBucket(_:_:)``). A change that touched many buckets reads the index this way: one sequential
    /// read of it costs less than a look-up through the index by bucket for each of them (an import of 200
    /// advisories touches nearly all 256).
    static func indexedBuckets(_ db: Database, _ buckets: Set<Int>, keeping: Set<Int>) throws
        -> (hashes: [Int: String], entries: [Int: StateDigest.BucketEntries])
    {
        var hashers = [StateDigest.BucketHasher?](repeating: nil, count: 256)
        var entries = [StateDigest.BucketEntries?](repeating: nil, count: 256)
        for bucket in buckets where (0..<256).contains(bucket) {
            if keeping.contains(bucket) {
                entries[bucket] = StateDigest.BucketEntries()
            } else {
                hashers[bucket] = StateDigest.BucketHasher()
            }
        }
        var unkeepable = Set<Int>()
        let statement = try db.cachedStatement(sql: "SELECT bucket, tbl, key, digest FROM state_digests ORDER BY tbl, key")
        try forEachRow(db, statement) { handle in
            // What `WHERE bucket = ?` matches: an integer (the column's affinity makes one of any number written).
            guard sqlite3_column_type(handle, 0) == SQLITE_INTEGER else { return true }
            let bucket = Int(sqlite3_column_int64(handle, 0))
            guard (0..<256).contains(bucket) else { return true }
            if entries[bucket] != nil {
                if !(1...3).allSatisfy({ sqlite3_column_type(handle, $0) == SQLITE_TEXT }) { unkeepable.insert(bucket) }
                entries[bucket]?.append(table: bytes(handle, 1), key: bytes(handle, 2), digest: bytes(handle, 3))
            } else if hashers[bucket] != nil {
                hashers[bucket]?.add(table: bytes(handle, 1), key: bytes(handle, 2), digest: bytes(handle, 3))
            }
            return true
        }
        var hashes: [Int: String] = [:]
        var kept: [Int: StateDigest.BucketEntries] = [:]
        for bucket in buckets where (0..<256).contains(bucket) {
            if let read = entries[bucket] {
                hashes[bucket] = read.hash
                if !unkeepable.contains(bucket) { kept[bucket] = read }
            } else if let hasher = hashers[bucket] {
                hashes[bucket] = hasher.finalize()
            }
        }
        return (hashes, kept)
    }

    /// The bytes of a column of the statement's current row, in SQLite's buffer (valid until the next step).
    static func bytes(_ handle: OpaquePointer, _ column: Int32) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: sqlite3_column_blob(handle, column), count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// Calls `body` with the 256 stored bucket hashes in bucket order, the empty bucket's hash where none is stored,
    /// from SQLite's buffers (valid during the call).
    static func forEachBucketHash(_ db: Database, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        var next = 0
        func emptyBuckets(upTo bucket: Int) {
            while next < bucket {
                StateDigest.emptyBucketBytes.withUnsafeBytes(body)
                next += 1
            }
        }
        let statement = try db.cachedStatement(sql: "SELECT bucket, hash FROM state_buckets WHERE bucket BETWEEN 0 AND 255 ORDER BY bucket")
        try forEachRow(db, statement) { handle in
            let bucket = Int(sqlite3_column_int64(handle, 0))
            emptyBuckets(upTo: bucket)
            body(bytes(handle, 1))
            next = bucket + 1
            return true
        }
        emptyBuckets(upTo: 256)
    }

    /// The 256 stored bucket hashes, bucket 0 first (the empty bucket's hash where none is stored).
    static func bucketHashes(_ db: Database) throws -> [String] {
        var hashes: [String] = []
        hashes.reserveCapacity(256)
        try forEachBucketHash(db) { hashes.append(String(decoding: $0, as: UTF8.self)) }
        return hashes
    }

    /// The stored hash of one bucket (the empty bucket's hash where none is stored).
    static func bucketHash(_ db: Database, _ bucket: Int) throws -> String {
        try String.fetchOne(db.cachedStatement(sql: "SELECT hash FROM state_buckets WHERE bucket = ?"), arguments: [bucket])
            ?? StateDigest.emptyBucket
    }

    /// The state root of the stored bucket hashes, `StateDigest.root(bucketHashes(db))`, hashed from one buffer of
    /// their lines (no string made for each).
    static func storedRoot(_ db: Database) throws -> String {
        try StateDigest.BucketLines(reading: { try forEachBucketHash(db, $0) }).root
    }

    static func setBucketHash(_ db: Database, _ bucket: Int, _ hash: String) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO state_buckets (bucket, hash) VALUES (?, ?)").execute(arguments: [bucket, hash])
    }

    /// The state root recorded by the last audit row that has one, with that row's sequence.
    static func lastRecordedRoot(_ db: Database) throws -> (seq: Int64, root: String)? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT seq, state_root FROM audit_log WHERE state_root IS NOT NULL ORDER BY seq DESC LIMIT 1")
        ).map {
            ($0[0], $0[1])
        }
    }
}
