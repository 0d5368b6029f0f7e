public import Foundation

/// What a provider's discovery document (`{issuer}/.well-known/openid-configuration`) says, once checked.
public struct ProviderMetadata: Sendable, Equatable {
    /// The provider's `issuer`: equal to the configured issuer, exactly.
    public var issuer: String
    /// Where the browser is sent to sign in.
    public var authorizationEndpoint: URL
    /// Where the authorization code is exchanged for tokens.
    public var tokenEndpoint: URL
    /// Where the provider says more about the person, when it has such an endpoint.
    public var userinfoEndpoint: URL?
    /// Where the provider publishes its signing keys (JWKS).
    public var jwksURI: URL
    /// Where the browser is sent to sign out at the provider, when it has such an endpoint.
    public var endSessionEndpoint: URL?
    /// Whether the provider adds its issuer to the authorization response (`iss`, RFC 9207).
    public var authorizationResponseIssuerParameterSupported: Bool
}

extension ProviderMetadata {
    /// The document in `data`, checked against the configured `issuer`.
    init(document data: Data, issuer: String) throws(IdentityError) {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw Self.rejected("is not a JSON object")
        }
        guard let said = object["issuer"] as? String else { throw Self.rejected("names no issuer") }
        guard said == issuer else {
            throw Self.rejected(
                "names the issuer \(IdentityError.quoted(said, limit: 200)), not the configured \(IdentityError.quoted(issuer, limit: 200)) (they must be equal exactly)"
            )
        }
        func endpoint(_ name: String, required: Bool) throws(IdentityError) -> URL? {
            guard let text = object[name] as? String else {
                if required { throw Self.rejected("has no \(name)") }
                return nil
            }
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
                scheme == "https" || (scheme == "http" && OutboundHTTP.isLoopbackHost(host))
            else {
                throw Self.rejected("gives a \(name) that is not https (plain http is allowed only on a loopback address)")
            }
            return url
        }
        func list(_ name: String) -> [String]? { object[name] as? [String] }
        if let types = list("response_types_supported"), !types.contains("code") {
            throw Self.rejected("does not offer the authorization code flow (response type code), the only one Plugboard uses")
        }
        if let methods = list("code_challenge_methods_supported"), !methods.contains("S256") {
            throw Self.rejected("does not offer PKCE with S256, which Plugboard requires")
        }
        if let methods = list("token_endpoint_auth_methods_supported"), !methods.contains("client_secret_basic") {
            throw Self.rejected("does not accept client_secret_basic at its token endpoint, the client authentication Plugboard uses")
        }
        if let algorithms = list("id_token_signing_alg_values_supported"),
            !algorithms.contains(where: { IDTokenVerifier.allowed[$0] != nil })
        {
            throw Self.rejected("signs ID tokens with none of the algorithms Plugboard accepts (RS256, PS256, ES256, ES384, EdDSA)")
        }
        self.issuer = said
        authorizationEndpoint = try endpoint("authorization_endpoint", required: true)!
        tokenEndpoint = try endpoint("token_endpoint", required: true)!
        jwksURI = try endpoint("jwks_uri", required: true)!
        userinfoEndpoint = try endpoint("userinfo_endpoint", required: false)
        endSessionEndpoint = try endpoint("end_session_endpoint", required: false)
        authorizationResponseIssuerParameterSupported = object["authorization_response_iss_parameter_supported"] as? Bool ?? false
    }

    static func rejected(_ what: String) -> IdentityError {
        IdentityError(.discoveryRejected, "the identity provider's discovery document " + what)
    }
}
