import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `plugboard login URL` with a real OpenID provider (oidc-provider-mock) and the real `plugboard serve`, with curl as
/// the browser: in the loopback mode the browser comes back to the CLI with a one-time code, in the device mode the
/// person confirms the CLI's code in the console; either way the CLI keeps an access token of the person, with which
/// what it changes names them. Refused: a redirect that is not loopback, a wrong verifier, a code used twice, a wrong
/// user code.
@Suite("plugboard login with an identity provider (processes)", .timeLimit(.hangGuard))
struct CLILoginProcessTests {
    static let alpha = "com.example.alpha"
    static var enabled: Bool { OIDCSignInProcessTests.installed || ReverseProxyTests.isCI }

    static func post(_ url: String, _ json: String) async throws -> (status: Int, headers: String, body: String) {
        try await Curl.run(["-X", "POST", "-H", "Content-Type: application/json", "--data", json, url])
    }

    /// The text of the CSRF field of a console page.
    static func csrf(_ page: String) throws -> String {
        let marker = #"name="csrf" value=""#
        return String(page[try #require(page.range(of: marker)).upperBound...].prefix { $0 != "\"" })
    }

    @Test(.enabled(if: enabled))
    func aBrowserThatComesBackToTheLoopbackGivesTheCLIATokenOfThePerson() async throws {
        try #require(OIDCSignInProcessTests.installed, "oidc-provider-mock is not installed; .ci/run installs it")
        let served = try await OIDCServed.start()
        defer { served.kill() }
        let url = served.url

        // Refused: a redirect off this machine.
        let challenge = "rWuo0pbsQnAUqm6ACWIhCR89dzYMJ9Ci49daj2q5Y2o"  // S256 of the verifier below (computed with Python hashlib)
        let verifier = "dBjftJeZ4CVP-mJ92K9qWmW2Vc2Fd2O8gQfHcPd7jLk"
        let foreign = try await Self.post(
            "\(url)/api/login/begin", #"{"redirect":"http://evil.example:80/cb","code_challenge":"\#(challenge)"}"#)
        #expect(foreign.status == 400 && foreign.body.contains("invalid_request"), "\(foreign)")
        // A login of the test's own: a wrong verifier is refused, and the code cannot be used again, even rightly.
        let begun = try await Self.post(
            "\(url)/api/login/begin", #"{"redirect":"http://127.0.0.1:9/cb","code_challenge":"\#(challenge)"}"#)
        let start = try #require(
            (try JSONSerialization.jsonObject(with: Data(begun.body.utf8)) as? [String: Any])?["url"] as? String, "\(begun)")
        #expect(start.hasPrefix("\(url)/ui/oidc/cli/"), "\(start)")
        let back = try await served.browse(start)
        let loopback = try #require(OIDCSignInProcessTests.location(back.headers), "\(back)")
        #expect(back.status == 303 && loopback.hasPrefix("http://127.0.0.1:9/cb?code="), "\(back)")
        let code = String(loopback.dropFirst("http://127.0.0.1:9/cb?code=".count))
        let wrong = try await Self.post("\(url)/api/login/finish", #"{"code":"\#(code)","code_verifier":"\#(verifier.dropLast())x"}"#)
        #expect(wrong.status == 400 && wrong.body.contains("does not match"), "\(wrong)")
        let again = try await Self.post("\(url)/api/login/finish", #"{"code":"\#(code)","code_verifier":"\#(verifier)"}"#)
        #expect(again.status == 400 && again.body.contains("used already"), "\(again)")

        // The CLI prints the address; the browser signs in and comes back to the CLI, which keeps alice's token.
        let cli = try ChildProcess(Sandbox.binary, ["login", url, "--no-browser"], environment: served.environment)
        let address: String = try await eventually("the CLI prints the sign-in address") {
            cli.errorOutput.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.hasPrefix("\(url)/ui/oidc/cli/") }
        }
        let answered = try await served.browse(address)
        let cliLoopback = try #require(OIDCSignInProcessTests.location(answered.headers), "\(answered)")
        #expect(cliLoopback.hasPrefix("http://127.0.0.1:") && cliLoopback.contains("/plugboard-login?code="), "\(cliLoopback)")
        let landed = try await Curl.run([cliLoopback])
        #expect(landed.status == 200 && landed.body.contains("Signed in to Plugboard as alice"), "\(landed)")
        #expect(await cli.waitForExit() != nil)
        #expect(await cli.stop() == 0, "\(cli.errorOutput)")
        #expect(cli.output.joined().contains("Logged in to \(url) as alice (token 'login-"), "\(cli.output)")
        #expect(served.sandbox.mode(served.environment["XDG_CONFIG_HOME"]! + "/plugboard/credentials.json") == 0o600)
        // Its code works once.
        let cliCode = String(cliLoopback[try #require(cliLoopback.range(of: "code=")).upperBound...])
        let replayed = try await Self.post("\(url)/api/login/finish", #"{"code":"\#(cliCode)","code_verifier":"\#(verifier)"}"#)
        #expect(replayed.status == 400 && replayed.body.contains("used already"), "\(replayed)")

        let rows = try await served.killWithTheKeptToken()
        #expect(rows.count == 2, "\(rows)")
        #expect(
            rows.first?.hasPrefix("access-token.create|alice|plugboard login, signed in at console (oidc \(served.issuer)) from 127.0.0.1")
                == true, "\(rows)")
        #expect(rows.first?.contains("|alice/login-") == true, "\(rows)")
        #expect(rows.last?.hasPrefix("plugin.kill|alice|token login-") == true, "\(rows)")
        try await served.sandbox.ok("audit", "verify")
    }

    @Test(.enabled(if: enabled))
    func aCodeConfirmedInTheConsoleGivesTheCLIATokenOfThePerson() async throws {
        try #require(OIDCSignInProcessTests.installed, "oidc-provider-mock is not installed; .ci/run installs it")
        let served = try await OIDCServed.start()
        defer { served.kill() }
        let url = served.url

        // alice signs in to the console with the provider.
        let signedIn = try await served.browse("\(url)/ui/oidc/start")
        let session = try #require(OIDCSignInProcessTests.cookie("plugboard_console", in: signedIn.headers), "\(signedIn)")

        let cli = try ChildProcess(Sandbox.binary, ["login", url, "--device", "--expires", "2h"], environment: served.environment)
        let userCode: String = try await eventually("the CLI prints the code") {
            guard let range = cli.errorOutput.range(of: "enter the code ") else { return nil }
            let code = String(cli.errorOutput[range.upperBound...].prefix(9))
            return code.count == 9 ? code : nil
        }
        #expect(cli.errorOutput.contains("open \(url)/ui/device in a browser"), "\(cli.errorOutput)")
        #expect(userCode.allSatisfy { "BCDFGHJKLMNPQRSTVWXZ-".contains($0) } && userCode.dropFirst(4).first == "-", "\(userCode)")

        let page = try await Curl.run(["-H", "Cookie: \(session)", "\(url)/ui/device"])
        #expect(page.status == 200 && page.body.contains("acting as <strong>alice</strong>"), "\(page)")
        let csrf = try Self.csrf(page.body)
        func send(_ form: String) async throws -> (status: Int, headers: String, body: String) {
            try await Curl.run(["-X", "POST", "-H", "Cookie: \(session)", "--data", "csrf=\(csrf)&\(form)", "\(url)/ui/device"])
        }
        // A wrong code is refused; without the CSRF token nothing is answered.
        let wrong = try await send("user_code=BBBB-BBBB")
        #expect(wrong.status == 400 && wrong.body.contains("this code is not pending"), "\(wrong)")
        let forged = try await Curl.run([
            "-X", "POST", "-H", "Cookie: \(session)", "--data", "user_code=\(userCode)&decision=approve", "\(url)/ui/device",
        ])
        #expect(forged.status == 403, "\(forged.status)")
        // The code typed shows what approving gives; Approve answers the login.
        let shown = try await send("user_code=\(userCode.lowercased())")
        #expect(
            shown.status == 200 && shown.body.contains("Approve the CLI login \(userCode)?") && shown.body.contains("for 2 hours"),
            "\(shown)")
        let approved = try await send("user_code=\(userCode)&decision=approve")
        #expect(approved.status == 303, "\(approved)")
        let twice = try await send("user_code=\(userCode)&decision=approve")
        #expect(twice.status == 400, "\(twice.status)")

        #expect(await cli.waitForExit(timeout: .eventDeadline) != nil)
        #expect(await cli.stop() == 0, "\(cli.errorOutput)")
        #expect(cli.output.joined().contains("Logged in to \(url) as alice (token 'login-"), "\(cli.output)")
        let unknown = try await Self.post("\(url)/api/login/device/token", #"{"device_code":"not-a-device-code"}"#)
        #expect(unknown.status == 400 && unknown.body.contains("invalid_grant"), "\(unknown)")

        let rows = try await served.killWithTheKeptToken()
        #expect(rows.count == 2, "\(rows)")
        #expect(
            rows.first?.hasPrefix("access-token.create|alice|plugboard login, approved in console (oidc \(served.issuer))") == true,
            "\(rows)")
        #expect(rows.last?.hasPrefix("plugin.kill|alice|token login-") == true, "\(rows)")
        let expiry = try await served.sandbox.boardFile.strings("SELECT expires_at FROM access_tokens WHERE name LIKE 'login-%'")
        #expect(expiry.count == 1, "\(expiry)")
        try await served.sandbox.ok("audit", "verify")
    }
}

/// A board served with a real OpenID provider (oidc-provider-mock) and the real `plugboard serve`, the provider's
/// account `00u-alice` in the group `plugboard-admins`, which the board maps to its admins.
struct OIDCServed {
    let sandbox: Sandbox
    let mock: ChildProcess
    let server: ChildProcess
    let issuer: String
    let url: String
    var environment: [String: String] { ["XDG_CONFIG_HOME": sandbox.root.appendingPathComponent("config").path] }

    /// The provider says `00u-alice` is `name`; `options` are more of `serve`'s.
    static func start(name: String = "alice", options: [String] = []) async throws -> OIDCServed {
        let sandbox = try await Sandbox.withBoard([manifest(CLILoginProcessTests.alpha)])
        let mockPort = try freeLoopbackPort()
        let claims = #"{"sub":"00u-alice","preferred_username":"\#(name)","email":"alice@example.com","groups":["plugboard-admins"]}"#
        let mock = try ChildProcess(
            OIDCSignInProcessTests.mock,
            ["--port", "\(mockPort)", "--host", "127.0.0.1", "--require-nonce", "true", "--user-claims", claims])
        let issuer = "http://127.0.0.1:\(mockPort)"
        try await sandbox.ok("sso", "map-group", "plugboard-admins", "--issuer", issuer, "--role", "admin")
        let secret = try sandbox.write("oidc-secret", "not-a-real-secret\n")
        chmod(secret, 0o600)
        try await eventually("the provider answers its discovery document") {
            (try? await Curl.run(["\(issuer)/.well-known/openid-configuration"]))?.status == 200
        }
        let port = try freeLoopbackPort()
        let server = try ChildProcess(
            Sandbox.binary,
            [
                "serve", "--db", sandbox.board, "--admin", "--listen", "127.0.0.1:\(port)", "--log-level", "warning", "--oidc-issuer",
                issuer, "--oidc-client-id", "plugboard-console", "--oidc-client-secret-file", secret, "--oidc-groups-claim", "groups",
            ] + options)
        try #require(await server.waitForLine { $0.hasPrefix("Serving the board at") } != nil, "\(server.errorOutput)")
        return OIDCServed(sandbox: sandbox, mock: mock, server: server, issuer: issuer, url: "http://127.0.0.1:\(port)")
    }

    /// Stops the server and the provider at once, however the test ends (a Task left to stop them may not run before the
    /// test process exits).
    func kill() {
        _ = Glibc.kill(server.pid, SIGTERM)
        _ = Glibc.kill(mock.pid, SIGTERM)
    }

    /// Plays the browser from a console URL that starts the provider's sign-in to the console's answer to the
    /// provider's callback.
    func browse(_ start: String) async throws -> (status: Int, headers: String, body: String) {
        let started = try await Curl.run([start])
        #expect(started.status == 303, "\(started)")
        let binding = try #require(OIDCSignInProcessTests.cookie("plugboard_oidc", in: started.headers), "\(started.headers)")
        let callback = try await OIDCSignInProcessTests.authorize(
            try #require(OIDCSignInProcessTests.location(started.headers)), as: "00u-alice")
        return try await Curl.run(["-H", "Cookie: \(binding)", callback])
    }

    /// Kills alpha with the token the login kept; the audit row of the kill and of the token's creation.
    func killWithTheKeptToken() async throws -> [String] {
        let kill = try await sandbox.run(
            ["--server", url, "plugin", "kill", CLILoginProcessTests.alpha, "--reason", "INC-9"], db: false, environment: environment)
        #expect(kill.status == 0, "\(kill)")
        return try await sandbox.boardFile.strings(
            "SELECT action || '|' || actor || '|' || coalesce(via, '') || '|' || target_id FROM audit_log WHERE action IN ('access-token.create', 'plugin.kill') AND outcome = 'ok' ORDER BY seq"
        )
    }
}
