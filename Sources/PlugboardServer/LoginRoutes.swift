import Foundation
import HTTPTypes
import Hummingbird
import PlugboardIdentity
import PlugboardModel
import PlugboardStore

/// `plugboard login URL` with the identity provider the console signs in with, brokered by the server: the provider
/// knows one client (the console's), and every check of its tokens stays here. Served only when `serve` has
/// `--oidc-issuer`; without it these routes answer 404 and `plugboard login` takes a pasted access token.
///
/// - Loopback (RFC 8252 style): `POST /api/login/begin {redirect, code_challenge}` with a redirect to `127.0.0.1` or
///   `[::1]` and the CLI's S256 challenge answers `{url}`, the console's `GET /ui/oidc/cli/{id}`, which starts the
///   provider's sign-in for that login. After the provider's callback the browser is sent to the redirect with a
///   one-time `code`; `POST /api/login/finish {code, code_verifier}` answers the person's access token.
/// - Device (RFC 8628 style): `POST /api/login/device` answers a device code and a user code; the person confirms the
///   user code on the console's `/ui/device` (``ConsoleDevice``); `POST /api/login/device/token {device_code}` answers
///   `authorization_pending`, `slow_down`, `expired_token`, `access_denied`, or the access token.
///
/// The token is made by the board as an audited change of the person (``mint(_:lifetime:)``): acting as them,
/// created by them, named `login-YYYYMMDD-xxxx`, expiring after 12 hours unless the CLI asked for another age (at most
/// a week), and read-only when their sign-in only reads.
struct LoginRoutes: Sendable {
    let admin: OperationsRoutes
    let console: ConsoleRoutes
    let oidc: ConsoleOIDC

    var logins: CLILogins { admin.cliLogins }

    /// The largest request body of these routes.
    static let bodyLimit = 4 << 10

    func add(to router: Router<ServeContext>) {
        // Logins begun count against the address as the console's sign-ins do: a flood cannot push people's out.
        router.post("/api/login/begin") { request, context in
            if let refusal = tooMany(context) { return refusal }
            return try await begin(request)
        }
        router.post("/api/login/finish") { request, _ in try await finish(request) }
        router.post("/api/login/device") { request, context in
            if let refusal = tooMany(context) { return refusal }
            return try await device(request, context)
        }
        router.post("/api/login/device/token") { request, _ in try await deviceToken(request) }
        router.get("/ui/oidc/cli/{id}") { _, context in
            guard let id = context.parameters.get("id"), id.utf8.count == 43, logins.isPending(id) else {
                return ConsoleRoutes.refusal(
                    .notFound, heading: "No such login", "this login is unknown, finished or expired; run plugboard login again",
                    back: "/ui/sign-in")
            }
            return oidc.start(
                secure: console.secure, address: context.remoteAddress?.ipAddress ?? "unknown", purpose: Self.purpose, returnTo: id)
        }
        ConsoleDevice(console: console, logins: logins).add(to: router)
    }

    /// A `429` when too many logins were begun from the request's address, or from all.
    private func tooMany(_ context: ServeContext) -> Response? {
        let address = context.remoteAddress?.ipAddress ?? "unknown"
        guard let wait = oidc.starts.fail(address) else { return nil }
        var response = Reply.json(
            .tooManyRequests,
            object: [
                "error": "slow_down",
                "error_description": "too many logins were begun from \(address) or from all clients; try again in \(wait) seconds",
            ])
        response.headers[.retryAfter] = String(wait)
        return response
    }

    /// The purpose of a provider's sign-in begun for a CLI login (``PlugboardIdentity/PendingLogins``).
    static let purpose = "cli"

    struct Begin: Decodable {
        var redirect: String
        var codeChallenge: String
        var expiresIn: Int?
        enum CodingKeys: String, CodingKey {
            case redirect
            case codeChallenge = "code_challenge"
            case expiresIn = "expires_in"
        }
    }

