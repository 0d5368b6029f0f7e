import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PlugboardIdentity
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// The web console under `/ui/`, served with the operations API (`plugboard serve --admin`): one more face of the same
/// operations, with the same principals, rights, lanes and audit rows.
///
/// A person signs in with an access token, exchanged for a session cookie (``ConsoleSessions``); every page looks that
/// token up on the board again, so a revoked token ends the session. Pages are rendered on the server from the
/// operations' answers (``ConsoleTemplates``); forms are made from the operations' declarations (``ConsoleForms``) and
/// post to `/ui/do/{operation}`, which parses the form as the API parses its JSON body and performs the operation as
/// the person, in the operation's lane, recorded with `via console from ADDRESS`. Every form carries the session's
/// CSRF token; the Content-Security-Policy allows no inline script or style and nothing from another origin.
struct ConsoleRoutes: Sendable {
    let admin: OperationsRoutes
    let sessions: ConsoleSessions
    let pulse: ConsolePulse
    /// Whether the console is served over TLS (its cookie is then `Secure`).
    let secure: Bool
    /// Sign-in with the identity provider, when `serve` has one (`--oidc-issuer`).
    let oidc: ConsoleOIDC?

    init(admin: OperationsRoutes) {
        self.admin = admin
        sessions = admin.consoleSessions
        secure = admin.configuration.tlsCertificatePath != nil
        pulse = ConsolePulse(board: admin.board, lane: admin.reads)
        oidc = admin.identityProvider.map {
            ConsoleOIDC(provider: $0.provider, pending: admin.pendingLogins, name: $0.name, stepUpAge: $0.stepUpAge)
        }
    }

    /// The largest form the console reads.
    static let maxFormBytes = 64 << 10

    func add(to router: Router<ServeContext>) {
        router.get("/ui/static/console.css") { _, _ in Self.asset(ConsoleAssets.css, type: "text/css; charset=utf-8") }
        router.get("/ui/static/console.js") { _, _ in Self.asset(ConsoleAssets.js, type: "text/javascript; charset=utf-8") }
        router.get("/ui/sign-in") { request, _ in
            if let id = Self.cookie(request), sessions.session(id) != nil { return Self.redirect("/ui/") }
            return signInPage(preSession: ConsoleSessions.random())
        }
        router.post("/ui/sign-in") { request, context in try await signIn(request, context) }
        if let oidc {
            router.get("/ui/oidc/start") { request, context in
                let query = Self.query(request)
                return oidc.start(
                    secure: secure, address: context.remoteAddress?.ipAddress ?? "unknown", stepUp: query["step-up"] == "1",
                    returnTo: Self.safeReturn(query["return"]))
            }
            router.get("/ui/oidc/callback") { request, context in try await oidcCallback(request, context, oidc) }
        }

        let ui = router.group("/ui").add(middleware: ConsoleAuthentication(routes: self))
        ui.post("/sign-out") { request, context in
            let session = try context.requireConsoleSession()
            guard Self.carries(try await Self.form(request), csrf: session.session.csrf) else { return Self.csrfRefusal() }
            sessions.close(session.id)
            var response = Self.redirect("/ui/sign-in")
            response.headers[.setCookie] = cookieHeader("", maxAge: 0)
            return response
        }
        ui.post("/do/{operation}") { request, context in try await perform(request, context) }
        ui.get("/events") { request, context in try events(context) }
        for page in ConsolePages.all {
            ui.get(RouterPath(page.path)) { request, context in try await render(page, request, context) }
        }
    }

    // MARK: Pages

    /// Renders `page` for the signed-in person, its reads in the readers' lane.
    private func render(_ page: ConsolePages.Route, _ request: Request, _ context: ServeContext) async throws -> Response {
        let caller = try context.requireCaller()
        let session = try context.requireConsoleSession()
        // A live refresh leaves the flash for the page the person is looking at.
        let flash = request.headers[.plugboardConsole] == "refresh" ? nil : sessions.takeFlash(session.id)
        let board = admin.board
        let query = Self.query(request)
        let parameters = context.parameters
        let path = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        let state = ConsolePage(
            path: path, csrf: session.session.csrf, readOnly: caller.readOnly, principal: caller.principal,
            tokenMadeBy: caller.token?.createdBy ?? "", query: query,
            parameter: page.parameter.flatMap { parameters.get($0)?.removingPercentEncoding }, verifier: admin.consoleVerifier,
            lane: admin.reads)
        let started = ContinuousClock.now
        let rendered: (String, String)
        do {
            rendered = try await admin.reads.run { () throws -> (String, String) in
                let body = try page.render(ConsoleReads(board: board, page: state))
                return (page.title(state), body)
            }
        } catch let error as BoardError {
            return Self.refusal(
                HTTPResponse.Status(code: OperationsWire.status(for: error.code)), heading: "Refused", error.message,
                navigation: page.section,
                session: session.session)
        }
        admin.configuration.logger.debug("console page \(page.path) rendered in \(ContinuousClock.now - started)")
        return Self.page(
            title: rendered.0, body: rendered.1, navigation: page.section, session: session.session, readOnly: caller.readOnly,
            principal: caller.principal.osUser, flash: flash, live: page.live)
    }

