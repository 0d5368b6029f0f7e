import ArgumentParser
import PlugboardAdmin

/// `plugboard env …`: the board's environments.
struct EnvCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env", abstract: "List environments.",
        subcommands: commands(BoardRequests.environments), defaultSubcommand: OperationCommand<BoardRequests.Environments>.self)
}
