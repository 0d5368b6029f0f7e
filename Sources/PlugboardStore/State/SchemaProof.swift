import GRDB
import PlugboardMigrations
import Synchronization

/// The board's structure as its migrations made it: every table, index, trigger and view that the migrations recorded
/// in `schema_migrations` create, with the SQL they create it with.
///
/// A missing or altered object is tampering, never "an older board": a dropped `state_buckets` must not make the state
/// proof look absent, and a replaced append-only trigger must not pass. The expected structure comes from the
/// migrations compiled into this binary, applied to an empty database in memory; objects are compared by type, name,
/// table and SQL (runs of white space made one). Objects the migrations do not make (another tool's table) are named
/// too, except SQLite's own (`sqlite_…`) and Litestream's bookkeeping tables (see ``replicationTables``).
enum SchemaProof {
    /// One schema object as `sqlite_master` lists it.
    struct Object: Hashable {
        let type: String
        let name: String
        let table: String
        let sql: String?

        /// "table state_buckets", "trigger audit_log_no_update on audit_log".
        var described: String { type == "table" || type == "view" ? "\(type) \(name)" : "\(type) \(name) on \(table)" }
    }

    /// The tables Litestream adds to a database it replicates, exactly as it creates them: `_litestream_seq` (one row it
    /// updates to force a WAL frame) and `_litestream_lock` (empty, written to hold the write lock while it checkpoints).
    /// They hold no policy and nothing of the board reads them, so a replicated board still proves itself; a table of
    /// that name with any other definition, or an index, trigger or view on them, is named like any other object.
    static let replicationTables: [String: Object] = [
        "_litestream_seq": Object(
            type: "table", name: "_litestream_seq", table: "_litestream_seq",
            sql: AuditLog.normalized("CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)")),
        "_litestream_lock": Object(
            type: "table", name: "_litestream_lock", table: "_litestream_lock",
            sql: AuditLog.normalized("CREATE TABLE _litestream_lock (id INTEGER)")),
    ]

    /// The expected structures, by the applied migration versions (a process sees few).
    private static let expected = Mutex<[[Int]: [String: Object]]>([:])

    /// The objects the migrations `versions` create, by name.
    static func expectedObjects(_ versions: [Int]) throws -> [String: Object] {
        if let known = expected.withLock({ $0[versions] }) { return known }
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            if let bookkeeping = MigrationCatalog.support["schema_migrations.sql"] { try db.execute(sql: bookkeeping) }
            for version in versions {
                guard let migration = Board.knownMigrations.first(where: { $0.version == version }) else { continue }
                try db.execute(sql: migration.migration.sql)
            }
        }
        let objects = try queue.inDatabase { db in try current(db) }
        expected.withLock { $0[versions] = objects }
        return objects
    }

    /// The objects of the main database, by name.
    static func current(_ db: Database) throws -> [String: Object] {
        var objects: [String: Object] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT type, name, tbl_name, sql FROM main.sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        ) {
            let sql: String? = row[3]
            let object = Object(type: row[0], name: row[1], table: row[2], sql: sql.map(AuditLog.normalized))
            objects[object.name] = object
        }
        return objects
    }

    /// The versions of the migrations the board records as applied, in order (empty for a board without
    /// `schema_migrations`).
    static func appliedVersions(_ db: Database) throws -> [Int] {
        guard try db.tableExists("schema_migrations") else { return [] }
        return try Int.fetchAll(db.cachedStatement(sql: "SELECT version FROM schema_migrations ORDER BY version"))
    }

    /// One sentence per object that differs from what the applied migrations made; empty when the structure is theirs.
    static func problems(_ db: Database) throws -> [String] {
        let versions = try appliedVersions(db)
        var problems: [String] = []
        let known = Set(Board.knownMigrations.map(\.version))
        if let unknown = versions.first(where: { !known.contains($0) }) {
            // A newer binary's board: its structure cannot be checked here (other commands refuse such a board).
            return ["the board records migration \(unknown), which this binary does not know: its structure cannot be checked"]
        }
        // Every migration this binary knows below the newest one applied must be recorded (the numbers this binary has
        // no file for are none of its own).
        let applied = Set(versions)
        if let last = versions.last, let gap = known.sorted().first(where: { $0 < last && !applied.contains($0) }) {
            problems.append(
                "schema_migrations: migration \(gap) is missing from the board's record of applied migrations (a later one, \(last), is recorded)"
            )
        }
        let expected = try expectedObjects(versions)
        let actual = try current(db)
        for name in Set(expected.keys).union(actual.keys).sorted() {
            switch (expected[name], actual[name]) {
            case (.some(let want), nil):
                problems.append("the \(want.described) was dropped behind the audit log (the board's migrations made it)")
            case (nil, .some(let found)) where replicationTables[name] == found:
                break
            case (nil, .some(let found)):
                problems.append("the \(found.described) was added to the board outside its migrations")
            case (.some(let want), .some(let found)) where want != found:
                problems.append("the \(want.described) was replaced by one that differs from what the board's migrations made")
            default:
                break
            }
        }
        return problems
    }
}
