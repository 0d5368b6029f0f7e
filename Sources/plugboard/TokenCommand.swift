import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardModel
import PlugboardStore

/// `plugboard token …`: the API tokens `plugboard serve` accepts.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Create, list and revoke the API tokens SDKs and plug-in hosts use to read plugboard serve.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a token that reads one environment; prints its secret once (admins).",
            discussion: """
                The board keeps only the secret's SHA-256: store the printed secret where the SDK reads it. The secret has
                Unleash's shape (*:ENV.pb_…), so Unleash SDKs take it as they take Unleash's own client tokens.

                A token is for SDKs (the Unleash client API and OFREP, the default) or for plug-in hosts (--for hosts: the
                routes under /api/host/); each kind is refused with 403 on the other's routes. Revoking a token, or its
                expiry, also ends its open event streams within a second.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "A unique name for the token, for example checkout-service.") var name: String
        @Option(
            name: .customLong("for"),
            help: ArgumentHelp(
                "What reads with it: sdk (flags: Unleash client API, OFREP) or hosts (plug-in hosts: /api/host/).", valueName: "kind")
        )
        var use: Use = .sdk
        @Option(name: .long, help: ArgumentHelp("How long it is accepted: 90d, 12h, 30m, 2w, or a time (2027-01-31).", valueName: "age"))
        var expires: String?

        func execute(_ output: Output) throws(BoardError) {
            let created = try global.perform(
                TokenRequests.Create(name: name, env: try global.environment(), kind: use.rawValue, expires: expires))
            if output.json {
                output.printJSON(created)
                return
            }
            print(created.token)
            let reads = use == .hosts ? "host routes of" : "flags of"
            Output.printWarning(
                "this is the only time the token '\(name)' is shown; the board keeps only its hash (reads the \(reads) \(created.environment)\(created.expiresAt.map { ", expires \($0)" } ?? ""))"
            )
        }

        /// The kinds of token `--for` makes (tokens of both kinds exist only from before kinds did).
        enum Use: String, ExpressibleByArgument, CaseIterable {
            case sdk, hosts

            var kind: APIToken.Kind { self == .sdk ? .sdk : .hosts }
        }

    }

    struct List: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List tokens: environment, kind, state, expiry and last use (never secrets).")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let tokens = try global.perform(TokenRequests.List())
            if output.json {
                output.printJSON(tokens)
                return
            }
            var table = Table("NAME", "ENVIRONMENT", "FOR", "STATE", "PREFIX", "EXPIRES", "LAST USED", "CREATED")
            for token in tokens {
                table.add(
                    token.name, token.environment, token.kind.rawValue, token.state.rawValue, token.prefix, token.expiresAt.cell,
                    token.lastUsedAt.cell,
                    "\(token.createdAt.prefix(10)) by \(token.createdBy)")
            }
            table.print(empty: "No tokens yet; create one with plugboard token create --env ENV --name NAME [--for sdk|hosts].")
        }
    }

    struct Revoke: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Revoke a token: servers refuse it and end its open streams from now on (admins).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The token's name.") var name: String
        @Option(name: .long, help: "Why, for the audit log.") var reason: String?

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(TokenRequests.Revoke(name: name, reason: reason)))
        }
    }
}
