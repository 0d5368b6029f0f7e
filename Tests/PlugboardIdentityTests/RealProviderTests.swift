import Foundation
import PlugboardIdentity
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// oidc-provider-mock (PyPI), a real OpenID provider: the path of its command, or nil when it is not installed.
private let mockProvider: String? = {
    let path = ProcessInfo.processInfo.environment["PLUGBOARD_OIDC_PROVIDER_MOCK"] ?? "/tmp/oidc-venv/bin/oidc-provider-mock"
    return FileManager.default.isExecutableFile(atPath: path) ? path : nil
}()

@Suite("Against a real provider (oidc-provider-mock)", .timeLimit(.hangGuard))
struct RealProviderTests {
    @Test(
        "a whole code flow with PKCE: discovery, authorization, code, ID token and groups",
        .enabled(
            if: mockProvider != nil,
            "oidc-provider-mock is not installed (python3.12 -m venv /tmp/oidc-venv && /tmp/oidc-venv/bin/pip install oidc-provider-mock==0.4.8)"
        ))
    func codeFlow() async throws {
        let port = try freeLoopbackPort()
        let claims =
            #"{"sub":"alice-sub-1","preferred_username":"alice","email":"alice@example.com","groups":["plugboard-admins","team-a"]}"#
        let child = try Spawned(
            mockProvider!, ["--port", "\(port)", "--host", "127.0.0.1", "--require-nonce", "true", "--user-claims", claims],
            output: .null, error: .null)
        do {
            try await signIn(port: port, child: child)
        } catch {
            child.signal(SIGTERM)
            _ = try? await child.waitForExit(timeout: .seconds(10))
            throw error
        }
        child.signal(SIGTERM)
        #expect(try await child.waitForExit(timeout: .seconds(30)), "oidc-provider-mock did not stop on SIGTERM")
    }

    private func signIn(port: Int, child: Spawned) async throws {
        let issuer = "http://127.0.0.1:\(port)"
        let configuration = OIDCConfiguration(
            issuer: issuer, clientID: "plugboard-console", clientSecret: ClientSecret("any-secret"),
            redirectURI: "http://127.0.0.1:4242/ui/oidc/callback", groupsClaim: "groups")
        var provider: OIDCProvider?
        let deadline = ContinuousClock.now + .seconds(240)
        while provider == nil, ContinuousClock.now < deadline, child.isRunning {
            provider = try? await OIDCProvider.discover(configuration, http: Harness.patient)
            if provider == nil { try await Task.sleep(for: .milliseconds(200)) }
        }
        let discovered = try #require(provider, "oidc-provider-mock did not answer its discovery document within 240 s")

        let logins = PendingLogins()
        let started = logins.begin(purpose: "console", returnTo: "/ui/")
        let url = discovered.authorizationURL(state: started.state, nonce: started.nonce, codeChallenge: started.challenge)
        // The mock's sign-in form, answered as a person would: choose the subject.
        let answer = try await Curl.run(["-X", "POST", "--data", "sub=alice-sub-1", url.absoluteString])
        #expect(answer.status == 302, "\(answer.headers)")
        let location = try #require(
            answer.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }.map { $0.dropFirst("location:".count) }
        )
        let callback = try #require(URLComponents(string: location.trimmingCharacters(in: .whitespaces)))
        let query = Dictionary(uniqueKeysWithValues: (callback.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        let code = try #require(query["code"])
        try discovered.checkResponseIssuer(query["iss"])
        let pending = try logins.finish(state: try #require(query["state"]), browserBinding: started.browserBinding)
        let identity = try await discovered.redeem(code: code, verifier: pending.verifier, expectedNonce: pending.nonce)
        #expect(identity.issuer == issuer)
        #expect(identity.subject == "alice-sub-1")
        #expect(identity.name == "alice")
        #expect(identity.email == "alice@example.com")
        #expect(identity.groups == ["plugboard-admins", "team-a"])
        #expect(identity.authTime != nil)

        await expectRefused(.codeRefused, "refused the authorization code") {
            _ = try await discovered.redeem(code: code, verifier: pending.verifier, expectedNonce: pending.nonce)
        }
    }
}
