import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardModel
import PlugboardStore

/// `plugboard env …`: the board's environments.
struct EnvCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env", abstract: "List environments.",
        subcommands: [List.self], defaultSubcommand: List.self)

    struct List: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the board's environments.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let names = try global.perform(BoardRequests.Environments())
            if output.json { output.printJSON(names) } else { names.forEach { print($0) } }
        }
    }
}
