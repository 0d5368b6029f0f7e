import ArgumentParser
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// The CLI command of a ``BoardOperation``: its name, help, arguments and options are the operation's declaration; it
/// performs the operation on the board file, or with `--server` on a served board, and prints the answer.
struct OperationCommand<Op: ParsedOperation>: RemoteCommand {
    static var configuration: CommandConfiguration { declared(Op.self) }

    @OptionGroup var global: GlobalOptions
    @OptionGroup var operation: Op

    func execute(_ output: Output) throws(BoardError) {
        var operation = self.operation
        if OperationWire.actsInEnvironment(Op.self) {
            // An environment that only narrows the answer is sent when --env names one.
            operation.env = Op.declaration.environmentOptional && global.env == nil ? nil : try global.environment()
        }
        let answer = try global.perform(operation)
        if let change = answer as? ChangeResult {
            output.report(change)
        } else if !output.json, let text = operation.text(for: answer) {
            print(multiline(text))
        } else {
            output.printJSON(answer)
        }
    }
}

/// The name, abstract and discussion of `operation`'s command: for ``OperationCommand`` and for a hand-written command
/// that performs it (one that reads a file, or prints what is not the CLI's JSON).
func declared<Op: ParsedOperation>(_ operation: Op.Type) -> CommandConfiguration {
    let declaration = Op.declaration
    return CommandConfiguration(
        commandName: declaration.command, abstract: declaration.abstract, discussion: declaration.discussion, aliases: declaration.aliases)
}

/// The commands of `operations`, in their order.
func commands(_ operations: [any ParsedOperation.Type]) -> [any ParsableCommand.Type] {
    operations.map { command(for: $0) }
}

private func command<Op: ParsedOperation>(for type: Op.Type) -> any ParsableCommand.Type {
    OperationCommand<Op>.self
}
