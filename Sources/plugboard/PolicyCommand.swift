public import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardModel
import PlugboardStore

extension SignaturePolicy: ExpressibleByArgument {}

/// `plugboard policy …`: each environment's signature policy.
struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy", abstract: "Set and show each environment's signature policy (off, warn, require).",
        subcommands: [SetPolicy.self, Show.self])

    struct SetPolicy: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set the signature policy of the environment given with --env (admins).",
            discussion: """
                off: signatures are not checked (the default). warn: hosts load releases and report signature problems.
                require: hosts load a release only if a trusted, unrevoked key signed exactly its id, version, manifest and artifact.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "off, warn or require.") var signatures: SignaturePolicy

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(TrustRequests.SetPolicy(env: try global.environment(), signatures: signatures.rawValue)))
        }
    }

    struct Show: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show every environment's signature policy.", aliases: ["list"])
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let policies = try global.perform(TrustRequests.Policies())
            if output.json {
                output.printJSON(policies)
                return
            }
            var table = Table("ENVIRONMENT", "SIGNATURES", "SET")
            for policy in policies {
                table.add(
                    policy.environment, policy.signatures.rawValue,
                    policy.updatedAt.map { "\($0) by \(policy.updatedBy ?? "?")" } ?? "never (default off)")
            }
            table.print(empty: "The board has no environment yet.")
        }
    }
}