    struct Finish: Decodable {
        var code: String
        var codeVerifier: String
        enum CodingKeys: String, CodingKey {
            case code
            case codeVerifier = "code_verifier"
        }
    }

    struct DeviceBegin: Decodable {
        var expiresIn: Int?
        enum CodingKeys: String, CodingKey { case expiresIn = "expires_in" }
    }

    struct DeviceToken: Decodable {
        var deviceCode: String
        enum CodingKeys: String, CodingKey { case deviceCode = "device_code" }
    }

    /// `POST /api/login/begin`.
    private func begin(_ request: Request) async throws -> Response {
        let body = try await Body.decode(Begin.self, request, limit: Self.bodyLimit, what: "a login").get()
        guard Self.isLoopbackRedirect(body.redirect) else {
            throw Refusal(
                .badRequest,
                body: ["error": "invalid_request", "message": "the redirect must be http://127.0.0.1:PORT/… or http://[::1]:PORT/…"])
        }
        guard body.codeChallenge.utf8.count == 43,
            body.codeChallenge.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else {
            throw Refusal(
                .badRequest,
                body: ["error": "invalid_request", "message": "the code_challenge must be an S256 challenge (43 base64url characters)"])
        }
        let lifetime = try Self.tokenLifetime(body.expiresIn)
        guard let id = logins.beginLoopback(redirect: body.redirect, challenge: body.codeChallenge, tokenLifetime: lifetime),
            let origin = Self.origin(of: oidc.provider.configuration.redirectURI)
        else { throw Self.full() }
        return Self.json(["url": "\(origin)/ui/oidc/cli/\(id)", "expires_in": Int(CLILogins.lifetime)])
    }

    /// `POST /api/login/finish`.
    private func finish(_ request: Request) async throws -> Response {
        let body = try await Body.decode(Finish.self, request, limit: Self.bodyLimit, what: "a login's finish").get()
        switch logins.finish(code: body.code, verifier: body.codeVerifier) {
        case .failure(let error):
            throw Refusal(.badRequest, body: ["error": "invalid_grant", "message": error.message])
        case .success(let (grant, lifetime)):
            return try await mint(grant, lifetime: lifetime)
        }
    }

    /// `POST /api/login/device`.
    private func device(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await Body.decode(DeviceBegin.self, request, limit: Self.bodyLimit, what: "a device login", allowEmpty: true).get()
        let lifetime = try Self.tokenLifetime(body.expiresIn)
        let address = context.remoteAddress?.ipAddress ?? "unknown"
        guard let codes = logins.beginDevice(address: address, tokenLifetime: lifetime),
            let origin = Self.origin(of: oidc.provider.configuration.redirectURI)
        else { throw Self.full() }
        return Self.json([
            "device_code": codes.deviceCode, "user_code": CLILogins.displayed(codes.userCode), "verification_uri": "\(origin)/ui/device",
            "interval": CLILogins.pollInterval, "expires_in": Int(CLILogins.lifetime),
        ])
    }

    /// `POST /api/login/device/token`.
    private func deviceToken(_ request: Request) async throws -> Response {
        let body = try await Body.decode(DeviceToken.self, request, limit: Self.bodyLimit, what: "a device token request").get()
        switch logins.poll(deviceCode: body.deviceCode) {
        case .waiting(let error, let sentence):
            throw Refusal(.badRequest, body: ["error": error, "message": sentence])
        case .granted(let grant, let lifetime):
            return try await mint(grant, lifetime: lifetime)
        }
    }