    // MARK: Changes

    /// `POST /ui/do/{operation}`: the form's operation, checked and performed as the person; back to the page it came
    /// from with the answer's sentence, or a page with the refusal's sentence and status.
    private func perform(_ request: Request, _ context: ServeContext) async throws -> Response {
        let caller = try context.requireCaller()
        let session = try context.requireConsoleSession()
        let form = try await Self.form(request)
        guard Self.carries(form, csrf: session.session.csrf) else { return Self.csrfRefusal() }
        let name = context.parameters.get("operation") ?? ""
        guard let type = OperationsAPI.requests.first(where: { $0.name == name }) as? any ParsedOperation.Type else {
            return Self.refusal(
                .notFound, heading: "No such operation", "the console has no operation '\(Validate.escaped(String(name.prefix(60))))'")
        }
        let back = Self.safeReturn(form["return"])
        if let oidc, case .identity(_, _, let authTime) = session.session.credential, ConsoleOIDC.needsStepUp(type),
            !oidc.isRecent(authTime)
        {
            // A widening change or an approval waits for a fresh sign-in at the provider; a stop never does.
            sessions.flash(
                session.id,
                .init(
                    text:
                        "You signed in more than \(oidc.stepUpWords) ago: sign in again at the identity provider, then submit the change again.",
                    failed: true))
            return Self.redirect("/ui/oidc/start?step-up=1&return=" + ConsolePages.escape(back))
        }
        return try await perform(type, form: form, caller: caller, session: session.id, back: back, path: request.uri.path)
    }

    private func perform<Op: ParsedOperation>(
        _ type: Op.Type, form: [String: String], caller: OperationsRoutes.Caller, session: String, back: String, path: String
    ) async throws -> Response {
        let (board, principal) = (admin.board, caller.principal)
        if Op.declaration.access != .read, caller.readOnly {
            let error = BoardError(
                .notAllowed,
                "\(caller.credential) is read-only; sign in with a token created without --read-only, or as a person whose groups give a role, to change the board"
            )
            let refusal = AuditEntry(action: Op.declaration.action, targetType: "console", targetID: "POST \(path)")
            try await admin.threads(Op.declaration.access).run { board.recordRefusal(refusal, by: principal, because: error) }
            return Self.refusal(.forbidden, heading: "Not allowed", error.message, back: back)
        }
        do {
            let (message, request) = try await admin.threads(Op.declaration.access).run { () throws -> (String, Int64?) in
                let operation = try Op.fromWire(try ConsoleForms.request(Op.self, from: form))
                switch try operation.submit(on: board, as: principal) {
                case .performed(let reply):
                    let sentence =
                        (reply.value as? ChangeResult)?.message ?? (reply.value as? ChangeRequestResult)?.message
                        ?? "\(Op.declaration.abstract.dropLast()): done."
                    return (([sentence] + reply.notes).joined(separator: " "), nil)
                case .requested(let reply):
                    return (([reply.value.message] + reply.notes).joined(separator: " "), reply.value.id)
                }
            }
            sessions.flash(session, .init(text: message, failed: false))
            // A change that opened a request goes to the request's page, where its approvals are followed.
            return Self.redirect(request.map { "/ui/changes/\($0)" } ?? back)
        } catch let error as BoardError {
            let status = HTTPResponse.Status(code: OperationsWire.status(for: error.code))
            return Self.refusal(status, heading: "Refused", error.message, back: back)
        }
    }

    // MARK: Sign-in

