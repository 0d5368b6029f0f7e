import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlugboardModel
import PlugboardStore
import Synchronization

/// The authentication of the console's pages: the session cookie's session, whose access token is looked up on the
/// board again (a revoked or expired token ends the session). The person is put in the context as the operations API's
/// caller, acting as the token's principal `via console from ADDRESS`. Without a session a page redirects to the
/// sign-in page and anything else is refused with 403.
struct ConsoleAuthentication: RouterMiddleware {
    typealias Context = ServeContext
    let routes: ConsoleRoutes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let sessions = routes.sessions
        guard let id = ConsoleRoutes.cookie(request), let session = sessions.session(id) else { return signIn(request) }
        let address = context.remoteAddress?.ipAddress ?? "unknown"
        let caller: OperationsRoutes.Caller
        switch session.credential {
        case .accessToken(let secret, _):
            let token = try await OperationsRoutes.lookUp(secret, on: routes.admin.board, in: routes.admin.reads)
            guard let token, token.state == .active, !token.stopsOnly else {
                sessions.close(id)
                return signIn(request)
            }
            caller = OperationsRoutes.Caller(
                token: token,
                principal: try Principal(osUser: token.principal, via: "console from \(address)", accessToken: token.name),
                address: address)
        case .identity(let issuer, let subject, let authTime):
            // The account must still sign in as the session's principal: an unlinked one ends its sessions.
            let (board, lane) = (routes.admin.board, routes.admin.reads)
            let linked = try await lane.run { try board.identity(issuer: issuer, subject: subject) }
            guard let linked, linked.principal == session.principal else {
                sessions.close(id)
                return signIn(request)
            }
            caller = OperationsRoutes.Caller(
                principal: try Principal(
                    osUser: session.principal, via: ConsoleOIDC.via(issuer: issuer, address: address, authTime: authTime)),
                readOnly: session.readOnly, credential: "the sign-in of \(session.principal) with \(issuer)", token: nil, address: address)
        }
        var context = context
        context.caller = caller
        context.consoleSession = ConsoleSessionReference(id: id, session: session)
        return try await next(request, context)
    }

    private func signIn(_ request: Request) -> Response {
        guard request.method == .get else {
            return ConsoleRoutes.refusal(
                .forbidden, heading: "Signed out", "your console session ended; sign in again", back: "/ui/sign-in")
        }
        return ConsoleRoutes.redirect("/ui/sign-in")
    }
}

/// A request's console session: the cookie's value and the session it names.
struct ConsoleSessionReference: Sendable {
    let id: String
    let session: ConsoleSessions.Session
}

extension ServeContext {
    /// The console session; a page behind ``ConsoleAuthentication`` always has one.
    func requireConsoleSession() throws -> ConsoleSessionReference {
        guard let consoleSession else { throw Refusal(.internalServerError, "the page has no console session") }
        return consoleSession
    }
}

/// When the board or the telemetry beside it last changed, as a stamp that every console stream compares: read at
/// most once per ``interval`` however many people watch.
final class ConsolePulse: Sendable {
    static let interval = Duration.milliseconds(100)
    private let board: Board
    private let lane: WorkerThreads
    private let last = Mutex<(at: ContinuousClock.Instant, stamp: String)?>(nil)

    init(board: Board, lane: WorkerThreads) {
        self.board = board
        self.lane = lane
    }

    func stamp() async -> String {
        let now = ContinuousClock.now
        if let last = last.withLock({ $0 }), now - last.at < Self.interval { return last.stamp }
        let board = self.board
        let stamp = (try? await lane.run { "\(try board.version()).\(try board.telemetryVersion())" }) ?? "unreadable"
        last.withLock { $0 = (now, stamp) }
        return stamp
    }
}

extension ConsoleRoutes {
    /// The value of the cookie `name` (by default the session's), if the request has one.
    static func cookie(_ request: Request, named name: String = ConsoleSessions.cookie) -> String? {
        for header in request.headers[values: .cookie] {
            for part in header.split(separator: ";") {
                let pair = part.trimmingCharacters(in: .whitespaces)
                if pair.hasPrefix(name + "=") { return String(pair.dropFirst(name.count + 1)) }
            }
        }
        return nil
    }

