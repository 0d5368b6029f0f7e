import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The board: one SQLite file that is the single source of truth for plug-ins, flags, secrets and the audit log.
///
/// Open an existing board with ``open(at:readOnly:)`` and create one with ``create(at:actor:)``.
/// Every change goes through ``write(_:)``: one `BEGIN IMMEDIATE` transaction, so a refused or failed change
/// leaves the board exactly as it was. Reads use ``read(_:)``.
///
/// Board settings: WAL journal (many readers, one writer), foreign keys on, a busy timeout so that a
/// second process waits for the writer instead of failing, files created with mode 0600, and
/// `PRAGMA secure_delete` on every connection, so that deleted or overwritten content (a replaced sealed secret,
/// a shredded data key) is overwritten with zeros instead of lingering in free pages.
public final class Board: Sendable {
    /// The `PRAGMA application_id` of every board ("PLGB"), which tells a board from any other SQLite file.
    public static let applicationID: Int32 = 0x504C_4742
    /// How long a writer waits for another process's write lock before giving up.
    public static let busyTimeout: TimeInterval = 10

    /// The path of the board file.
    public let path: String
    /// The database connection; `DatabaseQueue` over a WAL-mode file.
    public let database: any DatabaseWriter
    /// True when the board was opened read-only (hosts that only read the board).
    public let isReadOnly: Bool

    private init(path: String, database: any DatabaseWriter, isReadOnly: Bool) {
        self.path = path
        self.database = database
        self.isReadOnly = isReadOnly
    }

    /// The folder of the content-addressed artifact store beside the board (`<board>.artifacts`).
    public var artifactsPath: String { path + ".artifacts" }

    /// The master-key file beside the board (`<board>.key`).
    public var keyFilePath: String { path + ".key" }

    // MARK: Opening

