import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `plugboard`: the admin CLI of a Plugboard board.
@main
struct Plugboard: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugboard",
        abstract:
            "Administer a Plugboard board: plug-ins, owners, kill switches, flags, secrets, the audit log, and serve flags over HTTP.",
        // One paragraph a line (argument-parser wraps them to the terminal): a break in the source would break the
        // help mid-sentence.
        discussion: """
            The board is one SQLite file (--db, $PLUGBOARD_DB, else ./plugboard.sqlite). \
            Every change is one transaction with a row in the hash-chained audit log; a refused command changes nothing.

            Exit status: 0 success, 1 refused or failed, 2 usage or argument error.
            """,
        version: "0.1.0",
        subcommands: [
            Init.self, Migrate.self, PluginCommand.self, OwnerCommand.self, FlagCommand.self, SecretCommand.self,
            KeysCommand.self, AdminCommand.self, GroupCommand.self, PrincipalCommand.self, SSOCommand.self, AdvisoryCommand.self,
            EnvCommand.self,
            AuditCommand.self, TokenCommand.self, WebhookCommand.self,
        ] + commands(BoardOperations.clients) + [
            ServeCommand.self, SigningKeyCommand.self, SignerCommand.self, ApproverCommand.self, PolicyCommand.self, BoardKeyCommand.self,
            Backup.self,
            AccessTokenCommand.self, HostCommand.self, RolloutCommand.self, ChangeCommand.self,
            Restore.self, Login.self, Logout.self,
        ]
    )

    static func main() {
        // Everything this process creates (board, WAL, artifacts, key files) is private to its user.
        umask(0o077)
        let arguments = hoistGlobalOptions(Array(CommandLine.arguments.dropFirst()))
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            // The contract: 2 for usage errors (argument-parser uses 64), 1 for refusals, 0 for help/version; one
            // `error:` prefix for argument-parser's messages and ours.
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            // argument-parser's messages quote the value they refuse: escaped, like everything else the CLI prints.
            var text = fullMessage(for: error)
            // An argument echoed whole (with a line break in it) is escaped as one, so it cannot start a line of its own.
            for argument in arguments where argument.contains(where: \.isNewline) {
                text = text.replacingOccurrences(of: argument, with: Validate.escaped(argument))
            }
            let message = multiline(text)
            if !message.isEmpty { FileHandle.standardError.write(Data((Self.lowercasedPrefix(message) + "\n").utf8)) }
            Foundation.exit(code == .validationFailure ? 2 : code.rawValue)
        }
    }

    /// argument-parser's `Error: ` as ours, `error: `.
    static func lowercasedPrefix(_ message: String) -> String {
        message.hasPrefix("Error: ") ? "error: " + message.dropFirst("Error: ".count) : message
    }

    /// Global options may come before the subcommand (`plugboard --db b.sqlite plugin list`): move them after it,
    /// where every leaf command declares them.
    static func hoistGlobalOptions(_ arguments: [String]) -> [String] {
        let withValue: Set<String> = ["--db", "--env", "--as", "--server"]
        let flags: Set<String> = ["--json"]
        var hoisted: [String] = []
        var rest = arguments[...]
        while let first = rest.first, first.hasPrefix("--") {
            let name = String(first.split(separator: "=", maxSplits: 1)[0])
            if flags.contains(first) {
                hoisted.append(first)
                rest = rest.dropFirst()
            } else if withValue.contains(name), first.contains("=") {
                hoisted.append(first)
                rest = rest.dropFirst()
            } else if withValue.contains(first), rest.count >= 2 {
                hoisted.append(contentsOf: rest.prefix(2))
                rest = rest.dropFirst(2)
            } else {
                break
            }
        }
        guard !hoisted.isEmpty else { return arguments }
        var result = Array(rest)
        if let terminator = result.firstIndex(of: "--") {
            result.insert(contentsOf: hoisted, at: terminator)
        } else {
            result.append(contentsOf: hoisted)
        }
        return result
    }
}
