import Foundation
import JWTKit
import PlugboardIdentity
import PlugboardTestSupport
import Synchronization
import Testing

/// A provider that lies, forges or replays: every token and answer below is refused with its sentence.
@Suite("ID tokens from a hostile provider", .timeLimit(.hangGuard))
struct HostileProviderTests {
    @Test("a good token signed with RS256, ES256 or EdDSA is accepted, its groups and names read")
    func accepted() async throws {
        try await Harness.with { h in
            for kid in [h.keys.kids.rsa, h.keys.kids.ec, h.keys.kids.ed] {
                let identity = try await h.login { nonce in try await h.keys.sign(h.claims(nonce: nonce), kid: kid) }
                #expect(identity.issuer == h.fake.issuer)
                #expect(identity.subject == "alice-sub-1")
                #expect(identity.name == "alice")
                #expect(identity.email == "alice@example.com")
                #expect(identity.groups == ["plugboard-admins", "team-a"])
                #expect(identity.authTime != nil)
            }
            // Sent: client_secret_basic (checked by the fake), the code, the redirect URI and the PKCE verifier.
            let form = try #require(h.fake.state.withLock { $0.tokenForms.last })
            #expect(form["grant_type"] == "authorization_code")
            #expect(form["code_verifier"]?.count == 43)
        }
    }

