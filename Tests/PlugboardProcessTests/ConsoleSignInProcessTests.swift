import Foundation
import PlugboardTestSupport
import Testing

/// The console's sign-in against the real `plugboard serve --admin`, with curl as the browser or the attacker: a page on
/// another port of the same host, or a client that says nowhere it comes from, cannot sign a victim in; a flood of
/// sign-ins with one role-less read-only token ends no admin's session and keeps no more than that token's share.
@Suite("the console's sign-in (processes)", .timeLimit(.hangGuard))
struct ConsoleSignInProcessTests {
    /// The sign-in page's form: its CSRF token and the pre-session cookie its page sets.
    static func signInForm(_ url: String) async throws -> (csrf: String, cookie: String) {
        let page = try await Curl.run(["\(url)/ui/sign-in"])
        #expect(page.status == 200, "\(page)")
        let setCookie = try #require(page.headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") })
        let cookie = String(setCookie.dropFirst("set-cookie:".count).trimmingCharacters(in: .whitespaces).prefix { $0 != ";" })
        let marker = #"name="csrf" value=""#
        let start = try #require(page.body.range(of: marker)).upperBound
        return (String(page.body[start...].prefix { $0 != "\"" }), cookie)
    }

    /// Posts the sign-in form of `token` with `headers` (an `Origin`, a `Referer`, or none).
    static func postSignIn(
        _ url: String, _ token: String, form: (csrf: String, cookie: String), headers: [String]
    ) async throws -> (status: Int, headers: String, body: String) {
        try await Curl.run(
            ["-X", "POST", "-H", "Cookie: \(form.cookie)", "--data", "token=\(token)&csrf=\(form.csrf)"]
                + headers.flatMap { ["-H", $0] } + ["\(url)/ui/sign-in"])
    }

