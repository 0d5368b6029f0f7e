import ArgumentParser
import PlugboardModel
import PlugboardOperations

/// `plugboard access-token …`: people's (and services') tokens, each acting as one principal.
struct AccessTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "access-token",
        abstract: "Create, list and revoke access tokens: each acts as one principal, with exactly its rights on the board.",
        discussion: """
            An access token is a person's or a service's credential for the board's operations API: it acts as its principal \
            (an admin, an owner or maintainer of some plug-ins, or nobody in particular), or with --read-only it may only \
            read, or with --scope stop it may only stop: kill a plug-in or version its principal could kill, through \
            plugboard serve's alerting trigger (POST /api/triggers/alertmanager); every other route refuses it, and it \
            makes no tokens. Its changes are audited as that principal. Anyone may create and revoke tokens for themselves; a board \
            admin may for anyone. The board keeps only the secret's SHA-256. The operations API (plugboard serve --admin) \
            accepts them as Authorization: Bearer TOKEN; the CLI sends one with --server (from $PLUGBOARD_TOKEN or \
            plugboard login). A token created with --server is made with the access token that sends the request: it \
            expires no later than that token (a later --expires, or none, is refused) and is revoked with it. Names \
            under plugboard/ are Plugboard's own and refused.
            """,
        subcommands: [Create.self] + commands([TokenOperations.ListAccessTokens.self, TokenOperations.RevokeAccessToken.self]))

    /// `access-token create`: the secret on stdout, whose rights it has and that it is shown once on stderr.
    struct Create: RemoteCommand {
        static var configuration: CommandConfiguration { OperationCommand<TokenOperations.CreateAccessToken, NoChangeFlags>.configuration }
        @OptionGroup var global: GlobalOptions
        @OptionGroup var operation: TokenOperations.CreateAccessToken

        /// What `--json` prints: the token, without what the text output says on stderr.
        struct TokenJSON: Encodable {
            let name: String
            let principal: String
            let token: String
        }

        func execute(_ output: Output) throws(BoardError) {
            let created = try global.perform(operation)
            if output.json {
                output.printJSON(TokenJSON(name: created.name, principal: created.principal, token: created.token))
                return
            }
            print(created.token)
            let rights =
                created.scope == .stop
                ? "may only stop: kill what \(created.principal) could kill, through serve's alerting trigger"
                : created.readOnly ? "may only read" : "acts with \(created.principal)'s rights"
            Output.printWarning(
                "this is the only time the access token '\(created.principal)/\(operation.name)' is shown; the board keeps only its hash (it \(rights)\(created.expiresAt.map { ", expires \($0)" } ?? ""))"
            )
        }
    }
}
