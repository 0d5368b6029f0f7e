import Foundation
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

/// The logins of `plugboard login` kept in memory: single use, 10 minutes, PKCE, device polls and user codes.
@Suite("CLI logins", .timeLimit(.hangGuard))
struct CLILoginsTests {
    static let verifier = "dBjftJeZ4CVP-mJ92K9qWmW2Vc2Fd2O8gQfHcPd7jLk"
    /// base64url(SHA-256(verifier)), computed apart (Python's hashlib).
    static let challenge = "rWuo0pbsQnAUqm6ACWIhCR89dzYMJ9Ci49daj2q5Y2o"

    static func grant() throws -> CLILogins.Grant {
        CLILogins.Grant(actor: try Principal(osUser: "alice", via: "test"), readOnly: false)
    }

    @Test func theChallengeIsTheS256OfTheVerifier() {
        #expect(CLILogins.challenge(of: Self.verifier) == Self.challenge)
    }

    @Test func aLoopbackCodeWorksOnceWithItsVerifierAndNotAfterTenMinutes() throws {
        let clock = TestClock()
        let logins = CLILogins(now: clock.date)
        let id = try #require(logins.beginLoopback(redirect: "http://127.0.0.1:9/cb", challenge: Self.challenge, tokenLifetime: 3600))
        #expect(logins.isPending(id) && !logins.isPending(id + "x"))
        let next = try #require(logins.signedIn(id, grant: try Self.grant()))
        #expect(logins.signedIn(id, grant: try Self.grant()) == nil)
        let code = String(next.dropFirst("http://127.0.0.1:9/cb?code=".count))
        guard case .failure = logins.finish(code: code, verifier: Self.verifier + "x") else {
            Issue.record("a wrong verifier was taken")
            return
        }
        guard case .failure = logins.finish(code: code, verifier: Self.verifier) else {
            Issue.record("a code was used twice")
            return
        }

        let late = try #require(logins.beginLoopback(redirect: "http://[::1]:9/cb?x=1", challenge: Self.challenge, tokenLifetime: 3600))
        let lateNext = try #require(logins.signedIn(late, grant: try Self.grant()))
        #expect(lateNext.contains("?x=1&code="))
        clock.advance(by: .seconds(601))
        guard case .failure(let error) = logins.finish(code: String(lateNext.split(separator: "=").last!), verifier: Self.verifier) else {
            Issue.record("an expired code was taken")
            return
        }
        #expect(error.message.contains("10 minutes"))
    }

    @Test func onlyLoopbackRedirectsAreAccepted() {
        #expect(LoginRoutes.isLoopbackRedirect("http://127.0.0.1:53682/plugboard-login"))
        #expect(LoginRoutes.isLoopbackRedirect("http://[::1]:53682/cb"))
        for refused in [
            "https://127.0.0.1:1/cb", "http://localhost:1/cb", "http://127.0.0.1/cb", "http://evil.example:1/cb",
            "http://user@127.0.0.1:1/cb", "http://127.0.0.1:1/cb#x", "http://127.0.0.2:1/cb", "http://127.0.0.1.evil.example:1/",
        ] {
            #expect(!LoginRoutes.isLoopbackRedirect(refused), "\(refused)")
        }
    }

    @Test func aDeviceCodeIsPendingThenSlowedThenGrantedOnce() throws {
        let clock = TestClock()
        let logins = CLILogins(now: clock.date)
        let (device, user) = try #require(logins.beginDevice(address: "127.0.0.1", tokenLifetime: 3600))
        #expect(user.count == 8 && user.allSatisfy { CLILogins.userCodeLetters.contains($0) })
        func error(_ poll: CLILogins.Poll) -> String? {
            if case .waiting(let error, _) = poll { return error }
            return nil
        }
        #expect(error(logins.poll(deviceCode: device)) == "authorization_pending")
        #expect(error(logins.poll(deviceCode: device)) == "slow_down")
        clock.advance(by: .seconds(11))
        #expect(error(logins.poll(deviceCode: device)) == "authorization_pending")
        // The person may type it in lower case, with or without its dash; a wrong code answers nothing.
        #expect(logins.device(userCode: "BBBBBBBB") == nil)
        #expect(logins.device(userCode: CLILogins.displayed(user).lowercased())?.userCode == user)
        #expect(logins.answer(userCode: user, with: .approved(try Self.grant())))
        #expect(!logins.answer(userCode: user, with: .denied))
        guard case .granted(let grant, let lifetime) = logins.poll(deviceCode: device) else {
            Issue.record("an approved code gave no grant")
            return
        }
        #expect(grant.actor.osUser == "alice" && lifetime == 3600)
        #expect(error(logins.poll(deviceCode: device)) == "invalid_grant")

        let (denied, deniedUser) = try #require(logins.beginDevice(address: "127.0.0.1", tokenLifetime: 3600))
        #expect(logins.answer(userCode: deniedUser, with: .denied))
        #expect(error(logins.poll(deviceCode: denied)) == "access_denied")
        let (late, _) = try #require(logins.beginDevice(address: "127.0.0.1", tokenLifetime: 3600))
        clock.advance(by: .seconds(601))
        #expect(error(logins.poll(deviceCode: late)) == "expired_token")
    }
}
