import ArgumentParser
import Foundation
import PlugboardModel
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

    /// An `--env` that is not an environment name is a usage error (exit 2); one from `$PLUGBOARD_ENV` is refused when
    /// the command runs.
    func validate() throws {
        guard let env else { return }
        do { try Validate.environment(env) } catch { throw ValidationError(error.message) }
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
}

extension BoardCommand {
    func run() throws {
        let output = Output(json: global.json)
        do {
            try execute(output)
        } catch {
            output.fail(error)
            throw ExitCode(1)
        }
    }
}
