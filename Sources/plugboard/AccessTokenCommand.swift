import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardModel
import PlugboardStore

/// `plugboard access-token …`: people's (and services') tokens, each acting as one principal.
struct AccessTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "access-token",
        abstract: "Create, list and revoke access tokens: each acts as one principal, with exactly its rights on the board.",
        discussion: """
            An access token is a person's or a service's credential for the board's admin API: it acts as its principal \
            (an admin, an owner or maintainer of some plug-ins, or nobody in particular), or with --read-only it may only \
            read. Its changes are audited as that principal. Anyone may create and revoke tokens for themselves; a board \
            admin may for anyone. The board keeps only the secret's SHA-256. The admin API (plugboard serve --admin) \
            accepts them as Authorization: Bearer TOKEN; the CLI sends one with --server (from $PLUGBOARD_TOKEN or \
            plugboard login). A token created with --server is made with the access token that sends the request: it \
            expires no later than that token (a later --expires, or none, is refused) and is revoked with it. Names \
            under plugboard/ are Plugboard's own and refused.
            """,
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create an access token for a principal; prints its secret once.")
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: ArgumentHelp("Whom it acts as (default: you, the OS user).", valueName: "name")) var principal: String?
        @Option(name: .long, help: ArgumentHelp("A name for it, unique for its principal, for example laptop.", valueName: "label"))
        var name: String
        @Option(name: .long, help: ArgumentHelp("How long it is accepted: 90d, 12h, 30m, 2w, or a time (2027-01-31).", valueName: "age"))
        var expires: String?
        @Flag(name: .long, help: "It may only read: no change, whatever its principal may do.") var readOnly = false

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                if let principal { try Validate.personPrincipal(principal) }
                try Validate.tokenName(name)
            }
        }

        struct TokenJSON: Encodable {
            let name: String
            let principal: String
            let token: String
        }

        func execute(_ output: Output) throws(BoardError) {
            let created = try global.perform(
                TokenRequests.CreateAccess(principal: principal, name: name, expires: expires, readOnly: readOnly))
            if output.json {
                output.printJSON(TokenJSON(name: created.name, principal: created.principal, token: created.token))
                return
            }
            print(created.token)
            let rights = created.readOnly ? "may only read" : "acts with \(created.principal)'s rights"
            Output.printWarning(
                "this is the only time the access token '\(created.principal)/\(name)' is shown; the board keeps only its hash (it \(rights)\(created.expiresAt.map { ", expires \($0)" } ?? ""))"
            )
        }
    }

    struct List: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List access tokens: principal, rights, state, expiry and last use (never secrets).")
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: ArgumentHelp("Only this principal's tokens.", valueName: "name")) var principal: String?

        func execute(_ output: Output) throws(BoardError) {
            let tokens = try global.perform(TokenRequests.ListAccess(principal: principal))
            if output.json {
                output.printJSON(tokens)
                return
            }
            var table = Table("PRINCIPAL", "NAME", "RIGHTS", "STATE", "PREFIX", "EXPIRES", "LAST USED", "CREATED")
            for token in tokens {
                table.add(
                    token.principal, token.name, token.readOnly ? "read-only" : "principal's", token.state.rawValue, token.prefix,
                    token.expiresAt.cell, token.lastUsedAt.cell, "\(token.createdAt.prefix(10)) by \(token.createdBy)")
            }
            table.print(empty: "No access tokens yet; create one with plugboard access-token create --name LABEL.")
        }
    }

    struct Revoke: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Revoke an access token: servers refuse it from their next request.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The token's name.") var name: String
        @Option(name: .long, help: ArgumentHelp("Whose token it is (default: yours).", valueName: "name")) var principal: String?
        @Option(name: .long, help: "Why, for the audit log.") var reason: String?

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(TokenRequests.RevokeAccess(principal: principal, name: name, reason: reason)))
        }
    }
}
