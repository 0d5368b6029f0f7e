/// Why a sign-in with the identity provider was refused, as one sentence a person can act on.
///
/// The sentence never contains a token, an authorization code, the client secret or a PKCE verifier; it may name
/// the issuer, an algorithm, a key identifier or an HTTP status, which are not secrets.
public struct IdentityError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, for code that reacts to a kind of refusal (a test, an audit row, a status code).
    public enum Code: String, Sendable, Equatable, CaseIterable {
        /// The configuration itself is unusable: an issuer that is not an `https` URL, an empty client id.
        case invalidConfiguration
        /// A call to the provider failed: unreachable, a timeout, a redirect, a body too large, not JSON, a status.
        case providerUnreachable
        /// An address the provider's host resolved to is on a network Plugboard does not call.
        case privateAddress
        /// The provider's discovery document is unusable (wrong issuer, an endpoint not `https`, no code flow).
        case discoveryRejected
        /// The provider's token endpoint refused the code (replayed, expired, a wrong PKCE verifier).
        case codeRefused
        /// The ID token failed a check: its form, algorithm, key, signature or one of its claims.
        case tokenRejected
        /// The userinfo answer does not belong to the person of the ID token, or is unusable.
        case userinfoRejected
        /// The login is unknown, expired, already finished, or finished in another browser.
        case loginRejected
    }

    /// The kind of refusal.
    public let code: Code
    /// The sentence that explains it.
    public let description: String

    init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}

extension IdentityError {
    /// A value the provider chose, shortened and reduced to safe characters so that it can sit in a sentence.
    static func quoted(_ value: String, limit: Int = 64) -> String {
        let allowed = value.unicodeScalars.filter {
            $0.isASCII && ($0.properties.isAlphabetic || "0123456789-_.:/ @".unicodeScalars.contains($0))
        }
        let text = String(String.UnicodeScalarView(allowed.prefix(limit)))
        return "'" + text + (allowed.count > limit ? "…" : "") + "'"
    }
}
