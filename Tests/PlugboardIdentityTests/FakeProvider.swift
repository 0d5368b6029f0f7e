import Crypto
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A small OpenID provider served by Hummingbird on 127.0.0.1 in the test process: discovery, JWKS, a token endpoint
/// that honours each code once and checks its PKCE verifier, userinfo; and misbehaving discovery on demand.
final class FakeProvider: Sendable {
    static let clientID = "plugboard-console"
    static let clientSecret = "s3cret-of-the-client"
    static let redirectURI = "https://board.example/ui/oidc/callback"

    /// How the discovery endpoint misbehaves.
    enum Discovery: Sendable {
        case normal
        case wrongIssuer(String)
        case noS256
        case oversize
        case slow(Duration)
        case redirect
        case html
        case jwksAt(String)
    }

    struct Grant: Sendable {
        var challenge: String
        var idToken: String
        var accessToken: String
    }

    struct State: Sendable {
        var discovery = Discovery.normal
        var jwks = #"{"keys":[]}"#
        var jwksFetches = 0
        var grants: [String: Grant] = [:]
        var userinfo: [String: String] = [:]
        var tokenForms: [[String: String]] = []
    }

    let state = Mutex(State())
    let issuer: String
    private let group: ServiceGroup

    private init(issuer: String, group: ServiceGroup) {
        self.issuer = issuer
        self.group = group
    }

    /// Starts a fake provider; stop it with ``stop()``.
    static func start() async throws -> FakeProvider {
        let holder = Mutex<FakeProvider?>(nil)
        let router = Router()
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        router.get("/.well-known/openid-configuration") { _, _ in try await holder.withLock { $0! }.discovery() }
        router.get("/jwks") { _, _ in
            let provider = holder.withLock { $0! }
            let jwks = provider.state.withLock {
                $0.jwksFetches += 1
                return $0.jwks
            }
            return json(jwks)
        }
        router.post("/token") { request, _ in
            let body = try await request.body.collect(upTo: 65_536)
            return holder.withLock { $0! }.token(form: String(buffer: body), authorization: request.headers[.authorization])
        }
        router.get("/userinfo") { request, _ in
            let provider = holder.withLock { $0! }
            let bearer = request.headers[.authorization].map { String($0.dropFirst("Bearer ".count)) } ?? ""
            guard let answer = provider.state.withLock({ $0.userinfo[bearer] }) else { return Response(status: .unauthorized) }
            return json(answer)
        }
        router.get("/moved") { _, _ in json("{}") }
        let logger = Logger(label: "test.fake-provider")
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        Task { try await group.run() }
        var port = 0
        for await bound in ports {
            port = bound
            break
        }
        let provider = FakeProvider(issuer: "http://127.0.0.1:\(port)", group: group)
        holder.withLock { $0 = provider }
        return provider
    }

    func stop() async { await group.triggerGracefulShutdown() }

    /// Publishes `keys` as the provider's JWKS.
    func publish(_ jwks: String) { state.withLock { $0.jwks = jwks } }

    /// A code the token endpoint exchanges once, for `idToken`, when the verifier's S256 challenge is `challenge`.
    func issueCode(challenge: String, idToken: String, userinfo: String? = nil) -> String {
        let code = UUID().uuidString
        let access = UUID().uuidString
        state.withLock {
            $0.grants[code] = Grant(challenge: challenge, idToken: idToken, accessToken: access)
            if let userinfo { $0.userinfo[access] = userinfo }
        }
        return code
    }

    private func discovery() async throws -> Response {
        let mode = state.withLock { $0.discovery }
        var document: [String: Any] = [
            "issuer": issuer, "authorization_endpoint": "\(issuer)/authorize", "token_endpoint": "\(issuer)/token",
            "userinfo_endpoint": "\(issuer)/userinfo", "jwks_uri": "\(issuer)/jwks", "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"], "id_token_signing_alg_values_supported": ["RS256", "ES256", "EdDSA"],
        ]
        switch mode {
        case .normal: break
        case .wrongIssuer(let other): document["issuer"] = other
        case .jwksAt(let uri): document["jwks_uri"] = uri
        case .noS256: document["code_challenge_methods_supported"] = ["plain"]
        case .oversize: document["padding"] = String(repeating: "x", count: 300 << 10)
        case .slow(let duration): try await Task.sleep(for: duration)
        case .redirect: return Response(status: .found, headers: [.location: "\(issuer)/moved"])
        case .html:
            return Response(
                status: .ok, headers: [.contentType: "text/html"], body: ResponseBody(byteBuffer: ByteBuffer(string: "<html></html>")))
        }
        return json(String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self))
    }

    private func token(form text: String, authorization: String?) -> Response {
        var form: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        let expected = "Basic " + Data("\(Self.clientID):\(Self.clientSecret)".utf8).base64EncodedString()
        return state.withLock { state -> Response in
            state.tokenForms.append(form)
            guard authorization == expected else { return json(#"{"error":"invalid_client"}"#, status: .unauthorized) }
            guard form["grant_type"] == "authorization_code", form["redirect_uri"] == Self.redirectURI, let code = form["code"],
                let grant = state.grants.removeValue(forKey: code), let verifier = form["code_verifier"],
                base64URL(Data(SHA256.hash(data: Data(verifier.utf8)))) == grant.challenge
            else { return json(#"{"error":"invalid_grant"}"#, status: .badRequest) }
            return json(#"{"id_token":"\#(grant.idToken)","access_token":"\#(grant.accessToken)","token_type":"Bearer"}"#)
        }
    }
}

private func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
    Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
}
