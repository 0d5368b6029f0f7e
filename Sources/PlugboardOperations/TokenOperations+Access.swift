public import ArgumentParser
public import PlugboardModel
package import PlugboardStore

/// Access tokens: each acts as one principal, with exactly its rights on the board.
extension TokenOperations {
    /// `plugboard access-token …`, in the order its help lists them.
    package static let accessTokens: [any ParsedOperation.Type] = [CreateAccessToken.self, ListAccessTokens.self, RevokeAccessToken.self]

    /// `access-token create [--principal] --name [--expires] [--read-only | --scope stop]`.
    public struct CreateAccessToken: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .accessTokenCreate, .write, abstract: "Create an access token for a principal; prints its secret once.",
            response: "CreatedAccessToken")
        @Option(name: .long, help: ArgumentHelp("Whom it acts as (default: you, the OS user).", valueName: "name"))
        public var principal: PersonPrincipal?
        @Option(name: .long, help: ArgumentHelp("A name for it, unique for its principal, for example laptop.", valueName: "label"))
        public var name: TokenName
        @Option(name: .long, help: ArgumentHelp("How long it is accepted: 90d, 12h, 30m, 2w, or a time (2027-01-31).", valueName: "age"))
        public var expires: String?
        @Flag(name: .long, help: "It may only read: no change, whatever its principal may do.") public var readOnly = false
        @Option(
            name: .long,
            help: ArgumentHelp(
                "all (its principal's rights) or stop: it may only kill a plug-in or version its principal could kill, through serve's alerting trigger (POST /api/triggers/alertmanager), and every other route refuses it.",
                valueName: "scope"))
        public var scope: AccessTokenScope = .all
        public init() {}
        public init(principal: PersonPrincipal?, name: TokenName, expires: String?, readOnly: Bool, scope: AccessTokenScope = .all) {
            self.principal = principal
            self.name = name
            self.expires = expires
            self.readOnly = readOnly
            self.scope = scope
        }

        /// What the API answers: the token, its secret, and for the text output whether it only reads and until when.
        public struct Created: Codable, Sendable {
            public let name: String
            public let principal: String
            public let token: String
            public let readOnly: Bool
            /// What it may do with its principal's rights: all of them, or only stop.
            public let scope: AccessTokenScope
            public let expiresAt: String?
        }

        /// What it answers.
        public typealias Response = Created
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let expiresAt = try expires.map { text throws(BoardError) in try expiry(text) }
            let created = try board.createAccessToken(
                principal: principal?.text ?? actor.osUser, name: name.text, readOnly: readOnly, scope: scope, expiresAt: expiresAt,
                by: actor)
            return OperationReply(
                Created(
                    name: created.token.name, principal: created.token.principal, token: created.secret, readOnly: created.token.readOnly,
                    scope: created.token.scope, expiresAt: created.token.expiresAt))
        }
    }

    /// `access-token list [--principal]`.
    public struct ListAccessTokens: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .accessTokenList, .read,
            abstract: "List access tokens: principal, rights (stop only for --scope stop), state, expiry and last use (never secrets).")
        @Option(name: .long, help: ArgumentHelp("Only this principal's tokens.", valueName: "name")) public var principal: PrincipalName?
        public init() {}
        public init(principal: PrincipalName?) { self.principal = principal }
        /// What it answers.
        public typealias Response = [AccessToken]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.accessTokens(principal: principal?.text))
        }
        package static func text(_ tokens: [AccessToken]) -> String? {
            Table.listing(
                tokens, "PRINCIPAL", "NAME", "RIGHTS", "STATE", "PREFIX", "EXPIRES", "LAST USED", "CREATED",
                empty: "No access tokens yet; create one with plugboard access-token create --name LABEL."
            ) { token in
                [
                    token.principal, token.name, token.stopsOnly ? "stop only" : token.readOnly ? "read-only" : "principal's",
                    token.state.rawValue, token.prefix,
                    token.expiresAt.cell, token.lastUsedAt.cell, "\(token.createdAt.prefix(10)) by \(token.createdBy)",
                ]
            }
        }
    }

    /// `access-token revoke NAME [--principal] [--reason]`: a stop.
    public struct RevokeAccessToken: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .accessTokenRevoke, .stop, abstract: "Revoke an access token: servers refuse it from their next request.")
        @Argument(help: "The token's name.") public var name: TokenName
        @Option(name: .long, help: ArgumentHelp("Whose token it is (default: yours).", valueName: "name"))
        public var principal: PrincipalName?
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(name: .long, help: "Why, for the audit log.") public var reason: Reason?
        public init() {}
        public init(name: TokenName, principal: PrincipalName?, reason: Reason?) {
            self.name = name
            self.principal = principal
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(
                try board.revokeAccessToken(principal: principal?.text ?? actor.osUser, name: name.text, reason: reason?.text, by: actor))
        }
    }
}
