import Foundation
import HTTPTypes
import Hummingbird
import PlugboardModel
import PlugboardStore

/// `/ui/device`: the signed-in person confirms the user code that `plugboard login --device` shows, and so gives that
/// CLI an access token of theirs (``LoginRoutes``).
///
/// The form carries the session's CSRF token. The code typed is looked up first and what approving it gives is shown
/// (who asked, from where, which rights, for how long) with Approve and Deny; only that second form answers the login.
/// A code that is not pending counts against the address as a failed sign-in does, so codes cannot be guessed.
struct ConsoleDevice: Sendable {
    let console: ConsoleRoutes
    let logins: CLILogins

    func add(to router: Router<ServeContext>) {
        let page = router.group("/ui/device").add(middleware: ConsoleAuthentication(routes: console))
        page.get { request, context in try show(request, context, code: ConsoleRoutes.query(request)["code"] ?? "", error: nil) }
        page.post { request, context in try await answer(request, context) }
    }

    /// The form to type the code in (with `code` filled in), and `error` when the last one was refused.
    private func show(
        _ request: Request, _ context: ServeContext, code: String, error: String?, status: HTTPResponse.Status = .ok
    ) throws -> Response {
        let caller = try context.requireCaller()
        let session = try context.requireConsoleSession()
        let csrf = Self.html(session.session.csrf)
        let rights = caller.readOnly ? "read-only access" : "your rights"
        let body = """
            <h1>Approve a CLI login</h1>
            \(error.map { "<p class=\"error\">\(Self.html($0))</p>" } ?? "")
            <p>Type the code that <code>plugboard login</code> shows in your terminal. Approving it gives that CLI an \
            access token acting as <strong>\(Self.html(caller.principal.osUser))</strong>, with \(rights). \
            Approve only a code that your own terminal shows.</p>
            <form method="post" action="/ui/device">
            <input type="hidden" name="csrf" value="\(csrf)">
            <label>Code <input name="user_code" value="\(Self.html(String(code.prefix(16))))" autocomplete="off" \
            autocapitalize="characters" placeholder="BCDF-GHJK" required></label>
            <button type="submit">Continue</button>
            </form>
            """
        return ConsoleRoutes.page(
            title: "Approve a CLI login", body: body, status: status, session: session.session, readOnly: caller.readOnly,
            principal: caller.principal.osUser)
    }

    /// `POST /ui/device`: a typed code shown with what it gives, or the person's Approve or Deny.
    private func answer(_ request: Request, _ context: ServeContext) async throws -> Response {
        let caller = try context.requireCaller()
        let session = try context.requireConsoleSession()
        let form = try await ConsoleRoutes.form(request, limit: 4 << 10)
        guard ConsoleRoutes.carries(form, csrf: session.session.csrf) else { return ConsoleRoutes.csrfRefusal() }
        let typed = form["user_code"] ?? ""
        let decision = form["decision"] ?? ""
        guard let device = logins.device(userCode: typed) else {
            let address = context.remoteAddress?.ipAddress ?? "unknown"
            if let wait = console.admin.failures.fail(address) {
                var response = try show(
                    request, context, code: "",
                    error: "too many wrong codes from \(address) or from all clients; try again in \(wait) seconds",
                    status: .tooManyRequests)
                response.headers[.retryAfter] = String(wait)
                return response
            }
            return try show(
                request, context, code: typed, error: "this code is not pending: check it, or run plugboard login again for a new one",
                status: .badRequest)
        }
        let shown = CLILogins.displayed(device.userCode)
        switch decision {
        case "approve", "deny":
            let grant = CLILogins.Grant(
                actor: try Principal(
                    osUser: caller.principal.osUser,
                    via: String(("plugboard login, approved in " + (caller.principal.via ?? "the console")).prefix(512)),
                    accessToken: caller.principal.accessToken),
                readOnly: caller.readOnly)
            guard logins.answer(userCode: device.userCode, with: decision == "approve" ? .approved(grant) : .denied) else {
                return try show(request, context, code: "", error: "the code \(shown) was answered or expired meanwhile", status: .conflict)
            }
            let sentence =
                decision == "approve"
                ? "Approved: the CLI that shows \(shown) receives its access token at its next poll; return to your terminal."
                : "Denied: the CLI that shows \(shown) gets no access token."
            console.sessions.flash(session.id, .init(text: sentence, failed: false))
            return ConsoleRoutes.redirect("/ui/")
        default:
            return try confirm(device, shown: shown, caller: caller, session: session)
        }
    }

    /// What approving `device` gives, with Approve and Deny.
    private func confirm(
        _ device: CLILogins.Device, shown: String, caller: OperationsRoutes.Caller, session: ConsoleSessionReference
    ) throws -> Response {
        let hours = device.tokenLifetime / 3600
        let lasting = hours >= 1 ? "\(Int(hours)) hour\(Int(hours) == 1 ? "" : "s")" : "\(Int(device.tokenLifetime / 60)) minutes"
        let csrf = Self.html(session.session.csrf)
        let body = """
            <h1>Approve the CLI login \(shown)?</h1>
            <p>Asked from <strong>\(Self.html(device.address))</strong> at \(Timestamp.format(device.began)).</p>
            <p>Approving gives that CLI an access token acting as <strong>\(Self.html(caller.principal.osUser))</strong>\
            \(caller.readOnly ? ", read-only" : ", with your rights"), for \(lasting); it is recorded in the audit log and \
            can be revoked with <code>plugboard access-token revoke</code>.</p>
            <form method="post" action="/ui/device">
            <input type="hidden" name="csrf" value="\(csrf)">
            <input type="hidden" name="user_code" value="\(device.userCode)">
            <button type="submit" name="decision" value="approve">Approve</button>
            <button type="submit" name="decision" value="deny">Deny</button>
            </form>
            """
        return ConsoleRoutes.page(
            title: "Approve a CLI login", body: body, session: session.session, readOnly: caller.readOnly,
            principal: caller.principal.osUser)
    }

    /// `text` escaped for HTML text and attribute values.
    static func html(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
