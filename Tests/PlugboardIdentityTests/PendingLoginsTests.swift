import Foundation
import PlugboardIdentity
import PlugboardTestSupport
import Testing

@Suite("Pending logins: consumed once, by their browser, in time", .timeLimit(.hangGuard))
struct PendingLoginsTests {
    @Test("a state is finished once; a replay is refused")
    func replayedState() throws {
        let logins = PendingLogins()
        let started = logins.begin(purpose: "console", returnTo: "/ui/plugins")
        #expect(started.state.count == 43 && started.nonce.count == 43 && started.verifier.count == 43)
        #expect(Set([started.state, started.nonce, started.verifier, started.browserBinding]).count == 4)
        let pending = try logins.finish(state: started.state, browserBinding: started.browserBinding)
        #expect(pending.purpose == "console")
        #expect(pending.returnTo == "/ui/plugins")
        #expect(pending.nonce == started.nonce && pending.verifier == started.verifier)
        #expect(throws: IdentityError.self) { try logins.finish(state: started.state, browserBinding: started.browserBinding) }
        do {
            _ = try logins.finish(state: started.state, browserBinding: started.browserBinding)
        } catch {
            #expect(error.code == .loginRejected)
            #expect(error.description == "this sign-in is unknown or was finished already; start the sign-in again")
        }
    }

    @Test("another browser's binding is refused, and burns the login")
    func otherBrowser() throws {
        let logins = PendingLogins()
        let started = logins.begin(purpose: "console", returnTo: "/ui/")
        do {
            _ = try logins.finish(state: started.state, browserBinding: "someone-else")
            Issue.record("another browser finished the login")
        } catch {
            #expect(error.description.contains("started in another browser"))
        }
        #expect(throws: IdentityError.self) { try logins.finish(state: started.state, browserBinding: started.browserBinding) }
    }

    @Test("an expired login is refused; at most capacity are pending, the oldest dropped")
    func expiryAndCapacity() throws {
        let expired = PendingLogins(lifetime: 0)
        let started = expired.begin(purpose: "console", returnTo: "/ui/")
        do {
            _ = try expired.finish(state: started.state, browserBinding: started.browserBinding)
            Issue.record("an expired login was finished")
        } catch {
            #expect(error.description.contains("took longer than"))
        }

        let logins = PendingLogins(capacity: 3)
        let first = logins.begin(purpose: "console", returnTo: "/ui/")
        let rest = (0..<3).map { _ in logins.begin(purpose: "console", returnTo: "/ui/") }
        #expect(logins.count == 3)
        #expect(throws: IdentityError.self) { try logins.finish(state: first.state, browserBinding: first.browserBinding) }
        for started in rest { _ = try logins.finish(state: started.state, browserBinding: started.browserBinding) }
    }
}

@Suite("The client secret file", .timeLimit(.hangGuard))
struct ClientSecretTests {
    @Test("a 0600 file is read without its newline; a file others can read is refused; the secret never prints")
    func secretFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-secret-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data("s3cret\n".utf8), attributes: [.posixPermissions: 0o600]))
        let secret = try ClientSecret(contentsOfFile: path)
        #expect(secret.reveal() == "s3cret")
        #expect("\(secret)" == "<redacted>" && String(reflecting: secret) == "<redacted>")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        do {
            _ = try ClientSecret(contentsOfFile: path)
            Issue.record("a secret file others can read was accepted")
        } catch {
            #expect(error.description.contains("(mode 644); make it 0600"))
            #expect(!error.description.contains("s3cret"))
        }
    }
}
