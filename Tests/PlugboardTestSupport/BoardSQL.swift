public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A board file read and edited as an outside auditor or an attacker would: with the `sqlite3` command-line tool, in
/// a process of its own, not through the store or any connection of the test process.
///
/// Every run sets a busy timeout of 10 seconds (`.timeout 10000`) and stops at the first error (`-bail`); reads open
/// the file read-only (`-readonly`). Arguments replace the `?` and `?NNN` placeholders as SQL literals
/// (``SQLValue/literal``). Up to ``outputLimit`` bytes of output are read.
///
/// Each method has an `async` twin of the same name, which an async test gets: it waits for the child process on a
/// thread of its own (``Sandbox/offPool(_:)``), not on one of the shared pool.
public struct BoardSQL: Sendable {
    /// A row: its values by column name.
    public typealias Row = [String: SQLValue]

    /// The path of the database file.
    public let path: String

    /// The `sqlite3` tool (Debian's `sqlite3` package; `.ci/run` installs it).
    public static let tool = "/usr/bin/sqlite3"

    /// The most output a run may print.
    public static let outputLimit = 64 << 20

    public init(_ path: String) {
        self.path = path
    }

    /// A run of `sqlite3` that failed (the SQL was refused: a trigger, a constraint, an error), or whose output could
    /// not be read.
    public struct Failure: Error, CustomStringConvertible {
        /// What `sqlite3` printed on stderr (a refusal names its reason: `Runtime error near line 1: audit_log is append-only: …`).
        public let stderr: String
        /// What went wrong, with the SQL.
        public let message: String

        public var description: String { message }
    }

    // MARK: Reading (read-only)

    /// The rows `sql` (one statement) returns.
    public func rows(_ sql: String, _ arguments: SQLValue...) throws -> [Row] {
        try rows(sql, arguments: arguments)
    }

    /// The first column of the first row `sql` returns, or nil when it returns no row.
    public func value(_ sql: String, _ arguments: SQLValue...) throws -> SQLValue? {
        try table(sql, arguments).rows.first?.first
    }

    /// The integer ``value(_:_:)``: nil when there is no row or the value is NULL; any other value than an integer
    /// throws.
    public func int(_ sql: String, _ arguments: SQLValue...) throws -> Int? {
        try first(sql, arguments, \.int)
    }

    /// The text ``value(_:_:)``: nil when there is no row or the value is NULL; any other value than text throws.
    public func string(_ sql: String, _ arguments: SQLValue...) throws -> String? {
        try first(sql, arguments, \.string)
    }

    /// The blob ``value(_:_:)``: nil when there is no row or the value is NULL; any other value than a blob throws.
    public func data(_ sql: String, _ arguments: SQLValue...) throws -> Data? {
        try first(sql, arguments, \.data)
    }

    /// The first column of every row `sql` returns, each text (anything else throws).
    public func strings(_ sql: String, _ arguments: SQLValue...) throws -> [String] {
        try strings(sql, arguments: arguments)
    }

    /// Everything in the file, for before/after comparisons: `sqlite3`'s `.dump` (the schema, and every row of every
    /// table as an `INSERT` of its values as literals).
    public func dump() throws -> String {
        try dumpText()
    }

    // MARK: Writing

    /// Runs `sql` (one statement or several, each in a transaction of its own unless the SQL opens one) with the
    /// file opened for writing; throws a ``Failure`` that carries `sqlite3`'s stderr when a statement is refused.
    public func execute(_ sql: String, _ arguments: SQLValue...) throws {
        try execute(sql, arguments: arguments)
    }

    /// Copies the database to a new file at `destination` with SQLite's backup (`.backup`), as a backup tool would:
    /// a consistent copy of the committed state, the WAL's included.
    public func backup(to destination: String) throws {
        try backUp(to: destination)
    }

    // MARK: The forms with an array of arguments

    func rows(_ sql: String, arguments: [SQLValue]) throws -> [Row] {
        let (columns, rows) = try table(sql, arguments)
        return rows.map { Row(zip(columns, $0), uniquingKeysWith: { first, _ in first }) }
    }

    func strings(_ sql: String, arguments: [SQLValue]) throws -> [String] {
        try table(sql, arguments).rows.map { row in
            guard let text = try typed(row.first, sql, \.string) else { throw failure("a NULL where text was expected", sql) }
            return text
        }
    }

    func execute(_ sql: String, arguments: [SQLValue]) throws {
        _ = try run(try QuotedOutput.bind(sql, arguments), readOnly: false)
    }

    func dumpText() throws -> String {
        String(decoding: try run(".dump\n", readOnly: true), as: UTF8.self)
    }

    func backUp(to destination: String) throws {
        _ = try run(".backup " + SQLValue.text(destination).literal + "\n", readOnly: true)
    }