    /// The session cookie a sign-in answered with.
    static func sessionCookie(_ headers: String) -> String? {
        headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie: plugboard_console=") }
            .map { String($0.dropFirst("set-cookie: ".count).prefix { $0 != ";" }) }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func aPageOnAnotherPortOrAClientWithoutOriginCannotSignAVictimIn() async throws {
        let (served, mallory) = try await AccessTokenLimitsTests().serveWithNobody()
        let url = served.url
        let port = try #require(url.split(separator: ":").last)
        // The attacker's own form, sent by the victim's browser from a page on another port of the same host.
        let form = try await Self.signInForm(url)
        let otherPort = try await Self.postSignIn(url, mallory, form: form, headers: ["Origin: http://127.0.0.1:8081"])
        #expect(otherPort.status == 403 && Self.sessionCookie(otherPort.headers) == nil, "\(otherPort)")
        #expect(
            otherPort.body.contains(
                "a sign-in must come from the console&#39;s own page at http://127.0.0.1:\(port), not from http://127.0.0.1:8081"),
            "\(otherPort.body)")
        let silent = try await Self.postSignIn(url, mallory, form: form, headers: [])
        #expect(silent.status == 403 && Self.sessionCookie(silent.headers) == nil, "\(silent)")
        #expect(silent.body.contains("a sign-in must say which page it comes from (Origin or Referer"), "\(silent.body)")
        // A cookie planted with a value of the attacker's choosing, submitted twice, is not the server's token.
        let chosen = String(repeating: "A", count: 43)
        let planted = try await Self.postSignIn(
            url, mallory, form: (chosen, "plugboard_console_signin=\(chosen)"), headers: ["Origin: \(url)"])
        #expect(planted.status == 403 && Self.sessionCookie(planted.headers) == nil, "\(planted)")
        // The console's own page signs in.
        let own = try await Self.postSignIn(url, mallory, form: form, headers: ["Origin: \(url)"])
        #expect(own.status == 303 && Self.sessionCookie(own.headers) != nil, "\(own)")
        #expect(await served.server.stop() == 0)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func aFloodOfSignInsWithOneRolelessReadOnlyTokenEndsNoAdminsSession() async throws {
        let (served, _) = try await AccessTokenLimitsTests().serveWithNobody()
        let sandbox = served.sandbox
        let flood = try #require(
            (try await sandbox.ok("access-token", "create", "--principal", "mallory", "--name", "flood", "--read-only", "--json").json()
                as? [String: Any])?["token"] as? String)
        let url = served.url
        let admin = try #require(
            Self.sessionCookie(
                try await Self.postSignIn(url, served.token, form: try await Self.signInForm(url), headers: ["Origin: \(url)"]).headers))
        let rssBefore = Self.residentKiB(served.server.pid)

        // 3,000 sign-ins with one form, over one kept-alive connection.
        let form = try await Self.signInForm(url)
        let count = 3000
        let block = """
            url = "\(url)/ui/sign-in"
            header = "Origin: \(url)"
            header = "Cookie: \(form.cookie)"
            data = "token=\(flood)&csrf=\(form.csrf)"
            output = "/dev/null"
            write-out = "%{http_code}\\n"

            """
        let config = try sandbox.write("flood.curl", Array(repeating: block, count: count).joined(separator: "next\n"))
        let started = ContinuousClock.now
        let curl = try ChildProcess("/usr/bin/curl", ["-s", "-K", config])
        let ended = try #require(await curl.waitForExit(timeout: .eventDeadline), "the flood did not end")
        let statuses = Dictionary(grouping: curl.output.filter { !$0.isEmpty }, by: { $0 }).mapValues(\.count)
        // Ten sign-ins a minute with one token; the rest are refused (429) before any session is made.
        let minutes = Int((ended - started).components.seconds / 60) + 1
        #expect((1...10 * minutes).contains(statuses["303"] ?? 0), "\(statuses)")
        #expect((statuses["303"] ?? 0) + (statuses["429"] ?? 0) == count, "\(statuses)")

        // The admin's session still works; the server kept at most the flooding token's share of sessions.
        let page = try await Curl.run(["-H", "Cookie: \(admin)", "\(url)/ui/"])
        #expect(page.status == 200, "the admin's session ended: \(page.status) \(page.headers)")
        let rssAfter = Self.residentKiB(served.server.pid)
        if let rssBefore, let rssAfter {
            #expect(rssAfter - rssBefore < 64 << 10, "the server grew from \(rssBefore) KiB to \(rssAfter) KiB")
        }
        #expect(await served.server.stop() == 0)
    }

    /// A process's resident set, in KiB (`VmRSS` of `/proc/PID/status`).
    static func residentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: ReverseProxyTests.nginx) || ReverseProxyTests.isCI))
    func behindTheDocumentedProxyTheConsolesOwnPageSignsInAndAnotherPortDoesNot() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: ReverseProxyTests.nginx), "nginx is not installed")
        let (served, mallory) = try await AccessTokenLimitsTests().serveWithNobody()
        let sandbox = served.sandbox
        let upstream = try #require(Int(served.url.split(separator: ":").last ?? ""))
        let port = try ReverseProxyTests.freePort()
        let folder = sandbox.root.appendingPathComponent("nginx").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let conf = try sandbox.write(
            "nginx/nginx.conf", try ReverseProxyTests.configuration(upstream: upstream, listen: port, folder: folder))
        let proxy = try ChildProcess(ReverseProxyTests.nginx, ["-c", conf, "-p", folder])
        let url = "http://127.0.0.1:\(port)"
        try await eventually("nginx to come up", poll: .milliseconds(50)) {
            (try? await ServeProcessTests.curl(["\(url)/health"]).0) == 200
        }
        // nginx sends the server Host 127.0.0.1 without the port; the console's origin is the one the browser used.
        let form = try await Self.signInForm(url)
        let own = try await Self.postSignIn(url, mallory, form: form, headers: ["Origin: \(url)"])
        #expect(own.status == 303 && Self.sessionCookie(own.headers) != nil, "\(own)")
        let otherPort = try await Self.postSignIn(url, mallory, form: form, headers: ["Origin: http://127.0.0.1:\(upstream)"])
        #expect(otherPort.status == 403 && Self.sessionCookie(otherPort.headers) == nil, "\(otherPort)")
        _ = await proxy.stop(signal: SIGKILL)  // nginx without a master process does not stop on SIGTERM
        #expect(await served.server.stop() == 0)
    }
}