    /// A page: the layout around `body`.
    static func page(
        title: String, body: String, status: HTTPResponse.Status = .ok, navigation: String? = nil, session: ConsoleSessions.Session? = nil,
        readOnly: Bool = false, principal: String = "", flash: ConsoleSessions.Flash? = nil, live: Bool = false
    ) -> Response {
        let layout = LayoutView(
            title: title,
            session: session.map { session in
                LayoutSession(
                    nav: ConsolePages.sections.map { NavItem(href: $0.href, label: $0.label, current: $0.label == navigation) },
                    principal: principal, readOnly: readOnly, csrf: session.csrf)
            }, flash: flash.map { FlashView(text: $0.text, failed: $0.failed) }, body: body, live: live)
        var response = Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: ConsoleTemplates.render(layout))))
        secureHeaders(&response.headers)
        return response
    }

    /// A page that says why a request was refused, with the status it deserves.
    /// With `session`, the page keeps the console's header (a page of the console refused a read).
    static func refusal(
        _ status: HTTPResponse.Status, heading: String, _ sentence: String, back: String = "/ui/", navigation: String? = nil,
        session: ConsoleSessions.Session? = nil
    ) -> Response {
        page(
            title: heading, body: ConsoleTemplates.render(RefusalView(heading: heading, sentence: sentence, back: back)),
            status: status, navigation: navigation, session: session, readOnly: session?.readOnly ?? false,
            principal: session?.principal ?? "")
    }

    /// Whether `form` carries the CSRF token `csrf`, compared in constant time.
    static func carries(_ form: [String: String], csrf: String) -> Bool {
        guard let presented = form["csrf"] else { return false }
        return APITokenSecret.constantTimeEquals(Array(presented.utf8), Array(csrf.utf8))
    }

    /// A form whose CSRF token is missing or not the session's.
    static func csrfRefusal() -> Response {
        refusal(
            .forbidden, heading: "Not allowed",
            "this form was not sent by the console's page (its CSRF token is missing or out of date); reload the page and try again")
    }

    /// `303 See Other` to `location`.
    static func redirect(_ location: String) -> Response {
        var response = Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
        secureHeaders(&response.headers)
        return response
    }

    /// A stylesheet or script, cached by browsers for a day.
    static func asset(_ text: String, type: String) -> Response {
        var response = Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "public, max-age=86400"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        secureHeaders(&response.headers)
        return response
    }

    /// What every console answer carries: no script, style, frame or form target but the console's own.
    static func secureHeaders(_ headers: inout HTTPFields) {
        headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        headers[.xContentTypeOptions] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
    }

    /// A page's return address from a form: a path of the console, nothing else (no other site, no `//host`).
    static func safeReturn(_ value: String?) -> String {
        guard let value, value.hasPrefix("/ui/"), !value.hasPrefix("//"), !value.contains("\\"), value.utf8.count <= 2048,
            !value.unicodeScalars.contains(where: { $0.value < 0x20 })
        else { return "/ui/" }
        return value
    }

    /// The request's query, decoded (the last value of a repeated name wins).
    static func query(_ request: Request) -> [String: String] {
        var values: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { values[String(name)] = String(value) }
        return values
    }

    /// The request's form fields; a body over `limit` or not a form is refused.
    static func form(_ request: Request, limit: Int = maxFormBytes) async throws -> [String: String] {
        switch await Body.collect(request, limit: limit) {
        case .success(let buffer):
            let text = String(buffer: buffer)
            guard let fields = ConsoleForms.fields(text) else { throw BoardError(.invalidInput, "the form could not be read") }
            return fields
        case .failure(.tooLarge(let limit)): throw BoardError(.invalidInput, "the form is larger than \(limit) bytes")
        case .failure(.unreadable): throw BoardError(.invalidInput, "the form could not be read; send it again")
        }
    }
}
