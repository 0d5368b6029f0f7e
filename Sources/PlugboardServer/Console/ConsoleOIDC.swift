import Foundation
import HTTPTypes
import Hummingbird
import PlugboardIdentity
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// Sign-in with the organisation's identity provider (OpenID Connect): `GET /ui/oidc/start` sends the browser to the
/// provider with the authorization code flow and PKCE; `GET /ui/oidc/callback` checks the answer and opens a session.
///
/// The login's `state`, `nonce` and PKCE verifier are kept in memory (``PendingLogins``), used once, for 10 minutes,
/// and only by the browser that began the login (a cookie of the `/ui/oidc` path holds its binding). The code is
/// exchanged by the server, the ID token checked in full (``OIDCProvider``), and the account `(issuer, subject)` mapped
/// to a principal of the board (``Board/signIn(issuer:subject:name:groups:via:)``): never by its name or e-mail. A
/// refused sign-in says why in one sentence, counts against the address as a failed token sign-in does, and is
/// recorded as a refused `sso.sign-in`.
struct ConsoleOIDC: Sendable {
    let provider: OIDCProvider
    let pending: PendingLogins
    /// The provider's name on the sign-in page (`Sign in with Okta`).
    let name: String
    /// How long after signing in at the provider a person may approve, apply or open a widening change before they
    /// sign in there again (step-up); stops never wait for it.
    let stepUpAge: Duration
    /// Sign-ins begun, counted per address (20 a minute) and in all (600 a minute): a flood of beginnings cannot push
    /// people's logins out of ``pending``, which keeps at most 1,000.
    let starts = FailedAuthentications(limit: 20, globalLimit: 600, window: .seconds(60))

    /// The cookie that binds a login to the browser that began it.
    static let bindingCookie = "plugboard_oidc"
    /// Who a refused sign-in is recorded as: the board's own sign-in, since no person is known.
    static let signInPrincipal = "plugboard/sign-in"

    /// `console (oidc ISSUER) from ADDRESS, auth_time TIME`: how a change of an identity provider's session arrived.
    static func via(issuer: String, address: String, authTime: Date?) -> String {
        let text = "console (oidc \(issuer)) from \(address)" + (authTime.map { ", auth_time \(Timestamp.format($0))" } ?? "")
        return String(text.prefix(512))
    }

    /// Whether the operation waits for a recent sign-in at the provider: it can start or widen what runs, or it
    /// approves or applies a change request.
    static func needsStepUp(_ type: any ParsedOperation.Type) -> Bool {
        type.declaration.widens != .never || type.declaration.action == .changeApprove || type.declaration.action == .changeApply
    }

    /// Whether a person who signed in at the provider at `authTime` did so within ``stepUpAge`` (no time: not recent).
    func isRecent(_ authTime: Date?) -> Bool {
        guard let authTime else { return false }
        return Date().timeIntervalSince(authTime) < Double(stepUpAge.components.seconds)
    }

    /// ``stepUpAge`` in words (`1 hour`, `90 seconds`).
    var stepUpWords: String {
        let seconds = Int(stepUpAge.components.seconds)
        if seconds % 3600 == 0 { return "\(seconds / 3600) hour\(seconds == 3600 ? "" : "s")" }
        if seconds % 60 == 0 { return "\(seconds / 60) minute\(seconds == 60 ? "" : "s")" }
        return "\(seconds) second\(seconds == 1 ? "" : "s")"
    }

