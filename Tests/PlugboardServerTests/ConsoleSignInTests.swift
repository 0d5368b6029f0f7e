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

/// The console's sign-in, against the server's router: the sign-in form's CSRF token is the server's own (an HMAC of
/// the pre-session its page set as a cookie), a sign-in comes from the console's whole origin (scheme, host and port)
/// and says so, and sign-ins are limited per token and per principal without ending anyone else's session.
@Suite("the console's sign-in", .timeLimit(.hangGuard))
struct ConsoleSignInTests {
    typealias Served = ConsoleTests.Served

    @Test func aPageOnAnotherPortOfTheSameHostCannotSignAVictimIntoTheAttackersSession() async throws {
        let served = try Served()
        try await served.test { client in
            // The attacker reads a sign-in form of their own, then has the victim's browser send it with the attacker's
            // token from a page on another port of the same host (which may set cookies for the console's host).
            let form = try await ConsoleTests.signInForm(client)
            let otherPort = try await ConsoleTests.postSignIn(
                client, served.writer, csrf: form.csrf, cookie: form.cookie, headers: [.origin: "http://localhost:8081"])
            #expect(otherPort.status == .forbidden)
            #expect(otherPort.headers[.setCookie] == nil)
            #expect(
                String(buffer: otherPort.body).contains(
                    "a sign-in must come from the console&#39;s own page at http://localhost, not from http://localhost:8081"),
                "\(String(buffer: otherPort.body))")
            let otherScheme = try await ConsoleTests.postSignIn(
                client, served.writer, csrf: form.csrf, cookie: form.cookie, headers: [.origin: "https://localhost"])
            #expect(otherScheme.status == .forbidden && otherScheme.headers[.setCookie] == nil)
            let referer = try await ConsoleTests.postSignIn(
                client, served.writer, csrf: form.csrf, cookie: form.cookie, headers: [.referer: "http://localhost:8081/login.html"])
            #expect(referer.status == .forbidden && referer.headers[.setCookie] == nil)

            // A client that sends neither Origin nor Referer is refused, with the sentence that says so.
            let silent = try await ConsoleTests.postSignIn(client, served.writer, csrf: form.csrf, cookie: form.cookie, headers: [:])
            #expect(silent.status == .forbidden && silent.headers[.setCookie] == nil)
            #expect(
                String(buffer: silent.body).contains("a sign-in must say which page it comes from (Origin or Referer"),
                "\(String(buffer: silent.body))")

            // A planted cookie with a token of the attacker's making (the double submit of a value the attacker chose)
            // does not match the server's token, even from the console's origin.
            let chosen = String(repeating: "A", count: 43)
            let planted = try await ConsoleTests.postSignIn(
                client, served.writer, csrf: chosen, cookie: "\(ConsoleSessions.signInCookie)=\(chosen)",
                headers: [.origin: ConsoleTests.origin])
            #expect(planted.status == .forbidden && planted.headers[.setCookie] == nil)
            #expect(String(buffer: planted.body).contains("its CSRF token is missing or out of date"))

