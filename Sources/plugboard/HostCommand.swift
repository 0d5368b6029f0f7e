import ArgumentParser
import PlugboardOperations

/// `plugboard host …`: what operators tell one host.
struct HostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host", abstract: "Tell one host what to do with what it decided alone (quarantines).",
        subcommands: commands(HostOperations.all))
}
