import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

/// The web console's promises, against the server's router: sign-in for a session cookie, CSRF on every change, a
/// read-only person who sees no control and is refused a forged one, sign-out, the security headers, and that a change
/// is the operation the API performs, audited with `via console`.
@Suite("the web console", .timeLimit(.hangGuard))
struct ConsoleTests {
    static let admin = try! Principal(osUser: "alice")

    struct Served {
        let board: Board
        let server: PlugboardServer
        let writer: String
        let reader: String

        init() throws {
            board = try Board.inMemory(by: ConsoleTests.admin)
            let manifest = try PluginManifest.parse(
                Data(#"{"id": "com.example.notes", "name": "Notes", "version": "1.0.0", "host": ">=1.0.0"}"#.utf8))
            _ = try board.register(manifest, by: ConsoleTests.admin)
            _ = try board.setEnabled("com.example.notes", true, environment: "default", by: ConsoleTests.admin)
            var configuration = ServerConfiguration()
            configuration.admin = true
            configuration.rolloutInterval = nil
            server = PlugboardServer(board: board, configuration: configuration)
            writer = try board.createAccessToken(principal: "alice", name: "laptop", readOnly: false, by: ConsoleTests.admin).secret
            reader = try board.createAccessToken(principal: "alice", name: "viewer", readOnly: true, by: ConsoleTests.admin).secret
        }

        func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
            try await server.makeApplication().test(.router, body)
        }
    }

    /// The sign-in form's CSRF token and the cookie that must come back with it, from the sign-in page.
    static func signInForm(_ client: some TestClientProtocol) async throws -> (csrf: String, cookie: String) {
        let page = try await client.execute(uri: "/ui/sign-in", method: .get)
        let cookie = try #require(page.headers[.setCookie])
        #expect(cookie.contains("Path=/ui/sign-in") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        return (try csrf(String(buffer: page.body)), String(try #require(cookie.split(separator: ";").first)))
    }

    /// The console's origin in router tests (the test client sends its requests to `localhost`).
    static let origin = "http://localhost"

    /// Posts the sign-in form with `token` (and the form's own CSRF token unless `csrf` is given), from the console's
    /// own page.
    static func postSignIn(_ client: some TestClientProtocol, _ token: String, csrf: String? = nil) async throws -> TestResponse {
        let form = try await signInForm(client)
        return try await postSignIn(client, token, csrf: csrf ?? form.csrf, cookie: form.cookie, headers: [.origin: origin])
    }

