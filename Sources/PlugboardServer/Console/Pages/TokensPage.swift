import PlugboardModel
import PlugboardOperations

/// `/ui/tokens`: the person's access tokens (an admin sees everyone's, and the SDK and host tokens), with revocation.
struct TokensPage: ConsoleView {
    static let template = "tokens"

    /// Whether the person is an admin, who sees every token.
    let admin: Bool
    /// Whether the page offers revocation (not to a read-only session).
    let controls: Bool
    let access: [AccessRow]
    /// The SDK and host tokens (only an admin sees them).
    let sdk: [SDKRow]

    /// One access token, what it may do (`read and write`, `read-only`, `stop only`), and its revoke form, rendered;
    /// empty when it is no longer active.
    struct AccessRow: Sendable {
        let token: AccessToken
        let rights: String
        let revoke: String

        init(token: AccessToken, revoke: String) {
            self.token = token
            self.rights = token.stopsOnly ? "stop only" : token.readOnly ? "read-only" : "read and write"
            self.revoke = revoke
        }
    }

    /// One SDK or host token, and its kind as its raw value (`sdk+hosts`).
    struct SDKRow: Sendable {
        let token: APIToken
        let kind: String
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
                return AccessRow(token: token, revoke: revoke)
            },
            sdk: (sdk ?? []).map { SDKRow(token: $0, kind: $0.kind.rawValue) })
    }
}