            // The console's own page, by its Origin or by its Referer alone, signs in.
            let own = try await ConsoleTests.postSignIn(
                client, served.writer, csrf: form.csrf, cookie: form.cookie, headers: [.referer: "http://localhost/ui/sign-in"])
            #expect(own.status == .seeOther, "\(String(buffer: own.body))")
            #expect(own.headers[.setCookie]?.hasPrefix(ConsoleSessions.cookie + "=") == true)
        }
    }

    @Test func aFloodOfSignInsWithOneRolelessTokenEndsNoOtherSessionAndKeepsNoMoreSessions() async throws {
        let served = try Served()
        let mallory = try served.board.createAccessToken(
            principal: "mallory", name: "flood", readOnly: true, by: ConsoleTests.admin
        ).secret
        let sessions = try #require(served.server.admin?.consoleSessions)
        try await served.test { client in
            let admin = try await ConsoleTests.signIn(client, served.writer)
            let form = try await ConsoleTests.signInForm(client)
            var statuses: [HTTPResponse.Status: Int] = [:]
            var refusal = ""
            let started = ContinuousClock.now
            for _ in 0..<500 {
                let response = try await ConsoleTests.postSignIn(
                    client, mallory, csrf: form.csrf, cookie: form.cookie, headers: [.origin: ConsoleTests.origin])
                statuses[response.status, default: 0] += 1
                if response.status == .tooManyRequests { refusal = String(buffer: response.body) }
            }
            // The limit is per window: a flood that outlasted one (a machine busy enough) may sign in again once per
            // window it spanned.
            let windows = 1 + Int((ContinuousClock.now - started) / ConsoleSessions.signInWindow)
            let signedIn = statuses[.seeOther] ?? 0
            #expect(signedIn >= ConsoleSessions.signInsPerToken && signedIn <= ConsoleSessions.signInsPerToken * windows, "\(statuses)")
            #expect(statuses[.tooManyRequests] == 500 - signedIn, "\(statuses)")
            #expect(refusal.contains("too many sign-ins with the access token &#39;flood&#39; of mallory in the last minute"), "\(refusal)")
            // The flood kept at most one token's sessions, and the admin's session still works.
            #expect(sessions.count <= ConsoleSessions.perToken + 1, "\(sessions.count) sessions")
            #expect(try await ConsoleTests.page(client, "/ui/", admin).0 == .ok)
        }
    }

    @Test func aFullTableRefusesASignInInsteadOfEndingAnotherPersonsSession() throws {
        let sessions = ConsoleSessions(limit: 40)
        let first = try sessions.open(secret: "pba_admin", tokenName: "laptop", principal: "root", readOnly: false).get()
        // One principal with many tokens keeps at most its own share; its sign-ins end only its own sessions.
        var opened: [String] = []
        for index in 0..<ConsoleSessions.signInsPerPrincipal {
            let (id, _) = try sessions.open(secret: "pba_\(index)", tokenName: "t\(index)", principal: "mallory", readOnly: true).get()
            opened.append(id)
        }
        #expect(sessions.count == 1 + ConsoleSessions.signInsPerPrincipal)
        #expect(Self.refusal(sessions.open(secret: "pba_more", tokenName: "more", principal: "mallory", readOnly: true)) == "principal")
        // Many principals fill the table: the next sign-in is refused, and nobody's session was ended for it.
        for index in 0..<(40 - sessions.count) {
            _ = try sessions.open(secret: "pba_p\(index)", tokenName: "t", principal: "p\(index)", readOnly: true).get()
        }
        #expect(Self.refusal(sessions.open(secret: "pba_late", tokenName: "t", principal: "late", readOnly: true)) == "full")
        #expect(sessions.session(first.id) != nil)
        #expect(opened.allSatisfy { sessions.session($0) != nil })
    }

    /// Why a sign-in opened no session, in a word (nil when it opened one).
    static func refusal(_ result: Result<(id: String, session: ConsoleSessions.Session), ConsoleSessions.Refusal>) -> String? {
        switch result {
        case .success: nil
        case .failure(.tooManySignIns(let token, _)): token ? "token" : "principal"
        case .failure(.full): "full"
        }
    }

    @Test func oneTokensSessionsBeyondItsShareEndItsOwnOldestOnly() throws {
        let sessions = ConsoleSessions()
        let other = try sessions.open(secret: "pba_other", tokenName: "laptop", principal: "root", readOnly: false).get()
        var ids: [String] = []
        for _ in 0..<ConsoleSessions.signInsPerToken {
            ids.append(try sessions.open(secret: "pba_one", tokenName: "one", principal: "mallory", readOnly: true).get().id)
        }
        #expect(sessions.count == 1 + ConsoleSessions.perToken)
        #expect(sessions.session(ids[0]) == nil && sessions.session(ids.last!) != nil)
        #expect(sessions.session(other.id) != nil)
    }
}
