public import Foundation
import JWTKit
public import Logging
import Synchronization

/// One OpenID Connect provider, discovered and checked: builds the authorization URL, redeems codes, verifies ID
/// tokens against the provider's published keys.
///
/// Make one with ``discover(_:http:logger:)`` at start. The signing keys (JWKS) are cached; a token signed with a
/// key the cache lacks makes the provider fetch them again, at most once per ``OIDCConfiguration/keyRefetchInterval`` (a minute), then refuses.
public final class OIDCProvider: Sendable {
    /// The configuration it was discovered with.
    public let configuration: OIDCConfiguration
    /// What the provider's discovery document said, checked.
    public let metadata: ProviderMetadata
    let http: OutboundHTTP
    let logger: Logger
    let keys: Mutex<KeyCache>
    let now: @Sendable () -> Date

    struct KeyCache: Sendable {
        var keys: [String: JWK]
        var refetch: (at: Date, task: Task<[String: JWK], any Error>)?
    }

    init(
        configuration: OIDCConfiguration, metadata: ProviderMetadata, http: OutboundHTTP, keys: [String: JWK], logger: Logger,
        now: @escaping @Sendable () -> Date
    ) {
        self.configuration = configuration
        self.metadata = metadata
        self.http = http
        self.logger = logger
        self.keys = Mutex(KeyCache(keys: keys, refetch: nil))
        self.now = now
    }

    /// The provider of `configuration`: its discovery document fetched and checked, its signing keys fetched.
    ///
    /// - Parameters:
    ///   - configuration: the issuer, client and claims to use.
    ///   - http: the bounds of calls out; by default the house bounds, with ``OIDCConfiguration/allowPrivateNetwork``,
    ///     and loopback addresses allowed when the issuer itself is on loopback.
    ///   - logger: where fetches of the discovery document and the JWKS are logged (never a secret).
    /// - Throws: ``IdentityError`` with one sentence when the issuer is unusable, unreachable or its document is wrong.
    public static func discover(_ configuration: OIDCConfiguration, http: OutboundHTTP? = nil, logger: Logger? = nil)
        async throws(IdentityError)
        -> OIDCProvider
    {
        try await discover(configuration, http: http, logger: logger, now: { Date() })
    }

    static func discover(_ configuration: OIDCConfiguration, http: OutboundHTTP?, logger: Logger?, now: @escaping @Sendable () -> Date)
        async throws(IdentityError) -> OIDCProvider
    {
        let issuerURL = try configuration.issuerURL()
        var client = http ?? OutboundHTTP(allowPrivateNetwork: configuration.allowPrivateNetwork)
        if configuration.allowPrivateNetwork { client.allowPrivateNetwork = true }
        if OutboundHTTP.isLoopbackHost(issuerURL.host ?? "") { client.allowLoopback = true }
        let logger = logger ?? Logger(label: "plugboard.identity")
        var base = configuration.issuer
        while base.hasSuffix("/") { base.removeLast() }
        guard let wellKnown = URL(string: base + "/.well-known/openid-configuration") else {
            throw IdentityError(
                .invalidConfiguration, "the issuer \(IdentityError.quoted(configuration.issuer, limit: 200)) is not an https URL")
        }
        let answer = try await client.get(wellKnown, what: "discovery document")
        guard answer.status == 200 else {
            throw IdentityError(.discoveryRejected, "the identity provider's discovery document answered HTTP \(answer.status)")
        }
        let metadata = try ProviderMetadata(document: answer.body, issuer: configuration.issuer)
        let keys = try await fetchKeys(metadata.jwksURI, http: client)
        logger.info("identity provider discovered", metadata: ["issuer": "\(configuration.issuer)", "keys": "\(keys.count)"])
        return OIDCProvider(configuration: configuration, metadata: metadata, http: client, keys: keys, logger: logger, now: now)
    }

    /// Where to send the browser: the authorization endpoint with the code flow, PKCE S256, `state` and `nonce`.
    ///
    /// - Parameters:
    ///   - state: the login's state (from ``PendingLogins/begin(purpose:returnTo:)``).
    ///   - nonce: the login's nonce, which the ID token must carry back.
    ///   - codeChallenge: the S256 challenge of the login's PKCE verifier.
    ///   - maxAge: when set, the person must have signed in at the provider within this many seconds (`max_age`).
    ///   - prompt: `login` to make the provider ask again, or nil.
    public func authorizationURL(state: String, nonce: String, codeChallenge: String, maxAge: Int? = nil, prompt: String? = nil) -> URL {
        var components = URLComponents(url: metadata.authorizationEndpoint, resolvingAgainstBaseURL: false)!
        var items = components.queryItems ?? []
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: configuration.clientID),
            URLQueryItem(name: "redirect_uri", value: configuration.redirectURI),
            URLQueryItem(name: "scope", value: configuration.scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "nonce", value: nonce),
            URLQueryItem(name: "code_challenge", value: codeChallenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        if let maxAge { items.append(URLQueryItem(name: "max_age", value: String(maxAge))) }
        if let prompt { items.append(URLQueryItem(name: "prompt", value: prompt)) }
        components.queryItems = items
        // `+` is a space in a query to most servers: spell it out.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.url!
    }

    /// Checks the `iss` parameter of an authorization response (RFC 9207): when present it must be the issuer, and it
    /// must be present when the provider says it sends one.
    public func checkResponseIssuer(_ iss: String?) throws(IdentityError) {
        if let iss {
            guard iss == configuration.issuer else {
                throw IdentityError(
                    .loginRejected, "the sign-in answer names the issuer \(IdentityError.quoted(iss, limit: 200)), not this provider")
            }
        } else if metadata.authorizationResponseIssuerParameterSupported {
            throw IdentityError(.loginRejected, "the sign-in answer lacks the issuer (iss) that this provider says it always sends")
        }
    }
}
