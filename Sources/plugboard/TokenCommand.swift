import ArgumentParser
import PlugboardModel
import PlugboardOperations

/// `plugboard token …`: the API tokens `plugboard serve` accepts.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Create, list and revoke the API tokens SDKs and plug-in hosts use to read plugboard serve.",
        subcommands: [Create.self] + commands([TokenOperations.ListTokens.self, TokenOperations.RevokeToken.self]))

    /// `token create`: the secret on stdout, what it reads and that it is shown once on stderr.
    struct Create: RemoteCommand {
        static var configuration: CommandConfiguration { OperationCommand<TokenOperations.CreateToken, NoChangeFlags>.configuration }
        @OptionGroup var global: GlobalOptions
        @OptionGroup var operation: TokenOperations.CreateToken
        @OptionGroup var change: WideningFlags

        func execute(_ output: Output) throws(BoardError) {
            var operation = self.operation
            operation.env = try global.environment()
            guard let created = try global.performOrRequest(operation, change: change, output) else { return }
            if output.json {
                output.printJSON(created)
                return
            }
            print(created.token)
            let reads = operation.kind == .hosts ? "host routes of" : "flags of"
            Output.printWarning(
                "this is the only time the token '\(operation.name)' is shown; the board keeps only its hash (reads the \(reads) \(created.environment)\(created.expiresAt.map { ", expires \($0)" } ?? ""))"
            )
        }
    }
}
