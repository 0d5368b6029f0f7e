package import Foundation
package import PlugboardModel
package import PlugboardStore

/// API tokens (for SDKs and hosts) and access tokens (for people): the requests behind `plugboard token …` and
/// `access-token …`. A token's secret is in the answer of its creation only.
package enum TokenRequests {
    /// `--expires`: `90d`, `12h`, `30m`, `2w`, or an ISO-8601 time or date.
    package static func expiry(_ text: String) throws(BoardError) -> Date {
        if let seconds = AdminParse.duration(text, units: "mhdw") { return Date().addingTimeInterval(seconds) }
        if let date = Timestamp.parse(text) { return date }
        throw BoardError(
            .invalidInput, "--expires '\(Validate.escaped(text))' is not an age or a time: use for example 90d, 12h, 30m, 2w or 2027-01-31")
    }

    /// `token create --name --env [--for] [--expires]`.
    package struct Create: AdminRequest {
        package var name: String
        package var env: String
        /// `sdk` or `hosts`.
        package var kind: String
        package var expires: String?
        package init(name: String, env: String, kind: String, expires: String?) {
            self.name = name
            self.env = env
            self.kind = kind
            self.expires = expires
        }
        package static let route = AdminRoute(
            "token.create", .post, "/tokens", .write,
            summary: "Create an API token that reads one environment (admins); the answer holds its secret, shown once.",
            parameters: [
                AdminParameter("name", .body, required: true, "A unique name for the token."), .env(.body),
                AdminParameter("kind", .body, required: true, "sdk or hosts."),
                AdminParameter("expires", .body, "How long it is accepted: 90d, 12h, 30m, 2w, or a time."),
            ], response: "CreatedToken")

        /// What `token create --json` prints.
        package struct Created: Codable, Sendable {
            package let name: String
            package let environment: String
            package let kind: APIToken.Kind
            package let token: String
            package let expiresAt: String?
        }

        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<Created> {
            guard let parsed = APIToken.Kind(rawValue: kind), parsed != .sdkAndHosts else {
                throw BoardError(.invalidInput, "'\(Validate.escaped(kind))' is not a token kind; use sdk or hosts")
            }
            let expiresAt = try expires.map { text throws(BoardError) in try expiry(text) }
            let created = try board.createAPIToken(name: name, environment: env, kind: parsed, expiresAt: expiresAt, by: actor)
            return AdminReply(
                Created(
                    name: created.token.name, environment: created.token.environment, kind: created.token.kind, token: created.secret,
                    expiresAt: created.token.expiresAt))
        }
    }

    /// `token list`.
    package struct List: AdminRequest {
        package init() {}
        package static let route = AdminRoute(
            "token.list", .get, "/tokens", .read, summary: "List API tokens (never secrets).", response: "TokenList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[APIToken]> {
            AdminReply(try board.apiTokens())
        }
    }

    /// `token revoke NAME [--reason]`.
    package struct Revoke: AdminRequest {
        package var name: String
        package var reason: String?
        package init(name: String, reason: String?) {
            self.name = name
            self.reason = reason
        }
        package static let route = AdminRoute(
            "token.revoke", .post, "/tokens/{name}/revoke", .write,
            summary: "Revoke an API token: servers refuse it and end its open streams (admins).",
            parameters: [.path("name", "The token's name."), AdminParameter("reason", .body, "Why.")], response: "ChangeResult", lane: .stop
        )
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(try board.revokeAPIToken(name, reason: reason, by: actor))
        }
    }

    /// `access-token create [--principal] --name [--expires] [--read-only]`.
    package struct CreateAccess: AdminRequest {
        /// Whom it acts as; nil for the caller.
        package var principal: String?
        package var name: String
        package var expires: String?
        package var readOnly: Bool
        package init(principal: String?, name: String, expires: String?, readOnly: Bool) {
            self.principal = principal
            self.name = name
            self.expires = expires
            self.readOnly = readOnly
        }
        package static let route = AdminRoute(
            "access-token.create", .post, "/access-tokens", .write,
            summary:
                "Create an access token for a principal (the caller's own, or anyone's for admins); the answer holds its secret, shown once.",
            parameters: [
                AdminParameter("principal", .body, "Whom it acts as (default: the caller)."),
                AdminParameter("name", .body, required: true, "A name, unique for its principal."),
                AdminParameter("expires", .body, "How long it is accepted: 90d, 12h, 30m, 2w, or a time."),
                AdminParameter("read_only", .body, .boolean, required: true, "It may only read."),
            ], response: "CreatedAccessToken")

        /// What `access-token create --json` prints.
        package struct Created: Codable, Sendable {
            package let name: String
            package let principal: String
            package let token: String
            /// For the text output: whether it only reads, and until when.
            package let readOnly: Bool
            package let expiresAt: String?
        }

        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<Created> {
            let expiresAt = try expires.map { text throws(BoardError) in try expiry(text) }
            let created = try board.createAccessToken(
                principal: principal ?? actor.osUser, name: name, readOnly: readOnly, expiresAt: expiresAt, by: actor)
            return AdminReply(
                Created(
                    name: created.token.name, principal: created.token.principal, token: created.secret, readOnly: created.token.readOnly,
                    expiresAt: created.token.expiresAt))
        }
    }

    /// `access-token list [--principal]`.
    package struct ListAccess: AdminRequest {
        package var principal: String?
        package init(principal: String?) { self.principal = principal }
        package static let route = AdminRoute(
            "access-token.list", .get, "/access-tokens", .read, summary: "List access tokens (never secrets).",
            parameters: [AdminParameter("principal", .query, "Only this principal's tokens.")], response: "AccessTokenList")
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[AccessToken]> {
            AdminReply(try board.accessTokens(principal: principal))
        }
    }

    /// `access-token revoke NAME [--principal] [--reason]`.
    package struct RevokeAccess: AdminRequest {
        /// Whose token it is; nil for the caller's.
        package var principal: String?
        package var name: String
        package var reason: String?
        package init(principal: String?, name: String, reason: String?) {
            self.principal = principal
            self.name = name
            self.reason = reason
        }
        package static let route = AdminRoute(
            "access-token.revoke", .post, "/access-tokens/{name}/revoke", .write,
            summary: "Revoke an access token (the caller's own, or anyone's for admins): refused from the next request.",
            parameters: [
                .path("name", "The token's name."), AdminParameter("principal", .body, "Whose token it is (default: the caller's)."),
                AdminParameter("reason", .body, "Why."),
            ], response: "ChangeResult", lane: .stop)
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(try board.revokeAccessToken(principal: principal ?? actor.osUser, name: name, reason: reason, by: actor))
        }
    }
}