    @Test("alg none is refused")
    func algNone() async throws {
        try await Harness.with { h in
            await expectRefused(.tokenRejected, "signed with alg none, which Plugboard refuses") {
                _ = try await h.login { nonce in
                    try unsignedToken(h.claims(nonce: nonce), header: #"{"alg":"none","kid":"\#(h.keys.kids.rsa)"}"#)
                }
            }
        }
    }

    @Test("HS256 signed with the provider's public key is refused")
    func hmacWithPublicKey() async throws {
        try await Harness.with { h in
            await expectRefused(.tokenRejected, "a shared-secret algorithm, which Plugboard refuses") {
                _ = try await h.login { nonce in try await h.keys.signHS256WithPublicKey(h.claims(nonce: nonce)) }
            }
        }
    }

    @Test("a header naming another algorithm than its key's type, or no key, is refused")
    func keyMismatch() async throws {
        try await Harness.with { h in
            await expectRefused(.tokenRejected, "is of type RSA") {
                _ = try await h.login { nonce in
                    let good = try await h.keys.sign(h.claims(nonce: nonce)).split(separator: ".")
                    return base64URL(Data(#"{"alg":"ES256","kid":"\#(h.keys.kids.rsa)"}"#.utf8)) + "." + good[1] + "." + good[2]
                }
            }
            await expectRefused(.tokenRejected, "names no signing key (kid)") {
                _ = try await h.login { nonce in
                    let good = try await h.keys.sign(h.claims(nonce: nonce)).split(separator: ".")
                    return base64URL(Data(#"{"alg":"RS256"}"#.utf8)) + "." + good[1] + "." + good[2]
                }
            }
        }
    }

    @Test("a wrong iss in the token, or in the discovery document, is refused")
    func wrongIssuer() async throws {
        try await Harness.with { h in
            await expectRefused(.tokenRejected, "not by the configured issuer") {
                _ = try await h.login { nonce in
                    var claims = h.claims(nonce: nonce)
                    claims.iss = h.fake.issuer + "/"
                    return try await h.keys.sign(claims)
                }
            }
            h.fake.state.withLock { $0.discovery = .wrongIssuer("https://evil.example") }
            await expectRefused(.discoveryRejected, "not the configured") {
                _ = try await OIDCProvider.discover(Harness.configuration(issuer: h.fake.issuer), http: Harness.patient)
            }
            h.fake.state.withLock { $0.discovery = .noS256 }
            await expectRefused(.discoveryRejected, "does not offer PKCE with S256") {
                _ = try await OIDCProvider.discover(Harness.configuration(issuer: h.fake.issuer), http: Harness.patient)
            }
        }
    }

    @Test("a token for another audience, or with an untrusted extra audience and no azp, is refused")
    func audiences() async throws {
        try await Harness.with { h in
            await expectRefused(.tokenRejected, "not for this client") {
                _ = try await h.login { nonce in
                    var claims = h.claims(nonce: nonce)
                    claims.aud = ["another-client"]
                    return try await h.keys.sign(claims)
                }
            }
            await expectRefused(.tokenRejected, "its authorized party (azp) is not this client") {
                _ = try await h.login { nonce in
                    var claims = h.claims(nonce: nonce)
                    claims.aud = [FakeProvider.clientID, "another-client"]
                    return try await h.keys.sign(claims)
                }
            }
            // Several audiences are fine when this client is the authorized party.
            let identity = try await h.login { nonce in
                var claims = h.claims(nonce: nonce)
                claims.aud = [FakeProvider.clientID, "another-client"]
                claims.azp = FakeProvider.clientID
                return try await h.keys.sign(claims)
            }
            #expect(identity.subject == "alice-sub-1")
        }
    }

    @Test("an expired token, one issued in the future, and one not yet valid are refused")
    func times() async throws {
        try await Harness.with { h in
            let now = Date().timeIntervalSince1970
            await expectRefused(.tokenRejected, "expired at") {
                _ = try await h.login { nonce in
                    var claims = h.claims(nonce: nonce)
                    (claims.iat, claims.exp) = (now - 7200, now - 3600)
                    return try await h.keys.sign(claims)
                }
            }
            await expectRefused(.tokenRejected, "was issued in the future") {
                _ = try await h.login { nonce in
                    var claims = h.claims(nonce: nonce)
                    (claims.iat, claims.exp) = (now + 3600, now + 7200)
                    return try await h.keys.sign(claims)
                }
            }
            await expectRefused(.tokenRejected, "is not valid before") {
                _ = try await h.login { nonce in
                    var claims = h.claims(nonce: nonce)
                    claims.nbf = now + 3600
                    return try await h.keys.sign(claims)
                }
            }
            // Within the 60 s of skew: accepted.
            _ = try await h.login { nonce in
                var claims = h.claims(nonce: nonce)
                (claims.iat, claims.nbf, claims.exp) = (now + 30, now + 30, now + 600)
                return try await h.keys.sign(claims)
            }
        }
    }

    @Test("an unknown kid refetches the keys once: a rotation is accepted, a still unknown kid refused, no second fetch in 60 s")
    func rotation() async throws {
        // An hour between refetches: however slowly this test runs, the second unknown key comes within it.
        try await Harness.with(keyRefetchInterval: 3600) { h in
            #expect(h.fake.state.withLock { $0.jwksFetches } == 1)
            let rotated = try await SigningKeys(prefix: "rotated")
            h.fake.publish(try publishedJWKS(try h.keys.publicKeys() + rotated.publicKeys()))
            let identity = try await h.login { nonce in try await rotated.sign(h.claims(nonce: nonce), kid: rotated.kids.ec) }
            #expect(identity.subject == "alice-sub-1")
            #expect(h.fake.state.withLock { $0.jwksFetches } == 2)

            let unknown = try await SigningKeys(prefix: "unknown")
            await expectRefused(.tokenRejected, "fetched again less than 3600 s ago") {
                _ = try await h.login { nonce in try await unknown.sign(h.claims(nonce: nonce), kid: unknown.kids.rsa) }
            }
            #expect(h.fake.state.withLock { $0.jwksFetches } == 2)
        }
        try await Harness.with { h in
            let unknown = try await SigningKeys(prefix: "unknown")
            await expectRefused(.tokenRejected, "even after fetching its keys again") {
                _ = try await h.login { nonce in try await unknown.sign(h.claims(nonce: nonce), kid: unknown.kids.rsa) }
            }
            #expect(h.fake.state.withLock { $0.jwksFetches } == 2)
        }
    }

    @Test("a missing or wrong nonce is refused; max_age needs auth_time")
    func nonce() async throws {
        try await Harness.with { h in
            await expectRefused(.tokenRejected, "carries no nonce") {
                _ = try await h.login { _ in try await h.keys.sign(h.claims(nonce: nil)) }
            }
            await expectRefused(.tokenRejected, "carries a nonce that is not this sign-in's") {
                _ = try await h.login { nonce in try await h.keys.sign(h.claims(nonce: nonce + "x")) }
            }
            await expectRefused(.tokenRejected, "does not say when the person signed in (auth_time)") {
                _ = try await h.login(maxAge: 0) { nonce in
                    var claims = h.claims(nonce: nonce)
                    claims.authTime = nil
                    return try await h.keys.sign(claims)
                }
            }
            await expectRefused(.tokenRejected, "older than the 60 s asked for") {
                _ = try await h.login(maxAge: 60) { nonce in
                    var claims = h.claims(nonce: nonce)
                    claims.authTime = Date().timeIntervalSince1970 - 3600
                    return try await h.keys.sign(claims)
                }
            }
        }
    }

    @Test("a replayed code and a wrong PKCE verifier are refused by the provider, and said so")
    func codeReplayAndVerifier() async throws {
        try await Harness.with { h in
            let started = h.logins.begin(purpose: "console", returnTo: "/ui/")
            let token = try await h.keys.sign(h.claims(nonce: started.nonce))
            let code = h.fake.issueCode(challenge: started.challenge, idToken: token)
            _ = try await h.provider.redeem(code: code, verifier: started.verifier, expectedNonce: started.nonce)
            await expectRefused(.codeRefused, "refused the authorization code ('invalid_grant')") {
                _ = try await h.provider.redeem(code: code, verifier: started.verifier, expectedNonce: started.nonce)
            }
            await expectRefused(.codeRefused, "PKCE verifier") {
                _ = try await h.login(verifier: String(repeating: "A", count: 43)) { nonce in try await h.keys.sign(h.claims(nonce: nonce))
                }
            }
            #expect(h.fake.state.withLock { $0.tokenForms.last?["code_verifier"] } == String(repeating: "A", count: 43))
        }
    }

    @Test("a second provider's token for the same subject is refused")
    func secondProvider() async throws {
        try await Harness.with { h in
            // Another provider, with keys of its own under the same kids, says it is the same person.
            let other = try await SigningKeys()
            await expectRefused(.tokenRejected, "has a signature that does not verify") {
                _ = try await h.login { nonce in
                    var claims = h.claims(nonce: nonce)
                    claims.iss = "https://other-idp.example"
                    return try await other.sign(claims)
                }
            }
        }
    }

    @Test("a userinfo answer about another subject is refused; one about the same adds its groups")
    func userinfo() async throws {
        try await Harness.with { h in
            func withoutGroups(_ nonce: String) async throws -> String {
                var claims = h.claims(nonce: nonce)
                claims.groups = nil
                return try await h.keys.sign(claims)
            }
            await expectRefused(.userinfoRejected, "about another person (sub) than its ID token") {
                _ = try await h.login(userinfo: #"{"sub":"mallory","groups":["plugboard-admins"]}"#, token: withoutGroups)
            }
            let identity = try await h.login(userinfo: #"{"sub":"alice-sub-1","groups":["team-b"]}"#, token: withoutGroups)
            #expect(identity.groups == ["team-b"])
            await expectRefused(.userinfoRejected, "Plugboard reads at most 100") {
                let many = (0..<101).map { "\"g\($0)\"" }.joined(separator: ",")
                _ = try await h.login(userinfo: #"{"sub":"alice-sub-1","groups":[\#(many)]}"#, token: withoutGroups)
            }
        }
    }
}