    /// `POST /ui/sign-in`: an access token for a session. The form must come from the console's own origin (its
    /// `Origin`, or without one its `Referer`: scheme, host and port; a sign-in that names neither is refused) and carry
    /// the CSRF token this server made for the pre-session its page set as a cookie. Failures count against the address
    /// as the operations API's do; sign-ins count against the token and its principal (``ConsoleSessions``).
    private func signIn(_ request: Request, _ context: ServeContext) async throws -> Response {
        if let sentence = Self.foreignSignIn(request, secure: secure) {
            return Self.refusal(.forbidden, heading: "Not allowed", sentence, back: "/ui/sign-in")
        }
        let form = try await Self.form(request, limit: 8 << 10)
        // The sign-in form's CSRF token is the server's HMAC of the pre-session its page set as a cookie of the sign-in
        // path: a page of another origin (even one of this host, which may set cookies for it) can plant a cookie, but
        // not make the token of a value it chose; a pair it read from a sign-in page of its own is refused by the
        // origin check above.
        guard let preSession = Self.cookie(request, named: ConsoleSessions.signInCookie), preSession.utf8.count == 43,
            Self.carries(form, csrf: sessions.signInToken(for: preSession))
        else {
            return Self.csrfRefusal()
        }
        let address = context.remoteAddress?.ipAddress ?? "unknown"
        let secret = (form["token"] ?? "").trimmingCharacters(in: .whitespaces)
        func failed(_ sentence: String) -> Response {
            if let wait = admin.failures.fail(address) {
                return signInPage(
                    preSession: preSession,
                    error: "too many failed sign-ins from \(address) or from all clients; try again in \(wait) seconds",
                    status: .tooManyRequests, retryAfter: wait)
            }
            return signInPage(preSession: preSession, error: sentence, status: .unauthorized)
        }
        guard !secret.isEmpty else { return failed("give an access token (plugboard access-token create)") }
        let token = try await OperationsRoutes.lookUp(secret, on: admin.board, in: admin.guesses)
        guard let token else { return failed("this access token is not known to the board; create one with plugboard access-token create") }
        guard token.state == .active else {
            return failed("the access token '\(token.name)' of \(token.principal) is \(token.state.rawValue); create a new one")
        }
        guard !token.stopsOnly else {
            return signInPage(
                preSession: preSession,
                error:
                    "the access token '\(token.name)' of \(token.principal) may only stop plug-ins through its alerting trigger; sign in with a token created without --scope stop",
                status: .forbidden)
        }
        switch sessions.open(secret: secret, tokenName: token.name, principal: token.principal, readOnly: token.readOnly) {
        case .success(let (id, _)):
            var response = Self.redirect("/ui/")
            response.headers[.setCookie] = cookieHeader(id, maxAge: Int(ConsoleSessions.lifetime.components.seconds))
            return response
        case .failure(.tooManySignIns(let perToken, let wait)):
            let who = perToken ? "with the access token '\(token.name)' of \(token.principal)" : "as \(token.principal)"
            return signInPage(
                preSession: preSession,
                error: "too many sign-ins \(who) in the last minute; use the session you have, or try again in \(wait) seconds",
                status: .tooManyRequests, retryAfter: wait)
        case .failure(.full):
            return signInPage(
                preSession: preSession,
                error: "the console holds as many sessions as it can (\(sessions.limit)); try again when some have ended",
                status: .serviceUnavailable, retryAfter: 60)
        }
    }

