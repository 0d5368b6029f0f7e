import PlugboardModel
import PlugboardOperations

/// `/ui/tokens`: the person's access tokens (an admin sees everyone's, and the SDK and host tokens), with revocation.
struct TokensPage: ConsoleView {
    static let template = "tokens"

    /// Whether the person is an admin, who sees every token.
    let admin: Bool
    /// Whether the page offers revocation (not to a read-only session).
    let controls: Bool
    let access: [AccessToken]
    let sdk: [SDKToken]

    /// One access token.
    struct AccessToken: Sendable {
        let principal: String
        let name: String
        let prefix: String
        let readOnly: Bool
        let state: String
        let expiresAt: String
        let lastUsedAt: String
        /// Its revoke form, rendered; empty when it is no longer active.
        let revoke: String
    }

    /// One SDK or host token.
    struct SDKToken: Sendable {
        let name: String
        let environment: String
        let kind: String
        let prefix: String
        let state: String
        let lastUsedAt: String
    }

    static func read(_ reads: ConsoleReads) throws -> TokensPage {
        let page = reads.page
        // Admins see every principal's access tokens and the SDK tokens; others their own access tokens.
        let sdk = try ConsolePages.adminsOnly { () throws(BoardError) in try reads.perform(TokenOperations.ListTokens()) }
        let mine = try PrincipalName(validating: page.principal.osUser)
        let access = try reads.perform(TokenOperations.ListAccessTokens(principal: sdk == nil ? mine : nil))
        return TokensPage(
            admin: sdk != nil, controls: !page.readOnly,
            access: access.map { token in
                let revoke =
                    token.state == .active
                    ? ConsoleForms.form(
                        TokenOperations.RevokeAccessToken.self, page, fixed: ["name": token.name, "principal": token.principal],
                        button: "Revoke", danger: true) ?? "" : ""
                return AccessToken(
                    principal: token.principal, name: token.name, prefix: token.prefix, readOnly: token.readOnly,
                    state: token.state.rawValue, expiresAt: token.expiresAt ?? "never", lastUsedAt: token.lastUsedAt ?? "never",
                    revoke: revoke)
            },
            sdk: (sdk ?? []).map { token in
                SDKToken(
                    name: token.name, environment: token.environment, kind: token.kind.rawValue, prefix: token.prefix,
                    state: token.state.rawValue, lastUsedAt: token.lastUsedAt ?? "never")
            })
    }
}
