import GRDB
import GRDBSQLite
import Synchronization

/// The rows a board's connection has proven against the audit log (``StateLedger/proveRow(_:_:proven:state:)``), and the
/// state of the file they were proven in: a row read again while the file is in that same state needs no second
/// proof, because it is the same bytes.
///
/// The state is the connection's `PRAGMA data_version` (it moves whenever any other connection, in this process or
/// another, commits to the file) together with the connection's own count of changed rows
/// (`sqlite3_total_changes64`, which moves with every row this connection inserts, updates or deletes, including in a
/// transaction that is later rolled back). When either moved, every proof is forgotten and rows are proven again,
/// except across a change this connection committed: that change proved what it wrote by construction, and carries
/// the proofs into the state it left (``carry(from:to:rows:removed:buckets:)``). Only rows proven in full are kept,
/// never a row taken as proven because the change in progress wrote it.
///
/// A secure-storage read then costs the reads of its rows and one `PRAGMA`, as long as nothing but this connection's
/// own changes wrote the board since the last read; another process's commit costs one full proof of each row read
/// next.
final class ProvenRows: Sendable {
    /// The state of the file as one connection sees it.
    struct FileState: Hashable {
        let connection: UInt
        let dataVersion: Int64
        let changedRows: Int64
    }

    /// At most this many rows are kept; past it, the set starts over (bounded memory, whatever the board holds).
    static let capacity = 4096

    /// What was proven in one state of the file.
    struct Proofs {
        var state: FileState?
        /// Rows whose digest is their index entry's.
        var rows: Set<StateEntity> = []
        /// Buckets whose index entries hash to their stored bucket hash.
        var buckets: Set<Int> = []
        /// Whether the stored bucket hashes give the state root of the last audit row that records one, and that
        /// row is intact.
        var root = false
    }

    private let proven = Mutex(Proofs())

    /// The state of the file as `db` sees it now, inside its transaction.
    static func state(_ db: Database) throws -> FileState {
        let connection = UInt(bitPattern: db.sqliteConnection.map { Int(bitPattern: $0) } ?? 0)
        let dataVersion = try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
        return FileState(connection: connection, dataVersion: dataVersion, changedRows: sqlite3_total_changes64(db.sqliteConnection))
    }

    /// What was proven in `state` (nothing when the file changed since).
    func proofs(in state: FileState) -> Proofs {
        proven.withLock { $0.state == state ? $0 : Proofs(state: state) }
    }

    /// Keeps `proofs` as what is proven in its state, in place of what was.
    func keep(_ proofs: Proofs) {
        var proofs = proofs
        if proofs.rows.count > Self.capacity { proofs.rows = [] }
        proven.withLock { $0 = proofs }
    }

    /// Carries the proofs across a change this connection committed, which began with the file in state `before` and
    /// left it in state `after`. What the change wrote is proven by construction: it digested each touched row into the
    /// index (`rows`, the rows it left in place), hashed each touched bucket from the index (`buckets`), and recorded the
    /// root of the stored bucket hashes in its audit row. What was proven in `before` and the change did not touch is
    /// the same bytes still. Proofs of another state than `before` are not carried.
    func carry(from before: FileState, to after: FileState, rows: [StateEntity], removed: [StateEntity], buckets: Set<Int>) {
        proven.withLock { proofs in
            var carried = proofs.state == before ? proofs : Proofs()
            carried.state = after
            carried.rows.subtract(removed)
            carried.rows.formUnion(rows)
            if carried.rows.count > Self.capacity { carried.rows = [] }
            carried.buckets.formUnion(buckets)
            carried.root = true
            proofs = carried
        }
    }
}
