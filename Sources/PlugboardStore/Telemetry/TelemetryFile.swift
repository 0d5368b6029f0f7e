import Foundation
import GRDB
package import PlugboardModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How much telemetry (hosts' load reports, SDK registrations and usage counts) is kept, and where.
///
/// Telemetry lives in a SQLite file of its own beside the board, `<board>.telemetry`, never in the board: writing it
/// never takes the board's write lock, so no flood of reports or metrics can delay a kill switch. The file is created
/// with the board file's mode and group. It is bounded by rows (the oldest go first) and by size: SQLite refuses to
/// grow it past ``maxFileBytes``, and a batch that would is dropped and counted.
package enum TelemetryLimits {
    /// The file never grows past this many bytes (64 MiB; its rollback journal, while a batch is written, at most the same).
    package static let maxFileBytes = 64 << 20
    /// At most this many hosts' reports are kept (the longest silent go first).
    package static let maxHosts = 10_000
    /// At most this many load-report rows are kept over every host (the longest silent hosts go first).
    package static let maxReportRows = 100_000
    /// One report keeps at most this many entries (the rest are dropped and counted).
    package static let maxEntriesPerReport = 1_000
    /// A reason or warning keeps at most this many bytes.
    package static let maxSentenceBytes = 1_000
    /// The most crashes of one release a stored report entry says (a host counts them within its crash window).
    package static let maxCrashesPerEntry = 1_000
}

/// A count of telemetry that was not kept, by why: shown by `plugboard plugin status` and `plugboard clients`.
package struct TelemetryDrop: Sendable, Hashable, Codable {
    /// Why it was dropped, one stable phrase (see ``TelemetryDrop/Kind``).
    package let kind: String
    package let count: Int
    /// When the last one was dropped.
    package let lastAt: String

    /// The stable phrases of ``kind``.
    package enum Kind {
        package static let unknownFlag = "usage of flags the board does not have"
        package static let applicationsOverCap = "applications over a token's limit"
        package static let instancesOverCap = "SDK instances over a token's limit"
        package static let usageOverBuffer = "usage counts over the server's buffer"
        package static let hostsOverCap = "host ids over a token's limit"
        package static let reportEntriesOverCap = "load-report entries over the limit of one report"
        package static let reportsOverBuffer = "load reports over the server's buffer"
        package static let reportOtherEnvironment = "load reports of a host id that reports from another environment"
        package static let storedRowsOverCap = "stored rows over the telemetry file's limits (oldest first)"
        package static let fileFull = "batches refused because the telemetry file is full"
    }

    /// Whether this kind concerns hosts' load reports (`plugin status`) rather than SDKs (`clients`).
    package var concernsHosts: Bool {
        [Kind.hostsOverCap, Kind.reportEntriesOverCap, Kind.reportsOverBuffer, Kind.reportOtherEnvironment].contains(kind)
    }
}

/// The connection to a board's telemetry file (or an in-memory one for a board in memory).
final class TelemetryFile: Sendable {
    /// `PRAGMA application_id` of a telemetry file ("PLGT").
    static let applicationID: Int32 = 0x504C_4754
    /// 2: `load_reports.crashes`, and an index of `load_reports` by plug-in (what a rollout's guard reads four times a second).
    static let schemaVersion = 2

    let path: String
    let queue: DatabaseQueue
    /// Write transactions this connection committed: `PRAGMA data_version` counts only other connections' commits.
    let ownWrites = Mutex<Int64>(0)

    private init(path: String, queue: DatabaseQueue) {
        self.path = path
        self.queue = queue
    }

    /// A telemetry store in memory (boards in memory, tests).
    static func inMemory() throws -> TelemetryFile {
        let file = TelemetryFile(path: ":memory:", queue: try DatabaseQueue(configuration: configuration(readOnly: false)))
        try file.queue.write { db in try createSchema(db) }
        return file
    }

    /// Opens the telemetry file beside `boardPath`; nil when it does not exist and `create` is false. A new file gets the
    /// board file's mode (read and write bits) and group.
    static func open(besideBoard boardPath: String, create: Bool, readOnly: Bool) throws -> TelemetryFile? {
        let path = boardPath + ".telemetry"
        if access(path, F_OK) != 0 {
            guard create else { return nil }
            var board = stat()
            let mode = stat(boardPath, &board) == 0 ? board.st_mode & 0o666 : 0o600
            // No SQLite connection to this new file exists in this process (O_EXCL), so closing the descriptor drops no lock.
            let fd = Glibc_open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode_t(mode))
            if fd >= 0 {
                _ = fchmod(fd, mode_t(mode))
                if stat(boardPath, &board) == 0 { _ = fchown(fd, uid_t.max, board.st_gid) }
                close(fd)
            } else if errno != EEXIST {
                throw BoardError(.io, "cannot create the telemetry file \(path): \(String(cString: strerror(errno)))")
            }
        }
        let writable = !readOnly && access(path, W_OK) == 0
        let file = TelemetryFile(path: path, queue: try DatabaseQueue(path: path, configuration: configuration(readOnly: !writable)))
        if writable {
            try file.queue.write { db in
                let version = try Int.fetchOne(db.cachedStatement(sql: "PRAGMA user_version")) ?? 0
                if version == 0 { try createSchema(db) }
                if version == 1 {
                    try db.execute(
                        sql: """
                            ALTER TABLE load_reports ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0;
                            CREATE INDEX IF NOT EXISTS load_reports_plugin ON load_reports (plugin_id);
                            PRAGMA user_version = \(schemaVersion);
                            """)
                }
            }
        }
        let appID = try file.queue.read { db in try Int32.fetchOne(db.cachedStatement(sql: "PRAGMA application_id")) ?? 0 }
        guard appID == applicationID || appID == 0 else {
            throw BoardError(.notABoard, "\(path) is not a Plugboard telemetry file; move it away (Plugboard creates a new one)")
        }
        return file
    }

    static func configuration(readOnly: Bool) -> Configuration {
        var config = Configuration()
        config.readonly = readOnly
        config.foreignKeysEnabled = true
        // Short: telemetry waits for telemetry only, and a batch that cannot be written is dropped and counted.
        config.busyMode = .timeout(3)
        config.label = "plugboard-telemetry"
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            // The hard bound of the file: SQLite answers SQLITE_FULL rather than grow past it.
            let pages = TelemetryLimits.maxFileBytes / 4096
            if !readOnly { _ = try? Int.fetchOne(db, sql: "PRAGMA max_page_count = \(pages)") }
        }
        return config
    }

    private static func createSchema(_ db: Database) throws {
        try db.execute(
            sql: """
                PRAGMA application_id = \(applicationID);
                CREATE TABLE IF NOT EXISTS hosts (
                    host_id      TEXT PRIMARY KEY NOT NULL,
                    environment  TEXT NOT NULL,
                    host_version TEXT NOT NULL,
                    os_user      TEXT NOT NULL,
                    last_report  TEXT NOT NULL,
                    source       TEXT
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS hosts_last_report ON hosts (last_report);
                CREATE TABLE IF NOT EXISTS load_reports (
                    host_id     TEXT NOT NULL REFERENCES hosts(host_id) ON DELETE CASCADE,
                    plugin_id   TEXT NOT NULL,
                    version     TEXT,
                    state       TEXT NOT NULL,
                    reason_code TEXT,
                    reason      TEXT,
                    warning     TEXT,
                    reported_at TEXT NOT NULL,
                    crashes     INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (host_id, plugin_id)
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS load_reports_plugin ON load_reports (plugin_id);
                CREATE TABLE IF NOT EXISTS client_instances (
                    app_name     TEXT NOT NULL,
                    instance_id  TEXT NOT NULL,
                    environment  TEXT NOT NULL,
                    sdk_version  TEXT,
                    strategies   TEXT,
                    token_name   TEXT,
                    first_seen   TEXT NOT NULL,
                    last_seen    TEXT NOT NULL,
                    PRIMARY KEY (app_name, instance_id, environment)
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS client_instances_last_seen ON client_instances (last_seen);
                CREATE TABLE IF NOT EXISTS flag_usage (
                    bucket        TEXT NOT NULL,
                    flag_name     TEXT NOT NULL,
                    environment   TEXT NOT NULL,
                    app_name      TEXT NOT NULL,
                    yes           INTEGER NOT NULL DEFAULT 0,
                    no            INTEGER NOT NULL DEFAULT 0,
                    variants_json TEXT NOT NULL DEFAULT '{}',
                    PRIMARY KEY (bucket, flag_name, environment, app_name)
                ) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS flag_usage_flag ON flag_usage (flag_name, environment, bucket);
                CREATE TABLE IF NOT EXISTS dropped (
                    kind    TEXT PRIMARY KEY NOT NULL,
                    count   INTEGER NOT NULL,
                    last_at TEXT NOT NULL
                ) WITHOUT ROWID;
                PRAGMA user_version = \(schemaVersion);
                """)
    }

    // MARK: Writing

    /// Runs `body` in one write transaction. When the file is full, the oldest half of every table is deleted and the
    /// batch is dropped (and counted): telemetry never grows past ``TelemetryLimits/maxFileBytes``.
    func write(_ body: (Database) throws -> Void) throws {
        defer { ownWrites.withLock { $0 += 1 } }
        do {
            try queue.write { db in try body(db) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            try queue.write { db in
                try TelemetryQueries.shrink(db)
                try TelemetryQueries.countDrops(db, [TelemetryDrop.Kind.fileFull: 1], at: Timestamp.now())
            }
        }
    }
}

