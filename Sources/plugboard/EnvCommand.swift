import ArgumentParser
import PlugboardOperations

/// `plugboard env …`: the board's environments.
struct EnvCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env", abstract: "List environments.",
        subcommands: commands(BoardOperations.environments),
        defaultSubcommand: OperationCommand<BoardOperations.Environments, NoChangeFlags>.self)
}