    /// `GET /ui/oidc/start`: a new login, and the browser sent to the provider. `purpose` and `returnTo` are kept with
    /// the login: a console sign-in returns to a page, a CLI login (``LoginRoutes``) to its login's identifier; for a
    /// step-up, the provider is asked to authenticate the person again (`max_age=0`, `prompt=login`).
    func start(secure: Bool, address: String, purpose: String = "console", stepUp: Bool = false, returnTo: String = "/ui/") -> Response {
        if let wait = starts.fail(address) {
            var response = ConsoleRoutes.refusal(
                .tooManyRequests, heading: "Too many sign-ins",
                "too many sign-ins were begun from \(address) or from all clients; try again in \(wait) seconds", back: "/ui/sign-in")
            response.headers[.retryAfter] = String(wait)
            return response
        }
        let started = pending.begin(purpose: stepUp ? "step-up" : purpose, returnTo: returnTo)
        let url = provider.authorizationURL(
            state: started.state, nonce: started.nonce, codeChallenge: started.challenge, maxAge: stepUp ? 0 : nil,
            prompt: stepUp ? "login" : nil)
        var response = Response(status: .seeOther, headers: [.location: url.absoluteString, .cacheControl: "no-store"])
        ConsoleRoutes.secureHeaders(&response.headers)
        // Lax: the provider's redirect back is a top-level navigation from another site, which a Strict cookie misses.
        response.headers[.setCookie] =
            "\(Self.bindingCookie)=\(started.browserBinding); Path=/ui/oidc; Max-Age=600; HttpOnly; SameSite=Lax"
            + (secure ? "; Secure" : "")
        return response
    }

    /// What the callback found: the session to open, or why not.
    enum Outcome: Sendable {
        case signedIn(SignedInIdentity, issuer: String, subject: String, authTime: Date?, returnTo: String)
        /// Signed in for the CLI login `login` (``LoginRoutes``): no session, the browser goes back to the CLI.
        case cli(SignedInIdentity, issuer: String, authTime: Date?, login: String)
        case refused(String)
    }

    /// `GET /ui/oidc/callback`: the provider's answer checked, the code redeemed, the account mapped to its principal.
    func callback(_ request: Request, address: String, board: Board, lane: WorkerThreads) async -> Outcome {
        let query = ConsoleRoutes.query(request)
        if let error = query["error"] {
            let description = query["error_description"].map { ": " + Validate.printable(String($0.prefix(200))) } ?? ""
            return .refused("the identity provider refused the sign-in (\(Validate.printable(String(error.prefix(64))))\(description))")
        }
        guard let state = query["state"], state.utf8.count <= 256, let code = query["code"], !code.isEmpty, code.utf8.count <= 2048
        else {
            return .refused("the identity provider's answer has no code or state; start the sign-in again")
        }
        do throws(IdentityError) {
            let login = try pending.finish(state: state, browserBinding: ConsoleRoutes.cookie(request, named: Self.bindingCookie) ?? "")
            try provider.checkResponseIssuer(query["iss"])
            let identity = try await provider.redeem(
                code: code, verifier: login.verifier, expectedNonce: login.nonce,
                maxAge: login.purpose == "step-up" ? Int(stepUpAge.components.seconds) : nil)
            let name = identity.name ?? identity.email ?? "person"
            let via = Self.via(issuer: identity.issuer, address: address, authTime: identity.authTime)
            do {
                let signedIn = try await lane.run {
                    try board.signIn(issuer: identity.issuer, subject: identity.subject, name: name, groups: identity.groups, via: via)
                }
                if login.purpose == LoginRoutes.purpose {
                    return .cli(signedIn, issuer: identity.issuer, authTime: identity.authTime, login: login.returnTo)
                }
                return .signedIn(
                    signedIn, issuer: identity.issuer, subject: identity.subject, authTime: identity.authTime, returnTo: login.returnTo)
            } catch let error as BoardError {
                return .refused(error.message)
            } catch {
                return .refused("the sign-in could not be recorded on the board; try again")
            }
        } catch {
            return .refused(error.description)
        }
    }

    /// Records a refused sign-in as a refused `sso.sign-in` of the board's own sign-in principal.
    static func recordRefusal(_ sentence: String, issuer: String, address: String, board: Board) {
        guard let actor = try? Principal(osUser: signInPrincipal, via: via(issuer: issuer, address: address, authTime: nil)) else { return }
        board.recordRefusal(
            AuditEntry(action: .ssoSignIn, targetType: "identity", targetID: issuer), by: actor,
            because: BoardError(.notAllowed, String(sentence.prefix(900))))
    }
}
