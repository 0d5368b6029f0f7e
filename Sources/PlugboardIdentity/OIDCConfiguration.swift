public import Foundation

/// How Plugboard signs people in with one OpenID Connect provider.
///
/// The issuer is compared as an exact string with the `issuer` of the provider's discovery document and the `iss` of
/// every ID token: `https://idp.example` and `https://idp.example/` are two issuers.
public struct OIDCConfiguration: Sendable {
    /// The provider's issuer identifier, exactly as the provider spells it (`https://idp.example/realms/main`).
    public var issuer: String
    /// The client id Plugboard is registered under at the provider.
    public var clientID: String
    /// The client secret, read by the caller from a file only its owner can read. Never logged or printed.
    public var clientSecret: ClientSecret
    /// The exact redirect URI registered at the provider (`https://board.example/ui/oidc/callback`).
    public var redirectURI: String
    /// The scopes asked for; `openid` is always among them.
    public var scopes: [String]
    /// The claim a person's name is read from; `email` when the token lacks it.
    public var nameClaim: String
    /// The claim that lists a person's groups, read from the ID token or else from the userinfo endpoint.
    public var groupsClaim: String?
    /// Whether the provider may live on a private, carrier-grade NAT, unique-local or loopback address (an
    /// on-premises provider). A loopback issuer is always allowed its loopback addresses; link-local addresses, where
    /// cloud metadata services answer, are never called.
    public var allowPrivateNetwork: Bool
    /// How far the provider's clock may be from this machine's when `exp`, `nbf`, `iat` and `auth_time` are checked.
    public var clockSkew: TimeInterval
    /// The least time between two fetches of the provider's keys (JWKS) for a token signed with a key the cache lacks.
    public var keyRefetchInterval: TimeInterval

    /// A configuration with the house defaults: scopes `openid profile email`, name from `preferred_username`, no
    /// groups claim, public addresses only, 60 seconds of clock skew, the keys fetched again at most once a minute.
    public init(
        issuer: String, clientID: String, clientSecret: ClientSecret, redirectURI: String,
        scopes: [String] = ["openid", "profile", "email"], nameClaim: String = "preferred_username", groupsClaim: String? = nil,
        allowPrivateNetwork: Bool = false, clockSkew: TimeInterval = 60,
        keyRefetchInterval: TimeInterval = 60
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectURI = redirectURI
        self.scopes = scopes.contains("openid") ? scopes : ["openid"] + scopes
        self.nameClaim = nameClaim
        self.groupsClaim = groupsClaim
        self.allowPrivateNetwork = allowPrivateNetwork
        self.clockSkew = clockSkew
        self.keyRefetchInterval = keyRefetchInterval
    }

    /// The issuer as a URL, checked: `https`, or `http` on a loopback host; no query or fragment.
    func issuerURL() throws(IdentityError) -> URL {
        guard let url = URL(string: issuer), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
            url.query == nil, url.fragment == nil
        else {
            throw IdentityError(.invalidConfiguration, "the issuer \(IdentityError.quoted(issuer, limit: 200)) is not an https URL")
        }
        guard scheme == "https" || (scheme == "http" && OutboundHTTP.isLoopbackHost(host)) else {
            throw IdentityError(
                .invalidConfiguration,
                "the issuer \(IdentityError.quoted(issuer, limit: 200)) is not https; plain http is allowed only on a loopback address")
        }
        guard !clientID.isEmpty else { throw IdentityError(.invalidConfiguration, "the OpenID Connect client id is empty") }
        return url
    }
}

/// A client secret: its value is reachable only through ``reveal()``, and it prints as `<redacted>`.
public struct ClientSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let value: String

    /// A secret of `value` (the content of the secret file, its trailing newline removed by the caller).
    public init(_ value: String) { self.value = value }

    /// The secret in the file at `path`, its trailing newline removed. The file must be a regular file that only its
    /// owner can read or write (mode 0600 or 0400).
    ///
    /// - Throws: ``IdentityError`` (``IdentityError/Code/invalidConfiguration``) when the file is missing, empty,
    ///   too large, or open to others; the sentence names the path and the mode, never the content.
    public init(contentsOfFile path: String) throws(IdentityError) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular, let mode = attributes[.posixPermissions] as? Int
        else { throw IdentityError(.invalidConfiguration, "the client secret file \(path) is missing or not a regular file") }
        guard mode & 0o077 == 0 else {
            throw IdentityError(
                .invalidConfiguration,
                "the client secret file \(path) can be read or written by others (mode \(String(mode, radix: 8))); make it 0600")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= 4096,
            var text = String(data: data, encoding: .utf8)
        else { throw IdentityError(.invalidConfiguration, "the client secret file \(path) is unreadable, not UTF-8, or over 4 KiB") }
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        guard !text.isEmpty else { throw IdentityError(.invalidConfiguration, "the client secret file \(path) is empty") }
        self.value = text
    }

    /// The secret itself, for the token request's `Authorization` header.
    public func reveal() -> String { value }

    /// `<redacted>`.
    public var description: String { "<redacted>" }
    /// `<redacted>`.
    public var debugDescription: String { "<redacted>" }
    /// A mirror without children, so that `dump` shows no secret.
    public var customMirror: Mirror { Mirror(self, children: []) }
}
