import Foundation
import JWTKit
import PlugboardIdentity
import Testing

/// A fake provider with its keys published, a provider discovered from it, and logins run through both.
struct Harness {
    let fake: FakeProvider
    let keys: SigningKeys
    let provider: OIDCProvider
    let logins = PendingLogins()

    static func configuration(issuer: String, groupsClaim: String? = "groups", keyRefetchInterval: TimeInterval = 60) -> OIDCConfiguration {
        OIDCConfiguration(
            issuer: issuer, clientID: FakeProvider.clientID, clientSecret: ClientSecret(FakeProvider.clientSecret),
            redirectURI: FakeProvider.redirectURI, groupsClaim: groupsClaim, keyRefetchInterval: keyRefetchInterval)
    }

    /// The house bounds but for the waits: a test process beside busy builds may leave the fake provider unscheduled
    /// for many seconds, which must not read as a provider that does not answer.
    static let patient = OutboundHTTP(connectTimeout: .seconds(120), requestTimeout: .seconds(240))

    /// Runs `body` against a fresh fake provider, stopped afterwards.
    static func with(keyRefetchInterval: TimeInterval = 60, _ body: (Harness) async throws -> Void) async throws {
        let fake = try await FakeProvider.start()
        do {
            let keys = try await SigningKeys()
            fake.publish(try publishedJWKS(keys.publicKeys()))
            let provider = try await OIDCProvider.discover(
                configuration(issuer: fake.issuer, keyRefetchInterval: keyRefetchInterval), http: patient)
            try await body(Harness(fake: fake, keys: keys, provider: provider))
        } catch {
            await fake.stop()
            throw error
        }
        await fake.stop()
    }

    /// Good claims for a login with `nonce`, from this provider, for this client.
    func claims(nonce: String?, sub: String = "alice-sub-1") -> TestClaims {
        let now = Date().timeIntervalSince1970
        return TestClaims(
            iss: fake.issuer, sub: sub, aud: [FakeProvider.clientID], exp: now + 600, iat: now, nbf: nil, nonce: nonce, azp: nil,
            authTime: now - 5, preferredUsername: "alice", email: "alice@example.com", groups: ["plugboard-admins", "team-a"])
    }

    /// One whole login: begin, the authorization URL checked (code flow, S256 challenge, state, nonce), the token
    /// `make(nonce)` returns issued for a code, the login finished by its browser, the code redeemed.
    func login(
        maxAge: Int? = nil, userinfo: String? = nil, verifier override: String? = nil, token make: (String) async throws -> String
    ) async throws -> VerifiedIdentity {
        let started = logins.begin(purpose: "console", returnTo: "/ui/")
        let url = provider.authorizationURL(state: started.state, nonce: started.nonce, codeChallenge: started.challenge, maxAge: maxAge)
        let query = Dictionary(
            uniqueKeysWithValues: (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map {
                ($0.name, $0.value ?? "")
            })
        #expect(query["response_type"] == "code")
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["code_challenge"] == started.challenge)
        #expect(query["state"] == started.state)
        #expect(query["client_id"] == FakeProvider.clientID)
        #expect(query["redirect_uri"] == FakeProvider.redirectURI)
        #expect(query["scope"] == "openid profile email")
        let code = fake.issueCode(
            challenge: query["code_challenge"] ?? "", idToken: try await make(query["nonce"] ?? ""), userinfo: userinfo)
        let pending = try logins.finish(state: started.state, browserBinding: started.browserBinding)
        #expect(pending.returnTo == "/ui/")
        return try await provider.redeem(code: code, verifier: override ?? pending.verifier, expectedNonce: pending.nonce, maxAge: maxAge)
    }
}

/// Expects `body` to be refused with an ``IdentityError`` of `code` whose sentence contains `fragment`.
func expectRefused(
    _ code: IdentityError.Code, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("accepted, but should be refused with “\(fragment)”", sourceLocation: sourceLocation)
    } catch let error as IdentityError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.description.contains(fragment), "“\(error)” does not say “\(fragment)”", sourceLocation: sourceLocation)
        #expect(!error.description.contains("eyJ"), "the sentence contains a token", sourceLocation: sourceLocation)
        #expect(!error.description.contains(FakeProvider.clientSecret), "the sentence contains the secret", sourceLocation: sourceLocation)
    } catch {
        Issue.record("refused with \(error), not with an IdentityError", sourceLocation: sourceLocation)
    }
}
