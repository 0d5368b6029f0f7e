public import ArgumentParser
package import Foundation
public import PlugboardModel
package import PlugboardStore

/// API tokens (for SDKs and hosts) and access tokens (for people): `plugboard token …` and `access-token …`. A token's
/// secret is in the answer of its creation only.
public enum TokenOperations {
    /// `plugboard token …`, in the order its help lists them.
    package static let apiTokens: [any ParsedOperation.Type] = [CreateToken.self, ListTokens.self, RevokeToken.self]

    /// `--expires`: `90d`, `12h`, `30m`, `2w`, or an ISO-8601 time or date.
    package static func expiry(_ text: String) throws(BoardError) -> Date {
        if let seconds = OperationParse.duration(text, units: "mhdw") { return Date().addingTimeInterval(seconds) }
        if let date = Timestamp.parse(text) { return date }
        throw BoardError(
            .invalidInput, "--expires '\(Validate.escaped(text))' is not an age or a time: use for example 90d, 12h, 30m, 2w or 2027-01-31")
    }

    /// `token create --name --env [--for] [--expires]`.
    public struct CreateToken: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .tokenCreate, .write, abstract: "Create a token that reads one environment; prints its secret once (admins).",
            discussion: """
                The board keeps only the secret's SHA-256: store the printed secret where the SDK reads it. The secret has
                Unleash's shape (*:ENV.pb_…), so Unleash SDKs take it as they take Unleash's own client tokens.

                A token is for SDKs (the Unleash client API and OFREP, the default) or for plug-in hosts (--for hosts: the
                routes under /api/host/); each kind is refused with 403 on the other's routes. Revoking a token, or its
                expiry, also ends its open event streams within a second.
                """, response: "CreatedToken", widens: .inEnvironment, answerIsSecret: true)

        /// The kinds of token `--for` makes (tokens of both kinds exist only from before kinds did).
        public enum Use: String, ExpressibleByArgument, CaseIterable, Sendable {
            case sdk, hosts

            /// The board's kind of token.
            public var kind: APIToken.Kind { self == .sdk ? .sdk : .hosts }
        }

        @Option(name: .long, help: "A unique name for the token, for example checkout-service.") public var name: TokenName
        @Option(
            name: .customLong("for"),
            help: ArgumentHelp(
                "What reads with it: sdk (flags: Unleash client API, OFREP) or hosts (plug-in hosts: /api/host/).", valueName: "kind")
        )
        public var kind: Use = .sdk
        @Option(name: .long, help: ArgumentHelp("How long it is accepted: 90d, 12h, 30m, 2w, or a time (2027-01-31).", valueName: "age"))
        public var expires: String?
        public var env: String?
        public init() {}
        public init(name: TokenName, env: String, kind: Use, expires: String?) {
            self.name = name
            self.env = env
            self.kind = kind
            self.expires = expires
        }

        /// What `token create --json` prints.
        public struct Created: Codable, Sendable {
            public let name: String
            public let environment: String
            public let kind: APIToken.Kind
            public let token: String
            public let expiresAt: String?
        }

        /// What it answers.
        public typealias Response = Created
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let expiresAt = try expires.map { text throws(BoardError) in try expiry(text) }
            let created = try board.createAPIToken(
                name: name.text, environment: try environment(), kind: kind.kind, expiresAt: expiresAt, by: actor)
            return OperationReply(
                Created(
                    name: created.token.name, environment: created.token.environment, kind: created.token.kind, token: created.secret,
                    expiresAt: created.token.expiresAt))
        }
    }

    /// `token list`.
    public struct ListTokens: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .tokenList, .read, abstract: "List tokens: environment, kind, state, expiry and last use (never secrets).",
            response: "TokenList")
        public init() {}
        /// What it answers.
        public typealias Response = [APIToken]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.apiTokens())
        }
        package static func text(_ tokens: [APIToken]) -> String? {
            Table.listing(
                tokens, "NAME", "ENVIRONMENT", "FOR", "STATE", "PREFIX", "EXPIRES", "LAST USED", "CREATED",
                empty: "No tokens yet; create one with plugboard token create --env ENV --name NAME [--for sdk|hosts]."
            ) { token in
                [
                    token.name, token.environment, token.kind.rawValue, token.state.rawValue, token.prefix, token.expiresAt.cell,
                    token.lastUsedAt.cell, "\(token.createdAt.prefix(10)) by \(token.createdBy)",
                ]
            }
        }
    }

    /// `token revoke NAME [--reason]`: a stop.
    public struct RevokeToken: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .tokenRevoke, .stop, abstract: "Revoke a token: servers refuse it and end its open streams from now on (admins).")
        @Argument(help: "The token's name.") public var name: TokenName
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(name: .long, help: "Why, for the audit log.") public var reason: Reason?
        public init() {}
        public init(name: TokenName, reason: Reason?) {
            self.name = name
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.revokeAPIToken(name.text, reason: reason?.text, by: actor))
        }
    }
}