    /// The first column of the first row, cast: nil when there is no row or it is NULL, a failure when it is of
    /// another type.
    func first<T>(_ sql: String, _ arguments: [SQLValue], _ cast: (SQLValue) -> T?) throws -> T? {
        try typed(try table(sql, arguments).rows.first?.first, sql, cast)
    }

    // MARK: Running sqlite3

    /// The column names and rows `sql` (one statement) returns, read in `quote` mode: every value keeps its type and
    /// its bytes (text with quotes and newlines, blobs).
    func table(_ sql: String, _ arguments: [SQLValue]) throws -> (columns: [String], rows: [[SQLValue]]) {
        let output = try run(try QuotedOutput.bind(sql, arguments), readOnly: true, options: ["-quote", "-header"])
        do {
            return try QuotedOutput.parse(output)
        } catch {
            throw failure("\(error)", sql)
        }
    }

    private func typed<T>(_ value: SQLValue?, _ sql: String, _ cast: (SQLValue) -> T?) throws -> T? {
        guard let value, !value.isNull else { return nil }
        guard let typed = cast(value) else { throw failure("\(value) is not a \(T.self)", sql) }
        return typed
    }

    private func failure(_ what: String, _ sql: String, stderr: String = "") -> Failure {
        Failure(stderr: stderr, message: "sqlite3 on \(path): \(what)\nSQL: \(sql)")
    }

    /// Runs `sqlite3` on the file with `input` as its standard input (from a file: a refusal that ends it early
    /// leaves no pipe to write into), and returns its standard output. A non-zero exit status or anything on stderr
    /// throws.
    private func run(_ input: String, readOnly: Bool, options: [String] = []) throws -> Data {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("plugboard-sql-\(UUID().uuidString).sql")
        try Data(input.utf8).write(to: script)
        defer { try? FileManager.default.removeItem(at: script) }
        // No ~/.sqliterc (-init /dev/null): nothing but these options decides the output.
        let arguments =
            ["-init", "/dev/null", "-batch", "-bail", "-cmd", ".timeout 10000"] + (readOnly ? ["-readonly"] : []) + options + [path]
        let sql = input.count > 2_000 ? String(input.prefix(2_000)) + "…" : input
        let result: Spawned.Finished
        do {
            result = try Spawned.runBlocking(Self.tool, arguments, inputFile: script.path, outputLimit: Self.outputLimit)
        } catch {
            throw failure("\(error)", sql, stderr: "")
        }
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        guard result.status == 0, stderr.isEmpty else {
            throw failure("exited \(result.status): \(stderr.trimmingCharacters(in: .whitespacesAndNewlines))", sql, stderr: stderr)
        }
        return result.stdout
    }
}

// MARK: The same, off the shared pool

extension BoardSQL {
    /// ``rows(_:_:)``, waited for off the shared pool.
    public func rows(_ sql: String, _ arguments: SQLValue...) async throws -> [Row] {
        try await Sandbox.offPool { try self.rows(sql, arguments: arguments) }
    }

    /// ``value(_:_:)``, waited for off the shared pool.
    public func value(_ sql: String, _ arguments: SQLValue...) async throws -> SQLValue? {
        try await Sandbox.offPool { try self.table(sql, arguments).rows.first?.first }
    }

    /// ``int(_:_:)``, waited for off the shared pool.
    public func int(_ sql: String, _ arguments: SQLValue...) async throws -> Int? {
        try await Sandbox.offPool { try self.first(sql, arguments, \.int) }
    }

    /// ``string(_:_:)``, waited for off the shared pool.
    public func string(_ sql: String, _ arguments: SQLValue...) async throws -> String? {
        try await Sandbox.offPool { try self.first(sql, arguments, \.string) }
    }

    /// ``data(_:_:)``, waited for off the shared pool.
    public func data(_ sql: String, _ arguments: SQLValue...) async throws -> Data? {
        try await Sandbox.offPool { try self.first(sql, arguments, \.data) }
    }

    /// ``strings(_:_:)``, waited for off the shared pool.
    public func strings(_ sql: String, _ arguments: SQLValue...) async throws -> [String] {
        try await Sandbox.offPool { try self.strings(sql, arguments: arguments) }
    }

    /// ``dump()``, waited for off the shared pool.
    public func dump() async throws -> String {
        try await Sandbox.offPool { try self.dumpText() }
    }

    /// ``execute(_:_:)``, waited for off the shared pool.
    public func execute(_ sql: String, _ arguments: SQLValue...) async throws {
        try await Sandbox.offPool { try self.execute(sql, arguments: arguments) }
    }

    /// ``backup(to:)``, waited for off the shared pool.
    public func backup(to destination: String) async throws {
        try await Sandbox.offPool { try self.backUp(to: destination) }
    }
}