extension Board {
    /// The telemetry file beside the board (`<board>.telemetry`).
    package var telemetryPath: String { path == ":memory:" ? ":memory:" : path + ".telemetry" }

    /// The board's telemetry store; nil when there is none yet and `create` is false (nothing was reported).
    func telemetryFile(create: Bool) throws(BoardError) -> TelemetryFile? {
        do {
            return try telemetry.withLock { existing -> TelemetryFile? in
                if let existing { return existing }
                let file =
                    path == ":memory:"
                    ? try TelemetryFile.inMemory()
                    : try TelemetryFile.open(besideBoard: path, create: create && !isReadOnly, readOnly: isReadOnly)
                existing = file
                return file
            }
        } catch let error as BoardError {
            throw error
        } catch {
            throw BoardError(
                .io,
                "cannot open the telemetry file \(telemetryPath): \(Board.describe(error)); move it away and Plugboard creates a new one")
        }
    }

    /// Writes to the telemetry file, creating it when needed.
    func writeTelemetry(_ body: (Database) throws -> Void) throws(BoardError) {
        guard !isReadOnly else {
            throw BoardError(.notAllowed, "the board at \(path) was opened read-only; writing reports needs write access")
        }
        guard let file = try telemetryFile(create: true) else { return }
        do { try file.write(body) } catch { throw telemetryError(error) }
    }