    /// Makes the person's access token, as an audited change of theirs, and answers it (never cached).
    func mint(_ grant: Grant, lifetime: TimeInterval) async throws -> Response {
        let board = admin.board
        let expires = Date().addingTimeInterval(lifetime)
        let created: CreatedAccessToken
        do {
            created = try await admin.changes.run { () throws -> CreatedAccessToken in
                var attempt = 0
                while true {
                    do {
                        return try board.createAccessToken(
                            principal: grant.actor.osUser, name: Self.tokenName(), readOnly: grant.readOnly, expiresAt: expires,
                            by: grant.actor)
                    } catch let error as BoardError where error.code == .conflict && attempt < 3 {
                        // Two logins of the person drew the same name today: draw again.
                        attempt += 1
                    }
                }
            }
        } catch let error as BoardError {
            throw Refusal(error)
        }
        return Self.json([
            "access_token": created.secret, "token_name": created.token.name, "principal": created.token.principal,
            "read_only": created.token.readOnly, "expires_at": created.token.expiresAt ?? NSNull(),
        ])
    }

    typealias Grant = CLILogins.Grant

    /// The provider signed the person in for the CLI login `id` (a `cli` outcome of ``ConsoleOIDC``): the
    /// browser is sent to the CLI's loopback address with a one-time code, or told why not.
    static func browserSignedIn(
        _ logins: CLILogins, login id: String, principal: String, readOnly: Bool, issuer: String, authTime: Date?, address: String
    ) -> Response {
        let via = "plugboard login, signed in at " + ConsoleOIDC.via(issuer: issuer, address: address, authTime: authTime)
        guard let actor = try? Principal(osUser: principal, via: String(via.prefix(512))),
            let next = logins.signedIn(id, grant: Grant(actor: actor, readOnly: readOnly))
        else {
            return ConsoleRoutes.refusal(
                .notFound, heading: "No such login", "this login is unknown, finished or expired; run plugboard login again",
                back: "/ui/sign-in")
        }
        var response = Response(status: .seeOther, headers: [.location: next, .cacheControl: "no-store"])
        ConsoleRoutes.secureHeaders(&response.headers)
        return response
    }

    /// `login-YYYYMMDD-xxxx`: the day (UTC) and four random hexadecimal digits.
    static func tokenName(at date: Date = Date()) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let day = calendar.dateComponents([.year, .month, .day], from: date)
        let suffix = String(format: "%04x", UInt16.random(in: .min ... .max))
        return String(format: "login-%04d%02d%02d-", day.year ?? 0, day.month ?? 0, day.day ?? 0) + suffix
    }

    /// The token's lifetime: `seconds` when given (5 minutes to a week), else 12 hours.
    static func tokenLifetime(_ seconds: Int?) throws -> TimeInterval {
        guard let seconds else { return CLILogins.defaultTokenLifetime }
        guard seconds >= 300, Double(seconds) <= CLILogins.longestTokenLifetime else {
            throw Refusal(
                .badRequest,
                body: ["error": "invalid_request", "message": "a login's token may last from 5 minutes to 7 days (expires_in \(seconds))"])
        }
        return TimeInterval(seconds)
    }

    /// Whether `text` is a loopback redirect: `http`, host `127.0.0.1` or `[::1]`, a port, no user or fragment.
    static func isLoopbackRedirect(_ text: String) -> Bool {
        guard text.utf8.count <= 512, !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7f }),
            let url = URLComponents(string: text), url.scheme == "http", url.user == nil, url.password == nil, url.fragment == nil,
            let port = url.port, (1...65535).contains(port), let host = url.host
        else { return false }
        return host == "127.0.0.1" || host == "::1" || host == "[::1]"
    }

    /// `scheme://host[:port]` of a URL.
    static func origin(of text: String) -> String? {
        guard let url = URLComponents(string: text), let scheme = url.scheme, let host = url.host else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed)" + (url.port.map { ":\($0)" } ?? "")
    }

    static func full() -> Refusal {
        var refusal = Refusal(
            .serviceUnavailable,
            body: ["error": "temporarily_unavailable", "message": "too many logins are pending; try again in a minute"])
        refusal.headers[.retryAfter] = "60"
        return refusal
    }

    static func json(_ object: [String: Any]) -> Response {
        var response = Reply.json(.ok, object: object)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
