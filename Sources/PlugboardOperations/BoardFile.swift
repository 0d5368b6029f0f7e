import Foundation
package import PlugboardBoardSecureStorage
public import PlugboardModel
package import PlugboardStore

/// A board file, opened: the operations of the `plugboard` CLI, performed in this process.
///
/// ```swift
/// let board = try BoardFile.create(at: "plugboard.sqlite", by: .current())
/// let admin = try Principal.current()
/// _ = try board.perform(PluginOperations.Register(manifest: .init(file: "greeter.json", text: manifest)), as: admin)
/// _ = try board.perform(PluginOperations.Enable(id: PluginID(validating: "com.example.greeter"), env: "default"), as: admin)
/// let plugins = try board.perform(PluginOperations.List(env: "default"), as: admin).value
/// ```
///
/// Each operation makes every check its CLI command makes (admins, owners, policies, the master key) and changes the
/// board, with its audit row, in one transaction; a refusal is a `BoardError` whose message is the CLI's sentence,
/// and leaves the board as it was. Keep one `BoardFile` per board for the process; it is safe to share between tasks.
/// Other processes (hosts, the CLI, `plugboard serve`) may use the same file at the same time.
public final class BoardFile: Sendable {
    /// The board, for the modules of this package.
    package let board: Board

    /// The board file at `path`.
    public var path: String { board.path }

    package init(_ board: Board) { self.board = board }

    /// Where the content-addressed artifact store beside the board keeps the artifact with this SHA-256, or nil when it
    /// holds none: what hosts of this board load.
    public func artifactPath(sha256: String) -> String? {
        guard (try? ArtifactUploads.check(sha256)) != nil else { return nil }
        let path = ArtifactStore(root: board.artifactsPath).path(forSHA256: sha256)
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// Opens an existing board; refused with a sentence when the file is not a board or its schema is not this
    /// version's (`plugboard migrate`). The file is never modified by opening it.
    public static func open(at path: String) throws(BoardError) -> BoardFile { BoardFile(try Board.open(at: path)) }

    /// Opens a board and applies its pending migrations first, as `plugboard migrate` does (each in its own audited
    /// transaction, which needs an admin), then answers the board and the files of the migrations it applied. A
    /// board written by a newer Plugboard, or whose applied migrations were edited, is refused and left as it was.
    public static func migrate(at path: String, by admin: Principal) throws(BoardError) -> (board: BoardFile, applied: [String]) {
        let board = try Board.open(at: path, requireCurrentSchema: false)
        var applied: [String] = []
        for migration in try board.migrate(by: admin) { applied.append(migration.fileName) }
        return (BoardFile(board), applied)
    }

    /// Creates a board as `plugboard init` does: the file (mode 0600, never overwriting one), its schema, `admin` as its
    /// first admin, the `default` environment, the master key of its secure storage (`PLUGBOARD_MASTER_KEY` when set,
    /// else the key file `<board>.key`, mode 0600) and the board's own signing key (`<board>.board-key`).
    public static func create(at path: String, by admin: Principal) throws(BoardError) -> BoardFile {
        try initialize(at: path, by: admin).board
    }

    /// What ``create(at:by:)`` made: the board, how its master key was set up, and the board's keys (nil in memory).
    package static func initialize(
        at path: String, by admin: Principal
    ) throws(BoardError) -> (board: BoardFile, masterKey: MasterKeySetup?, boardKeys: BoardKeyring?) {
        var setup: MasterKeySetup?
        let board = try Board.create(at: path, by: admin) { board throws(BoardError) in
            setup = try BoardSecureStorage.initialize(board: board, by: admin).setup
        }
        let keys = board.path == ":memory:" ? nil : try BoardKeyring.loadOrCreate(boardPath: board.path)
        return (BoardFile(board), setup, keys)
    }

    /// Performs `operation` as `actor`, with every check the CLI's command makes, and answers as the command's
    /// `--json` does, with its notes.
    ///
    /// The operation is checked as the CLI checks its arguments (its fields, and rules between them such as a kill
    /// target's) before it is performed. Make operations with their typed initializers: `init()` is
    /// swift-argument-parser's, and leaves the fields for the parser to fill: an operation made so is refused with a
    /// sentence naming the operation and its first field without a value.
    public func perform<Op: BoardOperation>(_ operation: Op, as actor: Principal) throws(BoardError) -> OperationReply<Op.Response> {
        guard let request = operation as? any OperationRequest else {
            throw BoardError(.invalidInput, "\(Op.declaration.name) is not an operation of this board")
        }
        return try perform(request, as: actor, answering: Op.Response.self)
    }

    /// Submits `operation` as `actor`: performed, as ``perform(_:as:)`` does, unless it starts or widens what runs where
    /// the approval policy requires approvals; then it opens a change request (to apply at `at` once approved), or with
    /// `emergencyReason` applies it at once as an audited emergency (admins).
    public func submit<Op: BoardOperation>(_ operation: Op, as actor: Principal, at: String? = nil, emergencyReason: String? = nil)
        throws(BoardError) -> Submission<Op.Response>
    {
        guard let request = operation as? any OperationRequest else {
            throw BoardError(.invalidInput, "\(Op.declaration.name) is not an operation of this board")
        }
        return try submit(request, as: actor, options: ChangeOptions(at: at, emergencyReason: emergencyReason), answering: Op.Response.self)
    }

    private func submit<Request: OperationRequest, Response>(
        _ request: Request, as actor: Principal, options: ChangeOptions, answering: Response.Type
    ) throws(BoardError) -> Submission<Response> {
        switch try request.checked().submit(on: board, as: actor, options: options) {
        case .performed(let reply):
            guard let value = reply.value as? Response else {
                throw BoardError(.invalidInput, "\(Request.name) answered with another type than it declares")
            }
            return .performed(OperationReply(value, notes: reply.notes))
        case .requested(let reply): return .requested(reply)
        }
    }

    private func perform<Request: OperationRequest, Response>(
        _ request: Request, as actor: Principal, answering: Response.Type
    ) throws(BoardError) -> OperationReply<Response> {
        let request = try request.checked()
        if let scope = try request.widening(on: board), try board.protection(environment: scope.environment).required > 0 {
            throw BoardError.conflict(
                "\(Request.name) waits for approvals \(scope.environment.map { "in \($0)" } ?? "on this board"); submit it with submit(_:as:) to open a change request"
            )
        }
        let reply = try request.perform(on: board, as: actor)
        guard let value = reply.value as? Response else {
            throw BoardError(.invalidInput, "\(Request.name) answered with another type than it declares")
        }
        return OperationReply(value, notes: reply.notes)
    }
}