    /// Reads the telemetry file; `empty` when there is none yet.
    func readTelemetry<T>(empty: T, _ body: (Database) throws -> T) throws(BoardError) -> T {
        guard let file = try telemetryFile(create: false) else { return empty }
        do { return try file.queue.read(body) } catch { throw telemetryError(error) }
    }

    private func telemetryError(_ error: any Error) -> BoardError {
        if let error = error as? BoardError { return error }
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_BUSY {
            return BoardError(.io, "the telemetry file \(telemetryPath) is busy; try again")
        }
        return BoardError(.io, "the telemetry file \(telemetryPath) could not complete the operation: \(Board.describe(error))")
    }

    /// A value that changes whenever the telemetry file may have changed (a host's load report, usage counts): another
    /// process committed to it (`PRAGMA data_version`) or this board wrote to it. Cheap: one pragma. 0 while there is
    /// no telemetry file.
    package func telemetryVersion() throws(BoardError) -> Int64 {
        guard let file = try telemetryFile(create: false) else { return 0 }
        do {
            let others = try file.queue.read { db in try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0 }
            return others &+ (file.ownWrites.withLock { $0 } << 32)
        } catch {
            throw telemetryError(error)
        }
    }

    /// What telemetry was dropped (not kept), by why; see ``TelemetryDrop``.
    package func telemetryDrops() throws(BoardError) -> [TelemetryDrop] {
        try readTelemetry(empty: []) { db in try TelemetryQueries.drops(db) }
    }

    /// Adds counts of dropped telemetry (`plugboard serve` reports what it dropped before storing).
    package func recordTelemetryDrops(_ counts: [String: Int]) throws(BoardError) {
        let counts = counts.filter { $0.value > 0 }
        guard !counts.isEmpty else { return }
        try writeTelemetry { db in try TelemetryQueries.countDrops(db, counts, at: Timestamp.now()) }
    }
}
