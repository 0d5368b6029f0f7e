package import Foundation
import GRDB
import GRDBSQLite
package import PlugboardModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The board: one SQLite file that is the single source of truth for plug-ins, flags, secrets and the audit log.
///
/// Open an existing board with ``open(at:readOnly:requireCurrentSchema:)`` and create one with
/// ``create(at:by:finishing:)``. Open it **once per process** and share the object: a host hands the same `Board`
/// to its flags, its secure storage and itself.
///
/// Callers see operations, never SQL: every change is one typed operation (`register(_:artifactPath:by:)`,
/// ``kill(_:reason:by:)``, `importFlags(_:environment:by:)`, …) that checks who may make it and writes its
/// audit row in the same `BEGIN IMMEDIATE` transaction, so a refused or failed change leaves the board exactly as
/// it was.
///
/// Board settings: WAL journal (readers in other processes never wait for the writer), foreign keys on, a busy
/// timeout so that a second process waits for the writer instead of failing, files created with mode 0600, and
/// `PRAGMA secure_delete`, so that deleted or overwritten content (a replaced sealed secret, a shredded data key) is
/// overwritten with zeros instead of lingering in free pages. Temporary tables and statement journals stay in memory
/// (`PRAGMA temp_store = MEMORY`), never in a temporary file.
///
/// One connection per `Board` (a GRDB `DatabaseQueue`), not a `DatabasePool`: opening a pool writes to the file
/// (GRDB creates and drops a table whenever the WAL is empty, and sets `synchronous = NORMAL`), so every read-only
/// command would become a commit that wakes every running host, refused commands would no longer leave the file
/// byte-for-byte unchanged, and a committed kill switch could be lost on power failure. A board's reads are short
/// and in-process concurrency is low (a host, its flags, its plug-ins' secrets), so one serialized connection costs
/// little; the server keeps its hot data in memory.
package final class Board: Sendable {
    /// The `PRAGMA application_id` of every board ("PLGB"), which tells a board from any other SQLite file.
    package static let applicationID: Int32 = 0x504C_4742
    /// How long a writer waits for another process's write lock before giving up.
    package static let busyTimeout: TimeInterval = 10
    /// The size in bytes the WAL is truncated to after a checkpoint resets it (and to zero when the last connection
    /// closes).
    static let walSizeLimit = 4 << 20

    /// The path of the board file (`:memory:` for a board in memory).
    package let path: String
    /// True when the board was opened read-only (hosts that only read the board).
    package let isReadOnly: Bool
    /// The connection: a `DatabaseQueue` over the WAL file, or any writer a test gives (an in-memory queue).
    let writer: any DatabaseWriter
    /// How many changes were committed through this object: its connection's own commits do not move
    /// `PRAGMA data_version`, so ``version()`` counts them here.
    private let ownChanges: Shared<Int64>
    /// The proofs of the board as a whole this object made (see `Board.proveHead(extending:)`).
    let headProofs: HeadProofs
    /// The rows of the secret tables this connection proved against the audit log, while the file is unchanged.
    let provenRows: ProvenRows
    /// What this connection keeps between its changes: schema facts and the state proof's bucket hashes.
    let stateCache: StateCache
    /// Refused attempts counted and not yet written (``recordRefusal(_:by:because:)``).
    let refusals: RefusalBursts
    /// The telemetry file beside the board, once opened (see `TelemetryFile`).
    let telemetry: Shared<TelemetryFile?>
    /// What this board's first audited change does besides its own work: nil, except on the board that
    /// ``rehearse(_:)`` and ``applying(_:_:)`` hand to a change request's operation (see ``ChangeHook``).
    let changeHook: ChangeHook?
    /// The board file's identity while this object has it open (see `BoardSharing`).
    private let openFile: BoardSharing.FileIdentity?
    /// True when this process may not write the board's `-shm`: SQLite then rebuilds its WAL index in private
    /// memory for every read and `PRAGMA data_version` moves on every read, so ``version()`` follows the audit log.
    private let sharedMemoryIsPrivate: Bool
    /// Where the board reads the time: its changes' timestamps, the rollouts' schedule, the refusals' bursts and the
    /// load reports' times (the system's clocks, or a test's).
    package let clock: TimeSource

    /// How many changes were committed through this object.
    var ownChangeCount: Int64 { ownChanges.withLock { $0 } }

    /// A board over any GRDB writer whose schema is already migrated, for tests of the store's operations
    /// (``inMemory(by:)`` makes one).
    init(writer: any DatabaseWriter, path: String = ":memory:", isReadOnly: Bool = false, clock: TimeSource = .system) {
        self.path = path
        self.clock = clock
        self.writer = writer
        self.isReadOnly = isReadOnly
        self.openFile = path == ":memory:" ? nil : BoardSharing.noteOpened(path)
        self.sharedMemoryIsPrivate = path != ":memory:" && access(path + "-shm", W_OK) != 0
        self.ownChanges = Shared(0)
        self.telemetry = Shared(nil)
        self.changeHook = nil
        self.headProofs = HeadProofs()
        self.provenRows = ProvenRows()
        self.stateCache = StateCache()
        self.refusals = RefusalBursts()
    }

    /// The same board, over the same connection and with the same caches, whose audited changes also run `hook`.
    init(_ board: Board, hook: ChangeHook) {
        path = board.path
        clock = board.clock
        writer = board.writer
        isReadOnly = board.isReadOnly
        openFile = nil
        sharedMemoryIsPrivate = board.sharedMemoryIsPrivate
        ownChanges = board.ownChanges
        telemetry = board.telemetry
        headProofs = board.headProofs
        provenRows = board.provenRows
        stateCache = board.stateCache
        refusals = board.refusals
        changeHook = hook
    }

    deinit {
        if let openFile { BoardSharing.noteClosed(openFile) }
    }

    /// A new board in memory, migrated and initialised with `actor` as its first admin, reading the time from `clock`:
    /// for tests. The first one an actor makes in a process is kept, and later ones are copies of it (see `InMemoryBoards`).
    package static func inMemory(by actor: Principal, clock: TimeSource = .system) throws(BoardError) -> Board {
        try InMemoryBoards.board(by: actor, clock: clock)
    }

    /// The folder of the content-addressed artifact store beside the board (`<board>.artifacts`).
    package var artifactsPath: String { path + ".artifacts" }

    /// The master-key file beside the board (`<board>.key`).
    package var keyFilePath: String { path + ".key" }

    /// A warning to show when every user of the machine can read the board file (mode `o+r`), or nil. The board
    /// holds no key material, but its registry, flags and audit log are not for everyone.
    package var exposureWarning: String? { path == ":memory:" ? nil : BoardSharing.exposureWarning(for: path) }

    // MARK: Opening

    /// Opens an existing board, checking that it is a board and that its schema matches this binary.
    ///
    /// - Parameters:
    ///   - path: The board file.
    ///   - readOnly: Open without write access (a host that only reads).
    ///   - requireCurrentSchema: When true (the default), a board with pending migrations is refused with a
    ///     message that says to run `plugboard migrate`. A board written by a newer Plugboard, or whose applied
    ///     migrations were edited, is always refused.
    /// - Throws: `BoardError` with code `.notABoard` or `.schemaMismatch`, or `.io` when another process holds a lock that
    ///   keeps it from being opened; the file is never modified.
    package static func open(at path: String, readOnly: Bool = false, requireCurrentSchema: Bool = true) throws(BoardError) -> Board {
        try checkIsRegularFile(path)
        // Every look at the file goes through SQLite: a plain open()/close() of the board here would drop every POSIX
        // lock this process holds on it, SQLite's included (see `checkIsRegularFile`).
        let notSQLite = BoardError(
            .notABoard, "\(path) is not a Plugboard board (not an SQLite database); check --db, or create a board with plugboard init")
        let writing = !readOnly && access(path, W_OK) == 0
        try BoardSharing.checkSidecars(of: path, writing: writing)
        let queue: DatabaseQueue
        let appID: Int32
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration(readOnly: readOnly))
            appID = try queue.read { db in try Int32.fetchOne(db.cachedStatement(sql: "PRAGMA application_id")) ?? 0 }
            if writing { BoardSharing.alignSidecars(of: path) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw notSQLite
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            throw BoardError(.io, "the board at \(path) is busy: another process holds a lock on it; try again")
        } catch {
            throw BoardError(.notABoard, "cannot open the board at \(path): \(describe(error)); check the path and its permissions")
        }
        guard appID == applicationID else {
            throw BoardError(
                .notABoard, "\(path) is an SQLite database but not a Plugboard board; create a board with plugboard init --db NEW-PATH")
        }
        let board = Board(writer: queue, path: path, isReadOnly: readOnly)
        let status = try board.migrationStatus()
        try status.checkCompatible()
        if requireCurrentSchema, !status.pending.isEmpty {
            let names = status.pending.map(\.fileName).joined(separator: ", ")
            throw BoardError(
                .schemaMismatch, "the board at \(path) needs \(status.pending.count) pending migration(s) (\(names)); run plugboard migrate"
            )
        }
        return board
    }

    /// Creates a new board file with mode 0600, applies every migration, records `actor` as its first admin
    /// and its creator, and creates the `default` environment.
    ///
    /// - Parameters:
    ///   - path: Where the board file is created.
    ///   - actor: Who creates it: its first admin.
    ///   - finishing: Runs on the new board once it is migrated, to set up what the board needs beyond
    ///     its schema (`plugboard init` initialises the secure storage there). If it throws, the board files are
    ///     removed as for any other failure, and the error is rethrown.
    /// - Throws: `BoardError` if a file already exists at `path` (it is never overwritten) or cannot be created.
    package static func create(
        at path: String, by actor: Principal, finishing: (Board) throws(BoardError) -> Void = { _ in }
    ) throws(BoardError) -> Board {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw BoardError(.io, "cannot create the board at \(path): the folder \(directory) does not exist")
            }
        }
        // Create the file ourselves so that it is 0600 from its first byte (never chmod afterwards). No connection to
        // it can exist yet in this process (O_EXCL), so closing this descriptor drops no lock.
        let fd = Glibc_open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let err = errno
            if err == EEXIST {
                throw BoardError(
                    .conflict, "a file already exists at \(path); plugboard init never overwrites a board (use --db to choose another path)"
                )
            }
            throw BoardError(.io, "cannot create the board at \(path): \(String(cString: strerror(err)))")
        }
        close(fd)
        do {
            let board = try makeBoard(at: path, by: actor)
            try finishing(board)
            return board
        } catch {
            // Leave nothing half-made behind (the connections are closed by now: `board` is gone).
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
            throw error
        }
    }

    /// Opens the new, empty file, switches it to WAL, stamps it as a board and migrates it.
    private static func makeBoard(at path: String, by actor: Principal) throws(BoardError) -> Board {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration(readOnly: false))
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            }
        } catch {
            throw BoardError(.io, "cannot create the board at \(path): \(describe(error))")
        }
        let board = Board(writer: queue, path: path)
        _ = try board.migrate(by: actor, initializing: true)
        return board
    }

    /// Deleted and overwritten content is zeroed in the file (replaced sealed values, shredded data keys): every
    /// connection sets it, and the migration runner sets it again after each migration.
    static let secureDeletePragma = "PRAGMA secure_delete = ON"

    /// Whether this board's connection runs with `PRAGMA secure_delete` (a setting of the connection, not of the file,
    /// so only the process that holds the connection can tell).
    package func secureDeleteIsOn() throws(BoardError) -> Bool {
        try read { db in try Bool.fetchOne(db.cachedStatement(sql: "PRAGMA secure_delete")) ?? false }
    }

    /// The GRDB configuration every board connection uses.
    static func configuration(readOnly: Bool) -> Configuration {
        var config = Configuration()
        config.readonly = readOnly
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(busyTimeout)
        config.label = "plugboard"
        config.prepareDatabase { db in
            try db.execute(sql: secureDeletePragma)
            // Statement journals (a statement with triggers or an upsert keeps the pages it changes until it ends, a
            // whole sealed value when it replaces one) and the temporary table of rows a change touched stay in memory
            // instead of spilling to a temporary file: a 1 MiB secret put wrote about 1 MiB there.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            // Keep the -wal and -shm files when the last connection closes, the WAL truncated to zero bytes: then they
            // always belong to a user who can write the board, and a user who may only read it can still open it
            // (see `BoardSharing`). In memory, there are no such files and SQLite ignores both.
            var persist: Int32 = 1
            _ = sqlite3_file_control(db.sqliteConnection, nil, SQLITE_FCNTL_PERSIST_WAL, &persist)
            try db.execute(sql: "PRAGMA journal_size_limit = \(walSizeLimit)")
        }
        return config
    }

    /// Refuses a path that is missing or not a regular file, with `stat(2)` and `access(2)` only.
    ///
    /// Never open and close the board file (or its `-wal`, `-shm`) with a plain descriptor in a process that may
    /// hold SQLite connections to it: on Linux, `close(2)` of *any* descriptor of a file drops every POSIX lock the
    /// process holds on that file, SQLite's included. Another process then believes it is the last connection,
    /// checkpoints, and deletes the WAL from under the running one ("How To Corrupt An SQLite Database File",
    /// section 2.2). Whether the file is an SQLite database is SQLite's to say (`SQLITE_NOTADB`).
    private static func checkIsRegularFile(_ path: String) throws(BoardError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == EACCES {
                throw BoardError(.notABoard, "cannot read the board at \(path): permission denied on its folder")
            }
            throw BoardError(
                .notABoard, "there is no board at \(path); create one with plugboard init, or pass --db PATH (or set PLUGBOARD_DB)")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw BoardError(.notABoard, "\(path) is not a board: it is not a regular file")
        }
        guard info.st_size > 0 else {
            // SQLite would take an empty file for an empty database.
            throw BoardError(
                .notABoard,
                "\(path) is not a Plugboard board (it is an empty file, not an SQLite database); check --db, or create a board with plugboard init"
            )
        }
        guard access(path, R_OK) == 0 else {
            throw BoardError(.notABoard, "cannot read the board at \(path): permission denied")
        }
    }

    // MARK: Change detection

    /// A value that changes whenever the board changes: another connection (any process) committed, which SQLite
    /// reports as a new `PRAGMA data_version`, or a change was written through this `Board`. Reading it is cheap
    /// (one pragma on the open connection), so a host polls it to notice changes.
    ///
    /// A process that may only read the board, and so cannot write its `-shm`, reads through a private copy of
    /// SQLite's WAL index, where `data_version` moves on every read: there the value follows the head of the audit
    /// log instead (every change a host acts on is audited; load reports and usage counts are not).
    package func version() throws(BoardError) -> BoardVersion {
        do {
            // Always the same connection: data_version is a per-connection counter. The count of own changes is read
            // on the connection too, where a change's commit and its count are one step (see `noteOwnChange()`).
            return try writer.writeWithoutTransaction { db in
                BoardVersion(dataVersion: try changeCounter(db), ownChanges: ownChanges.withLock { $0 })
            }
        } catch {
            throw mapError(error)
        }
    }

    /// The counter behind ``version()``: `PRAGMA data_version`, or the last audit sequence number when the shared
    /// memory is private to this process.
    func changeCounter(_ db: Database) throws -> Int64 {
        let sql = sharedMemoryIsPrivate ? "SELECT coalesce(max(seq), 0) FROM audit_log" : "PRAGMA data_version"
        // Read from SQLite's column buffer (a server polls this 50 times a second: GRDB's cursor cost more than the pragma).
        var counter: Int64 = 0
        try StateQueries.forEachRow(db, db.cachedStatement(sql: sql)) { handle in
            counter = sqlite3_column_int64(handle, 0)
            return false
        }
        return counter
    }

    /// Counts a change committed through this object (see ``version()``). Called on the connection, right after the
    /// commit: a version read in between would name the state before the change while reads see the state after it,
    /// and a server that cached what it read under that version would serve the change's old state until the next
    /// change.
    func noteOwnChange() {
        ownChanges.withLock { $0 += 1 }
    }
}

/// `open(2)` under a name that does not clash with `Board.open`.
@inline(__always)
func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Darwin)
    return Darwin.open(path, flags, mode)
    #elseif canImport(Musl)
    return Musl.open(path, flags, mode)
    #else
    return Glibc.open(path, flags, mode)
    #endif
}