    /// `GET /ui/oidc/callback`: the provider's answer, and a session for the person it signed in; a refusal is counted
    /// against the address and recorded, and the sign-in page says why.
    private func oidcCallback(_ request: Request, _ context: ServeContext, _ oidc: ConsoleOIDC) async throws -> Response {
        let address = context.remoteAddress?.ipAddress ?? "unknown"
        let board = admin.board
        let outcome = await oidc.callback(request, address: address, board: board, lane: admin.changes)
        let clearBinding = "\(ConsoleOIDC.bindingCookie)=; Path=/ui/oidc; Max-Age=0; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
        switch outcome {
        case .refused(let sentence):
            let issuer = oidc.provider.configuration.issuer
            try? await admin.changes.run { ConsoleOIDC.recordRefusal(sentence, issuer: issuer, address: address, board: board) }
            var response: Response
            if let wait = admin.failures.fail(address) {
                response = signInPage(
                    preSession: ConsoleSessions.random(),
                    error: "too many failed sign-ins from \(address) or from all clients; try again in \(wait) seconds",
                    status: .tooManyRequests, retryAfter: wait)
            } else {
                response = signInPage(preSession: ConsoleSessions.random(), error: sentence, status: .unauthorized)
            }
            response.headers.append(HTTPField(name: .setCookie, value: clearBinding))
            return response
        case .cli(let person, let issuer, let authTime, let login):
            var response = LoginRoutes.browserSignedIn(
                admin.cliLogins, login: login, principal: person.principal, readOnly: person.readOnly, issuer: issuer, authTime: authTime,
                address: address)
            response.headers.append(HTTPField(name: .setCookie, value: clearBinding))
            return response
        case .signedIn(let person, let issuer, let subject, let authTime, let returnTo):
            switch sessions.open(
                .identity(issuer: issuer, subject: subject, authTime: authTime), principal: person.principal, readOnly: person.readOnly)
            {
            case .success(let (id, _)):
                // A page, not a redirect: a session cookie set on the answer to a navigation that began at the provider is
                // kept, and the next navigation, from this page, is the console's own, which sends it.
                // A principal's name, and a return path (``safeReturn(_:)``), have no character HTML treats specially.
                let body = "<p>Signed in as <strong>\(person.principal)</strong>. <a href=\"\(returnTo)\">Continue to the console</a>.</p>"
                var response = Self.page(title: "Signed in", body: body)
                response.headers[.refresh] = "0; url=\(returnTo)"
                response.headers[.setCookie] = cookieHeader(id, maxAge: Int(ConsoleSessions.lifetime.components.seconds))
                response.headers.append(HTTPField(name: .setCookie, value: clearBinding))
                return response
            case .failure(.tooManySignIns(_, let wait)):
                return signInPage(
                    preSession: ConsoleSessions.random(),
                    error:
                        "too many sign-ins as \(person.principal) in the last minute; use the session you have, or try again in \(wait) seconds",
                    status: .tooManyRequests, retryAfter: wait)
            case .failure(.full):
                return signInPage(
                    preSession: ConsoleSessions.random(),
                    error: "the console holds as many sessions as it can (\(sessions.limit)); try again when some have ended",
                    status: .serviceUnavailable, retryAfter: 60)
            }
        }
    }

    /// The sign-in page, its form carrying the CSRF token of `preSession`, which it sets as the sign-in path's cookie;
    /// with `error`, the refusal's sentence, status and `Retry-After` seconds.
    private func signInPage(
        preSession: String, error: String? = nil, status: HTTPResponse.Status = .ok, retryAfter: Int? = nil
    ) -> Response {
        let view = SignInView(csrf: sessions.signInToken(for: preSession), error: error, provider: oidc?.name)
        var response = Self.page(title: "Sign in", body: ConsoleTemplates.render(view), status: status)
        response.headers[.setCookie] =
            "\(ConsoleSessions.signInCookie)=\(preSession); Path=/ui/sign-in; Max-Age=3600; HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    private func cookieHeader(_ value: String, maxAge: Int) -> String {
        "\(ConsoleSessions.cookie)=\(value); Path=/ui; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    // MARK: Live

    /// `GET /ui/events`: `event: change` whenever the board or a host's report changed, for the page to fetch itself
    /// again; a comment every 15 s keeps proxies from closing it. It ends when the session does.
    private func events(_ context: ServeContext) throws -> Response {
        let session = try context.requireConsoleSession()
        let (sessions, pulse) = (self.sessions, self.pulse)
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(8))
        let task = Task {
            var last = await pulse.stamp()
            var quiet = Duration.zero
            continuation.yield(ByteBuffer(string: "retry: 2000\n\n"))
            while !Task.isCancelled, sessions.isOpen(session.id) {
                try? await Task.sleep(for: ConsolePulse.interval)
                let stamp = await pulse.stamp()
                if stamp != last {
                    last = stamp
                    quiet = .zero
                    continuation.yield(ByteBuffer(string: "event: change\ndata: \(stamp)\n\n"))
                } else {
                    quiet += ConsolePulse.interval
                    if quiet >= .seconds(15) {
                        quiet = .zero
                        continuation.yield(ByteBuffer(string: ": keep-alive\n\n"))
                    }
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        var response = Reply.eventStream(stream)
        Self.secureHeaders(&response.headers)
        return response
    }
}

extension HTTPField.Name {
    /// Sent by the console's script when it fetches the page it shows again.
    static let plugboardConsole = HTTPField.Name("X-Plugboard-Console")!
    /// `Refresh: 0; url=…`: the page leads on by itself, with no script.
    static let refresh = HTTPField.Name("Refresh")!
}