    /// Posts a sign-in form of `token` and `csrf` with `cookie` and `headers`, as any page or client may.
    static func postSignIn(
        _ client: some TestClientProtocol, _ token: String, csrf: String, cookie: String?, headers: HTTPFields
    ) async throws -> TestResponse {
        let fields = ["token": token, "csrf": csrf]
        let body = fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
            .joined(separator: "&")
        var headers = headers
        headers[.contentType] = "application/x-www-form-urlencoded"
        if let cookie { headers[.cookie] = cookie }
        return try await client.execute(uri: "/ui/sign-in", method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    /// Signs in with `token`; answers the cookie header to send back.
    static func signIn(_ client: some TestClientProtocol, _ token: String) async throws -> String {
        let response = try await postSignIn(client, token)
        #expect(response.status == .seeOther)
        let cookie = try #require(response.headers[.setCookie])
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/ui"))
        return String(try #require(cookie.split(separator: ";").first))
    }

    /// The page at `uri` with the session.
    static func page(_ client: some TestClientProtocol, _ uri: String, _ cookie: String) async throws -> (HTTPResponse.Status, String) {
        let response = try await client.execute(uri: uri, method: .get, headers: [.cookie: cookie])
        return (response.status, String(buffer: response.body))
    }

    /// The CSRF token of a page's forms.
    static func csrf(_ html: String) throws -> String {
        let marker = #"name="csrf" value=""#
        let start = try #require(html.range(of: marker)).upperBound
        return String(html[start...].prefix { $0 != "\"" })
    }

    static func post(
        _ client: some TestClientProtocol, _ uri: String, _ cookie: String, _ fields: [String: String]
    ) async throws -> TestResponse {
        let body = fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
            .joined(separator: "&")
        return try await client.execute(
            uri: uri, method: .post, headers: [.cookie: cookie, .contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: body))
    }

    @Test func aKillFromTheConsoleIsTheOperationAuditedAsThePersonViaTheConsole() async throws {
        let served = try Served()
        try await served.test { client in
            let cookie = try await Self.signIn(client, served.writer)
            let (status, html) = try await Self.page(client, "/ui/plugins/com.example.notes", cookie)
            #expect(status == .ok)
            #expect(html.contains(#"action="/ui/do/plugin.kill""#))
            let response = try await Self.post(
                client, "/ui/do/plugin.kill", cookie,
                ["csrf": try Self.csrf(html), "return": "/ui/plugins/com.example.notes", "id": "com.example.notes", "reason": "INC-11"])
            #expect(response.status == .seeOther)
            #expect(response.headers[.location] == "/ui/plugins/com.example.notes")
            let after = try await Self.page(client, "/ui/plugins/com.example.notes", cookie).1
            #expect(after.contains("Killed com.example.notes"))
        }
        let kills = try served.board.killSwitches()
        #expect(kills.map(\.reason) == ["INC-11"])
        let row = try #require(try served.board.auditRecords(AuditQuery(limit: 1)).last)
        #expect(row.action == "plugin.kill" && row.by == "alice" && row.via?.hasPrefix("console from") == true, "\(row)")
    }

    @Test func aChangeWithoutTheSessionsCSRFTokenIsRefusedAndChangesNothing() async throws {
        let served = try Served()
        try await served.test { client in
            let cookie = try await Self.signIn(client, served.writer)
            for csrf in [nil, "forged"] {
                var fields = ["id": "com.example.notes", "reason": "INC-12"]
                fields["csrf"] = csrf
                let response = try await Self.post(client, "/ui/do/plugin.kill", cookie, fields)
                #expect(response.status == .forbidden)
            }
        }
        #expect(try served.board.killSwitches().isEmpty)
    }

    @Test func aReadOnlyPersonSeesNoControlAndAForgedChangeIsRefusedAndAudited() async throws {
        let served = try Served()
        try await served.test { client in
            let cookie = try await Self.signIn(client, served.reader)
            var csrf = ""
            for uri in [
                "/ui/", "/ui/plugins", "/ui/plugins/com.example.notes", "/ui/fleet", "/ui/flags", "/ui/audit", "/ui/tokens", "/ui/rollouts",
                "/ui/changes",
            ] {
                let (status, html) = try await Self.page(client, uri, cookie)
                #expect(status == .ok, "\(uri)")
                #expect(!html.contains(#"action="/ui/do/"#), "\(uri) shows a control to a read-only person")
                csrf = try Self.csrf(html)  // the sign-out form's
            }
            let response = try await Self.post(
                client, "/ui/do/plugin.kill", cookie, ["csrf": csrf, "id": "com.example.notes", "reason": "INC-13"])
            #expect(response.status == .forbidden)
        }
        #expect(try served.board.killSwitches().isEmpty)
        let row = try #require(try served.board.auditRecords(AuditQuery(limit: 1)).last)
        #expect(row.action == "plugin.kill" && row.outcome == "refused", "\(row)")
    }

    @Test func signingOutEndsTheSessionAndABadTokenGetsNoSession() async throws {
        let served = try Served()
        try await served.test { client in
            let cookie = try await Self.signIn(client, served.writer)
            let html = try await Self.page(client, "/ui/", cookie).1
            let out = try await Self.post(client, "/ui/sign-out", cookie, ["csrf": try Self.csrf(html)])
            #expect(out.status == .seeOther)
            #expect(out.headers[.setCookie]?.contains("Max-Age=0") == true)
            let after = try await client.execute(uri: "/ui/", method: .get, headers: [.cookie: cookie])
            #expect(after.status == .seeOther && after.headers[.location] == "/ui/sign-in")

            let bad = try await Self.postSignIn(client, "pba_notarealtoken")
            #expect(bad.status == .unauthorized)
            #expect(bad.headers[.setCookie]?.hasPrefix(ConsoleSessions.cookie + "=") != true)
            #expect(String(buffer: bad.body).contains("not known to the board"))
            // The sign-in form without its own CSRF token gets no session either.
            let forged = try await Self.postSignIn(client, served.writer, csrf: "forged")
            #expect(forged.status == .forbidden)
            #expect(forged.headers[.setCookie] == nil)
        }
    }

    @Test func aRevokedTokenEndsItsSessionAtTheNextPage() async throws {
        let served = try Served()
        try await served.test { client in
            let cookie = try await Self.signIn(client, served.writer)
            #expect(try await Self.page(client, "/ui/", cookie).0 == .ok)
            _ = try served.board.revokeAccessToken(principal: "alice", name: "laptop", reason: "lost", by: Self.admin)
            let after = try await client.execute(uri: "/ui/", method: .get, headers: [.cookie: cookie])
            #expect(after.status == .seeOther && after.headers[.location] == "/ui/sign-in")
        }
    }

    @Test func everyAnswerForbidsInlineScriptAndFramingAndPagesAreNotCached() async throws {
        let served = try Served()
        try await served.test { client in
            let cookie = try await Self.signIn(client, served.writer)
            for uri in ["/ui/sign-in", "/ui/", "/ui/static/console.js", "/ui/static/console.css"] {
                let response = try await client.execute(uri: uri, method: .get, headers: [.cookie: cookie])
                let policy = try #require(response.headers[.contentSecurityPolicy], "\(uri)")
                #expect(
                    policy.contains("script-src 'self'") && !policy.contains("unsafe-inline") && policy.contains("frame-ancestors 'none'"))
                #expect(response.headers[.xContentTypeOptions] == "nosniff")
            }
            let page = try await client.execute(uri: "/ui/", method: .get, headers: [.cookie: cookie])
            #expect(page.headers[.cacheControl] == "no-store")
            #expect(!String(buffer: page.body).contains("<script>"))
        }
    }

    @Test func aFormFromAnotherSiteCannotSignInAndAReturnAddressStaysInTheConsole() async throws {
        let served = try Served()
        try await served.test { client in
            let response = try await client.execute(
                uri: "/ui/sign-in", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", .origin: "https://evil.example"],
                body: ByteBuffer(string: "token=\(served.writer)"))
            #expect(response.status == .forbidden)
        }
        #expect(ConsoleRoutes.safeReturn("https://evil.example/") == "/ui/")
        #expect(ConsoleRoutes.safeReturn("//evil.example/ui/") == "/ui/")
        #expect(ConsoleRoutes.safeReturn("/ui/plugins?env=default") == "/ui/plugins?env=default")
        #expect(ConsoleOrigin("http://127.0.0.1:4242") == ConsoleOrigin(scheme: "http", authority: "127.0.0.1:4242"))
        #expect(ConsoleOrigin("http://127.0.0.1:8080") != ConsoleOrigin(scheme: "http", authority: "127.0.0.1:4242"))
        #expect(ConsoleOrigin("https://board.example") == ConsoleOrigin(scheme: "https", authority: "Board.Example:443"))
        #expect(ConsoleOrigin("https://board.example") != ConsoleOrigin(scheme: "http", authority: "board.example"))
        #expect(ConsoleOrigin("http://[::1]:4242/ui/sign-in") == ConsoleOrigin(scheme: "http", authority: "[::1]:4242"))
        #expect(ConsoleOrigin("null") == nil)
    }
}
