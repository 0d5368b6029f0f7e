package import ArgumentParser
package import PlugboardModel
package import PlugboardStore

/// Access tokens: each acts as one principal, with exactly its rights on the board.
extension TokenOperations {
    /// `plugboard access-token …`, in the order its help lists them.
    package static let accessTokens: [any BoardOperation.Type] = [CreateAccessToken.self, ListAccessTokens.self, RevokeAccessToken.self]

    /// `access-token create [--principal] --name [--expires] [--read-only]`.
    package struct CreateAccessToken: BoardOperation {
        package static let declaration = OperationDeclaration(
            "access-token.create", .write, abstract: "Create an access token for a principal; prints its secret once.",
            response: "CreatedAccessToken")
        @Option(name: .long, help: ArgumentHelp("Whom it acts as (default: you, the OS user).", valueName: "name"))
        package var principal: PersonPrincipal?
        @Option(name: .long, help: ArgumentHelp("A name for it, unique for its principal, for example laptop.", valueName: "label"))
        package var name: TokenName
        @Option(name: .long, help: ArgumentHelp("How long it is accepted: 90d, 12h, 30m, 2w, or a time (2027-01-31).", valueName: "age"))
        package var expires: String?
        @Flag(name: .long, help: "It may only read: no change, whatever its principal may do.") package var readOnly = false
        package init() {}
        package init(principal: PersonPrincipal?, name: TokenName, expires: String?, readOnly: Bool) {
            self.principal = principal
            self.name = name
            self.expires = expires
            self.readOnly = readOnly
        }

        /// What the API answers: the token, its secret, and for the text output whether it only reads and until when.
        package struct Created: Codable, Sendable {
            package let name: String
            package let principal: String
            package let token: String
            package let readOnly: Bool
            package let expiresAt: String?
        }

        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<Created> {
            let expiresAt = try expires.map { text throws(BoardError) in try expiry(text) }
            let created = try board.createAccessToken(
                principal: principal?.text ?? actor.osUser, name: name.text, readOnly: readOnly, expiresAt: expiresAt, by: actor)
            return AdminReply(
                Created(
                    name: created.token.name, principal: created.token.principal, token: created.secret, readOnly: created.token.readOnly,
                    expiresAt: created.token.expiresAt))
        }
    }

    /// `access-token list [--principal]`.
    package struct ListAccessTokens: BoardOperation {
        package static let declaration = OperationDeclaration(
            "access-token.list", .read, abstract: "List access tokens: principal, rights, state, expiry and last use (never secrets).",
            response: "AccessTokenList")
        @Option(name: .long, help: ArgumentHelp("Only this principal's tokens.", valueName: "name")) package var principal: PrincipalName?
        package init() {}
        package init(principal: PrincipalName?) { self.principal = principal }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[AccessToken]> {
            AdminReply(try board.accessTokens(principal: principal?.text))
        }
        package static func text(_ tokens: [AccessToken]) -> String? {
            var table = Table("PRINCIPAL", "NAME", "RIGHTS", "STATE", "PREFIX", "EXPIRES", "LAST USED", "CREATED")
            for token in tokens {
                table.add(
                    token.principal, token.name, token.readOnly ? "read-only" : "principal's", token.state.rawValue, token.prefix,
                    token.expiresAt.cell, token.lastUsedAt.cell, "\(token.createdAt.prefix(10)) by \(token.createdBy)")
            }
            return table.text(empty: "No access tokens yet; create one with plugboard access-token create --name LABEL.")
        }
    }

    /// `access-token revoke NAME [--principal] [--reason]`: a stop.
    package struct RevokeAccessToken: BoardOperation {
        package static let declaration = OperationDeclaration(
            "access-token.revoke", .stop, abstract: "Revoke an access token: servers refuse it from their next request.",
            response: "ChangeResult")
        @Argument(help: "The token's name.") package var name: TokenName
        @Option(name: .long, help: ArgumentHelp("Whose token it is (default: yours).", valueName: "name"))
        package var principal: PrincipalName?
        @Option(name: .long, help: "Why, for the audit log.") package var reason: Reason?
        package init() {}
        package init(name: TokenName, principal: PrincipalName?, reason: Reason?) {
            self.name = name
            self.principal = principal
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(
                try board.revokeAccessToken(principal: principal?.text ?? actor.osUser, name: name.text, reason: reason?.text, by: actor))
        }
    }
}
