import Foundation
import JWTKit
import Logging
import Synchronization

extension OIDCProvider {
    /// Exchanges an authorization code for the person's verified identity.
    ///
    /// Posts the code with the PKCE verifier to the token endpoint (client_secret_basic), verifies the ID token
    /// (see the module's overview), and when a groups claim is configured but absent from the ID token, reads it from
    /// the userinfo endpoint, whose `sub` must be the ID token's.
    ///
    /// - Parameters:
    ///   - code: the authorization code from the callback.
    ///   - verifier: the login's PKCE verifier.
    ///   - expectedNonce: the login's nonce.
    ///   - maxAge: the `max_age` the authorization asked for, if any: `auth_time` is then required and checked.
    /// - Throws: ``IdentityError`` with one sentence; nothing is signed in.
    public func redeem(code: String, verifier: String, expectedNonce: String, maxAge: Int? = nil) async throws(IdentityError)
        -> VerifiedIdentity
    {
        let credentials =
            "\(OutboundHTTP.formEncoded(configuration.clientID)):\(OutboundHTTP.formEncoded(configuration.clientSecret.reveal()))"
        let answer = try await http.post(
            metadata.tokenEndpoint, what: "token endpoint",
            form: [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", configuration.redirectURI),
                ("code_verifier", verifier),
            ],
            headers: [("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString())])
        let object = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any]
        guard answer.status == 200 else {
            if answer.status == 400 || answer.status == 401, let error = object?["error"] as? String {
                throw IdentityError(
                    .codeRefused,
                    "the identity provider refused the authorization code (\(IdentityError.quoted(error))): it was used already, has expired, "
                        + "or the login's PKCE verifier or the client's credentials do not match")
            }
            throw IdentityError(.providerUnreachable, "the identity provider's token endpoint answered HTTP \(answer.status)")
        }
        guard let idToken = object?["id_token"] as? String else {
            throw IdentityError(.tokenRejected, "the identity provider's token answer has no ID token")
        }
        let verifierOfTokens = IDTokenVerifier(
            issuer: configuration.issuer, clientID: configuration.clientID, clockSkew: configuration.clockSkew,
            nameClaim: configuration.nameClaim, groupsClaim: configuration.groupsClaim)
        let outcome = try await verifierOfTokens.verify(
            idToken, expectedNonce: expectedNonce, maxAge: maxAge.map(TimeInterval.init), now: now(),
            key: { kid throws(IdentityError) in try await self.key(kid) })
        var identity = outcome.identity
        if configuration.groupsClaim != nil, !outcome.groupsInToken, let userinfo = metadata.userinfoEndpoint,
            let accessToken = object?["access_token"] as? String
        {
            identity.groups = try await groups(from: userinfo, accessToken: accessToken, subject: identity.subject)
        }
        return identity
    }

    private func groups(from endpoint: URL, accessToken: String, subject: String) async throws(IdentityError) -> [String] {
        let answer = try await http.get(endpoint, what: "userinfo endpoint", bearer: accessToken)
        guard answer.status == 200 else {
            throw IdentityError(.userinfoRejected, "the identity provider's userinfo endpoint answered HTTP \(answer.status)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any] else {
            throw IdentityError(.userinfoRejected, "the identity provider's userinfo answer is not a JSON object")
        }
        guard let sub = object["sub"] as? String, sub == subject else {
            throw IdentityError(
                .userinfoRejected, "the identity provider's userinfo answer is about another person (sub) than its ID token")
        }
        let read = try ClaimReader(nameClaim: configuration.nameClaim, groupsClaim: configuration.groupsClaim).read(
            object, source: "userinfo answer")
        return read.groups ?? []
    }

    /// The provider's key `kid`: from the cache, else from the JWKS fetched again (at most once per refetch interval).
    func key(_ kid: String) async throws(IdentityError) -> JWK {
        if let key = keys.withLock({ $0.keys[kid] }) { return key }
        let instant = now()
        let (task, fresh) = keys.withLock { cache -> (Task<[String: JWK], any Error>, Bool) in
            if let refetch = cache.refetch, instant.timeIntervalSince(refetch.at) < configuration.keyRefetchInterval {
                return (refetch.task, false)
            }
            let (uri, http) = (metadata.jwksURI, http)
            let task = Task { () async throws -> [String: JWK] in try await Self.fetchKeys(uri, http: http) }
            cache.refetch = (instant, task)
            return (task, true)
        }
        let fetched: [String: JWK]
        do {
            fetched = try await task.value
        } catch let error as IdentityError {
            throw error
        } catch {
            throw IdentityError(.providerUnreachable, "the identity provider's keys (JWKS) could not be fetched")
        }
        keys.withLock { $0.keys = fetched }
        if fresh { logger.info("identity provider keys fetched again for an unknown key", metadata: ["kid": "\(kid.prefix(64))"]) }
        if let key = fetched[kid] { return key }
        throw IDTokenVerifier.refused(
            "is signed with the key \(IdentityError.quoted(kid)), which the provider does not publish"
                + (fresh
                    ? ", even after fetching its keys again"
                    : "; its keys were fetched again less than \(Int(configuration.keyRefetchInterval)) s ago"))
    }

    /// The signing keys at `uri`, decoded one by one: keys for another use than signatures, and keys jwt-kit cannot
    /// read (an encryption key, a symmetric key), are left out rather than failing the whole set.
    static func fetchKeys(_ uri: URL, http: OutboundHTTP) async throws(IdentityError) -> [String: JWK] {
        let answer = try await http.get(uri, what: "keys (JWKS)")
        guard answer.status == 200 else {
            throw IdentityError(.providerUnreachable, "the identity provider's keys (JWKS) answered HTTP \(answer.status)")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: answer.body)) as? [String: Any], let list = object["keys"] as? [Any]
        else {
            throw IdentityError(.providerUnreachable, "the identity provider's keys (JWKS) are not a JSON key set")
        }
        var found: [String: JWK] = [:]
        for case let entry as [String: Any] in list {
            if let use = entry["use"] as? String, use != "sig" { continue }
            guard let kid = entry["kid"] as? String, !kid.isEmpty, found[kid] == nil,
                let data = try? JSONSerialization.data(withJSONObject: entry), let jwk = try? JSONDecoder().decode(JWK.self, from: data),
                IDTokenVerifier.allowed.values.contains(jwk.keyType), jwk.privateExponent == nil
            else { continue }
            found[kid] = jwk
        }
        return found
    }
}
