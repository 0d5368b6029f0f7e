import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The board file (default: $PLUGBOARD_DB, else ./plugboard.sqlite).", valueName: "path"))
    var db: String?

    @Option(name: .long, help: ArgumentHelp("The environment (default: $PLUGBOARD_ENV, else default).", valueName: "name"))
    var env: String?

    @Flag(name: .long, help: "Print one JSON document on stdout instead of text.")
    var json = false

    @Option(
        name: .customLong("as"),
        help: ArgumentHelp(
            "Declare the principal automation acts for; recorded beside the OS user, never instead of it.", valueName: "name"))
    var onBehalfOf: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run the command on the board served at this URL (plugboard serve --admin) instead of a board file (default: $PLUGBOARD_SERVER); the access token comes from $PLUGBOARD_TOKEN or plugboard login.",
            valueName: "url"))
    var server: String?

    /// An `--env` that is not an environment name, and an `--as` that is not a principal a person may name, are usage
    /// errors (exit 2); an environment from `$PLUGBOARD_ENV` is refused when the command runs.
    func validate() throws {
        if server != nil, db != nil { throw ValidationError("--db names a board file and --server a served board; give one of them") }
        if let onBehalfOf { try checkArguments { () throws(BoardError) in try Validate.personPrincipal(onBehalfOf, field: "--as") } }
        guard let env else { return }
        do { try Validate.environment(env) } catch { throw ValidationError(error.message) }
    }

    /// The served board the command runs on (`--server`, else `$PLUGBOARD_SERVER`), or nil for the board file.
    var serverURL: String? {
        if let server { return server }
        if db != nil { return nil }
        return ProcessInfo.processInfo.environment["PLUGBOARD_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The client of the served board (``serverURL``) with its access token, or nil for the board file.
    func adminClient() throws(BoardError) -> OperationsClient? {
        guard let url = serverURL else { return nil }
        let token = ProcessInfo.processInfo.environment["PLUGBOARD_TOKEN"].flatMap { $0.isEmpty ? nil : $0 } ?? Credentials.token(for: url)
        return try OperationsClient(server: url, token: token ?? "", onBehalfOf: onBehalfOf)
    }

    /// Performs `request` on the board file, or with a server (``serverURL``) through the operations API as the access
    /// token's principal: the same answer either way. The answer's notes are printed on stderr.
    func perform<R: OperationRequest>(_ request: R) throws(BoardError) -> R.Response {
        let reply: OperationReply<R.Response>
        if let client = try adminClient() {
            reply = try client.send(request)
        } else {
            reply = try request.perform(on: try openBoard(), as: try actor())
        }
        for note in reply.notes { FileHandle.standardError.write(Data("note: \(multiline(note))\n".utf8)) }
        return reply.value
    }

    /// Submits `request` on the board file or the server: performed, or, where it waits for approvals, a change
    /// request opened (or applied as an emergency). The answer's notes are printed on stderr.
    func submit<R: OperationRequest>(_ request: R, options: ChangeOptions) throws(BoardError) -> Submission<R.Response> {
        let submission: Submission<R.Response>
        if let client = try adminClient() {
            submission = try client.submit(request, options: options)
        } else {
            submission = try request.submit(on: try openBoard(), as: try actor(), options: options)
        }
        let notes: [String]
        switch submission {
        case .performed(let reply): notes = reply.notes
        case .requested(let reply): notes = reply.notes
        }
        for note in notes { FileHandle.standardError.write(Data("note: \(multiline(note))\n".utf8)) }
        return submission
    }

    /// The board path after defaults.
    var boardPath: String {
        db ?? ProcessInfo.processInfo.environment["PLUGBOARD_DB"].flatMap { $0.isEmpty ? nil : $0 } ?? "plugboard.sqlite"
    }

    /// The environment after defaults, validated.
    func environment() throws(BoardError) -> String {
        let name = env ?? ProcessInfo.processInfo.environment["PLUGBOARD_ENV"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        try Validate.environment(name)
        return name
    }

    /// The actor of record: the OS user, with the declared `--as` principal.
    func actor() throws(BoardError) -> Principal {
        try Principal.current(onBehalfOf: onBehalfOf)
    }

    /// Opens the board, refusing anything that is not a current board (or, with `requireCurrentSchema` false, a
    /// board with pending migrations), and warns on stderr when every user of the machine can read it.
    func openBoard(requireCurrentSchema: Bool = true) throws(BoardError) -> Board {
        let board = try Board.open(at: boardPath, requireCurrentSchema: requireCurrentSchema)
        if let warning = board.exposureWarning { Output.printWarning(warning) }
        return board
    }
}

/// Checks the form of command-line arguments before anything runs: a malformed one is a usage error, exit 2, as
/// argument-parser's own are (a refusal by the board is exit 1).
func checkArguments(_ check: () throws(BoardError) -> Void) throws {
    do throws(BoardError) { try check() } catch { throw ValidationError(error.message) }
}

/// A command whose failures are ``BoardError``s: printed as one sentence on stderr with exit status 1.
protocol BoardCommand: ParsableCommand {
    var global: GlobalOptions { get }
    func execute(_ output: Output) throws(BoardError)
    /// Why the command cannot run with `--server`; nil for a command the operations API serves.
    static var localOnly: String? { get }
}

extension BoardCommand {
    static var localOnly: String? { "it works on the board's files on their machine" }

    func run() throws {
        if global.serverURL != nil, let reason = Self.localOnly {
            // A usage error (exit 2), without argument-parser's usage lines: the command is right, the place is not.
            Output.printError(
                "plugboard \(Self.commandPath) cannot run with --server or $PLUGBOARD_SERVER: \(reason); run it on the board's machine")
            throw ExitCode(2)
        }
        let output = Output(json: global.json)
        do {
            try execute(output)
        } catch {
            output.fail(error)
            throw ExitCode(1)
        }
    }
}

/// A command the operations API serves: it runs on a board file, or with `--server` on a served board.
protocol RemoteCommand: BoardCommand {}

extension RemoteCommand {
    static var localOnly: String? { nil }
}

extension ParsableCommand {
    /// The command as typed after `plugboard` (`plugin kill`).
    static var commandPath: String {
        let name = configuration.commandName ?? String(describing: Self.self).lowercased()
        guard let parent = parentName else { return name }
        return "\(parent) \(name)"
    }

    /// The name of the command group this command belongs to, from the type's enclosing type (`PluginCommand.Kill`).
    private static var parentName: String? {
        let path = String(reflecting: Self.self).split(separator: ".")
        guard path.count >= 3 else { return nil }
        let groups: [String: String] = [
            "PluginCommand": "plugin", "OwnerCommand": "owner", "AdminCommand": "admin", "FlagCommand": "flag", "SecretCommand": "secret",
            "KeysCommand": "keys", "EnvCommand": "env", "AuditCommand": "audit", "TokenCommand": "token",
            "SigningKeyCommand": "signing-key",
            "SignerCommand": "signer", "PolicyCommand": "policy", "BoardKeyCommand": "board-key", "AccessTokenCommand": "access-token",
            "HostCommand": "host", "RolloutCommand": "rollout", "ChangeCommand": "change",
        ]
        return groups[String(path[path.count - 2])]
    }
}