    /// Opens an existing board, checking that it is a board and that its schema matches this binary.
    ///
    /// - Parameters:
    ///   - path: The board file.
    ///   - readOnly: Open without write access (a host that only reads).
    ///   - requireCurrentSchema: When true (the default), a board with pending migrations is refused with a
    ///     message that says to run `plugboard migrate`. A board written by a newer Plugboard, or whose applied
    ///     migrations were edited, is always refused.
    /// - Throws: ``BoardError`` with code `.notABoard` or `.schemaMismatch`; the file is never modified.
    public static func open(at path: String, readOnly: Bool = false, requireCurrentSchema: Bool = true) throws(BoardError) -> Board {
        try checkLooksLikeBoard(path)
        let board: Board
        do {
            board = Board(path: path, database: try DatabaseQueue(path: path, configuration: configuration(readOnly: readOnly)), isReadOnly: readOnly)
        } catch {
            throw BoardError(.notABoard, "cannot open the board at \(path): \(describe(error)); check the path and its permissions")
        }
        let appID: Int32
        do {
            appID = try board.database.read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0 }
        } catch {
            throw BoardError(.notABoard, "\(path) is not a Plugboard board (\(describe(error))); create one with plugboard init")
        }
        guard appID == applicationID else {
            throw BoardError(.notABoard, "\(path) is an SQLite database but not a Plugboard board; create a board with plugboard init --db NEW-PATH")
        }
        let status = try board.migrationStatus()
        try status.checkCompatible()
        if requireCurrentSchema, !status.pending.isEmpty {
            throw BoardError(.schemaMismatch, "the board at \(path) needs \(status.pending.count) pending migration(s) (\(status.pending.map(\.fileName).joined(separator: ", "))); run plugboard migrate")
        }
        return board
    }

    /// Creates a new board file with mode 0600, applies every migration, records `actor` as its first admin
    /// and its creator, and creates the `default` environment.
    ///
    /// - Parameter finishing: Runs on the new board once it is migrated, to set up what the board needs beyond
    ///   its schema (`plugboard init` initialises the secure storage there). If it throws, the board files are
    ///   removed as for any other failure, and the error is rethrown.
    /// - Throws: ``BoardError`` if a file already exists at `path` (it is never overwritten) or cannot be created.
    public static func create(
        at path: String, actor: Actor, finishing: (Board) throws(BoardError) -> Void = { _ in }
    ) throws(BoardError) -> Board {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw BoardError(.io, "cannot create the board at \(path): the folder \(directory) does not exist")
            }
        }
        // Create the file ourselves so that it is 0600 from its first byte (never chmod afterwards).
        let fd = Glibc_open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let err = errno
            if err == EEXIST {
                throw BoardError(.conflict, "a file already exists at \(path); plugboard init never overwrites a board (use --db to choose another path)")
            }
            throw BoardError(.io, "cannot create the board at \(path): \(String(cString: strerror(err)))")
        }
        close(fd)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration(readOnly: false))
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            }
            let board = Board(path: path, database: queue, isReadOnly: false)
            _ = try board.migrate(actor: actor, initializing: true)
            try finishing(board)
            return board
        } catch {
            // Leave nothing half-made behind.
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
            if let error = error as? BoardError { throw error }
            throw BoardError(.io, "cannot create the board at \(path): \(describe(error))")
        }
    }

    /// The GRDB configuration every board connection uses.
    static func configuration(readOnly: Bool) -> Configuration {
        var config = Configuration()
        config.readonly = readOnly
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(busyTimeout)
        config.label = "plugboard"
        // Deleted and overwritten content is zeroed in the file (replaced sealed values, shredded data keys).
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON") }
        return config
    }

    /// Refuses, without opening it with SQLite, a path that is missing, not a regular file, or not an SQLite file.
    private static func checkLooksLikeBoard(_ path: String) throws(BoardError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw BoardError(.notABoard, "there is no board at \(path); create one with plugboard init, or pass --db PATH (or set PLUGBOARD_DB)")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw BoardError(.notABoard, "\(path) is not a board: it is not a regular file")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw BoardError(.notABoard, "cannot read the board at \(path): permission denied")
        }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        guard header == Data("SQLite format 3\0".utf8) else {
            throw BoardError(.notABoard, "\(path) is not a Plugboard board (not an SQLite database); check --db, or create a board with plugboard init")
        }
    }

    // MARK: Transactions

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction and commits it; any error rolls everything back.
    ///
    /// Errors thrown by `body` that are ``BoardError`` pass through unchanged; database errors become a
    /// ``BoardError`` with a sentence that says what to do.
    public func write<T>(_ body: (Database) throws -> T) throws(BoardError) -> T {
        guard !isReadOnly else {
            throw BoardError(.notAllowed, "the board at \(path) was opened read-only; changes need write access")
        }
        do {
            return try transaction(body)
        } catch {
            throw mapError(error)
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction like ``write(_:)``, but lets every error through
    /// unchanged, for layers with errors of their own (the secure storage's vault).
    package func transaction<T>(_ body: (Database) throws -> T) throws -> T {
        try database.writeWithoutTransaction { db in
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    /// Runs `body` with read access to a consistent view of the board.
    public func read<T>(_ body: (Database) throws -> T) throws(BoardError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw mapError(error)
        }
    }

    /// Copies the WAL into the board file and truncates the WAL to zero bytes (`PRAGMA wal_checkpoint(TRUNCATE)`),
    /// so that page images written before, such as data keys that were just shredded, no longer sit in the WAL.
    ///
    /// - Returns: `false` when a reader kept the checkpoint from completing; the WAL is then truncated at a later
    ///   checkpoint. Never throws for that.
    @discardableResult
    public func checkpointWAL() throws(BoardError) -> Bool {
        guard !isReadOnly else { return false }
        do {
            return try database.writeWithoutTransaction { db in
                let row = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                return (row?[0] as Int?) == 0
            }
        } catch {
            throw mapError(error)
        }
    }

    /// Turns any error into a ``BoardError`` that names the board and says what to do.
    func mapError(_ error: any Error) -> BoardError {
        if let error = error as? BoardError { return error }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return BoardError(.io, "the board at \(path) is busy: another process held the write lock for more than \(Int(Self.busyTimeout)) seconds; try again")
            case .SQLITE_READONLY:
                return BoardError(.notAllowed, "the board at \(path) is read-only for this user; run as a user who can write it")
            case .SQLITE_NOTADB, .SQLITE_CORRUPT:
                return BoardError(.notABoard, "\(path) is not a readable Plugboard board (the database file is damaged or not SQLite)")
            case .SQLITE_CONSTRAINT:
                return BoardError(.conflict, "the board refused the change because it would break a constraint (\(error.message ?? "constraint failed")); nothing was changed")
            default:
                return BoardError(.io, "the board at \(path) could not complete the operation (SQLite: \(error.message ?? "\(error.resultCode)")); nothing was changed")
            }
        }
        return BoardError(.io, "the operation on the board at \(path) failed: \(Self.describe(error)); nothing was changed")
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        return "\(error)"
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
