public import Foundation
public import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one run of the `plugboard` binary produced.
public struct CLIResult: CustomStringConvertible, Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String

    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }

    /// Parses stdout as JSON.
    public func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
    }
}

/// A scratch folder with a board path, and a way to run the CLI against it as a user would.
public final class Sandbox: Sendable {
    public let root: URL
    public var board: String { root.appendingPathComponent("board.sqlite").path }

    public init() throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("plugboard-tests-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        root = base
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// The built `plugboard` executable, beside the test bundle in the build folder.
    public static let binary: String = {
        if let override = ProcessInfo.processInfo.environment["PLUGBOARD_BIN"] { return override }
        return builtExecutable("plugboard")
    }()

    /// An executable of this package, found beside the test bundle in the build folder.
    public static func builtExecutable(_ name: String) -> String {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<3 {
            let candidate = folder.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Writes a file in the sandbox and returns its path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let url = root.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// Runs `plugboard ARGS --db BOARD` (the board is added unless `db: false`), blocking the calling thread (off the
    /// shared pool only), with `stdin` as its standard input (a pipe, closed at once when nil), in the sandbox's folder,
    /// with this process's environment less every `PLUGBOARD_` variable, plus `environment`.
    @discardableResult
    public func runBlocking(
        _ arguments: [String], db: Bool = true, environment: [String: String] = [:], stdin: String? = nil,
        executable: String = Sandbox.binary, prefix: [String] = []
    ) throws -> CLIResult {
        let command = self.command(arguments, db: db, environment: environment, executable: executable, prefix: prefix)
        return try Spawned.runBlocking(
            command.executable, command.arguments, environment: command.environment, directory: root.path,
            input: Data((stdin ?? "").utf8)
        ).text
    }

    /// Runs `plugboard ARGS --db BOARD` as ``runBlocking(_:db:environment:stdin:executable:prefix:)`` does, on a thread of
    /// its own: waiting for a process must not hold a thread of the shared pool, or tasks that other tests wait for (a
    /// host's polling) starve. A cancelled task (a test past its time limit) kills the child.
    @discardableResult
    public func run(
        _ arguments: [String], db: Bool = true, environment: [String: String] = [:], stdin: String? = nil,
        executable: String = Sandbox.binary, prefix: [String] = []
    ) async throws -> CLIResult {
        let command = self.command(arguments, db: db, environment: environment, executable: executable, prefix: prefix)
        return try await Spawned.run(
            command.executable, command.arguments, environment: command.environment, directory: root.path,
            input: Data((stdin ?? "").utf8)
        ).text
    }

    /// The executable, arguments and environment of a run: `prefix` (a launcher such as `setpriv …`) runs the binary.
    private func command(
        _ arguments: [String], db: Bool, environment: [String: String], executable: String, prefix: [String]
    ) -> (executable: String, arguments: [String], environment: [String: String]) {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PLUGBOARD_") }
        env.merge(environment) { $1 }
        let launcher = prefix.first
        return (
            launcher ?? executable,
            Array(prefix.dropFirst()) + (launcher == nil ? [] : [executable]) + arguments + (db ? ["--db", board] : []), env
        )
    }

    /// Runs blocking work on a GCD thread, outside the cooperative pool.
    public static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs the CLI and records a test issue unless it exits 0.
    @discardableResult
    public func ok(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws -> CLIResult {
        try await ok(arguments, sourceLocation: sourceLocation)
    }

    /// Runs the CLI and records a test issue unless it exits 0.
    @discardableResult
    public func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> CLIResult {
        let result = try await run(arguments)
        #expect(result.status == 0, "plugboard \(arguments.joined(separator: " ")) failed: \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// The secret of a new API token for hosts of `default` (`token create --name NAME --for hosts`).
    public func hostsToken(name: String = "hosts") async throws -> String {
        let created = try await ok("token", "create", "--name", name, "--for", "hosts", "--json").json() as? [String: Any]
        return try #require(created?["token"] as? String)
    }

    /// The board's public key (`board-key show`), which hosts of a served board pin.
    public func boardKey() async throws -> String {
        let keys = try await ok("board-key", "show", "--json").json() as? [String: Any]
        return try #require((keys?["keys"] as? [[String: Any]])?.first?["public_key"] as? String)
    }

    /// A fresh board with one registered plug-in per manifest given.
    ///
    /// The board and its key files are a byte-for-byte copy of those that a real `plugboard init` and
    /// `plugboard plugin register` of each manifest made once in this test process (``InitialBoard``): every board of
    /// the same manifests has the same keys and rows, which no test of one board can tell apart from its own commands.
    /// A test about `init`, or one that needs two boards with different keys, runs `init` itself.
    public static func withBoard(_ manifests: [String] = []) async throws -> Sandbox {
        let sandbox = try Sandbox()
        try await InitialBoard.of(manifests).copy(to: sandbox.board)
        return sandbox
    }

    /// Everything in the board: the file's bytes and every table's rows, for before/after comparisons.
    public struct Snapshot: Equatable, Sendable {
        public let bytes: Data
        public let dump: String
    }

    /// The board's bytes (read by a child process: see ``FileBytes``) and its logical dump (``BoardSQL/dump()``).
    public func snapshot() async throws -> Snapshot {
        try await Self.offPool { Snapshot(bytes: try FileBytes.read(self.board), dump: try self.boardFile.dump()) }
    }

    /// The board file, to read or edit with the `sqlite3` tool as someone with a shell on the machine would.
    public var boardFile: BoardSQL { BoardSQL(board) }

    /// The permission bits of a file.
    public func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }
}

/// A manifest with the given id and version, and optional extra fields (JSON members without braces).
public func manifest(_ id: String = "com.example.calendar", _ version: String = "1.0.0", _ extra: String = "") -> String {
    "{\"id\":\"\(id)\",\"name\":\"Test \(id)\",\"version\":\"\(version)\"\(extra.isEmpty ? "" : "," + extra)}"
}

/// True when tests run as root with setpriv available, so they can act as another OS user.
public let canSwitchUser: Bool = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
