import Foundation
import PlugboardTestSupport
import Testing

/// The operations API as people use it: `plugboard serve --admin` in one process, the CLI with `--server` in others, hosts
/// in others again. The same commands must give the same answers as on the board file.
@Suite("the operations API and the CLI with --server (processes)", .timeLimit(.hangGuard), .serialized)
struct OperationsAPITests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let alpha = "com.example.alpha"

    /// A served board: the sandbox, `serve --admin` and its URL, and an access token of the OS user who made the board.
    struct Served {
        let sandbox: Sandbox
        let server: ChildProcess
        let url: String
        let token: String

        /// Runs the CLI against the served board with the token.
        func run(_ arguments: [String], token: String? = nil, stdin: String? = nil) async throws -> CLIResult {
            try await sandbox.run(
                ["--server", url] + arguments, db: false, environment: ["PLUGBOARD_TOKEN": token ?? self.token], stdin: stdin)
        }

        func stop() async { _ = await server.stop() }
    }

    static func serve(_ sandbox: Sandbox, options: [String] = [], scheme: String = "http") async throws -> Served {
        let token =
            try #require(
                try await sandbox.ok("access-token", "create", "--name", "tests", "--json").json() as? [String: Any])["token"] as? String
        let server = try ChildProcess(
            Sandbox.binary, ["serve", "--db", sandbox.board, "--admin", "--listen", "127.0.0.1:0", "--log-level", "warning"] + options)
        let port = try await server.servedPort(scheme: scheme)
        return Served(sandbox: sandbox, server: server, url: "\(scheme)://127.0.0.1:\(port)", token: try #require(token))
    }

    /// Runs curl; returns the status, the headers and the body.
    static func curl(_ arguments: [String]) async throws -> (status: Int, headers: String, body: String) {
        try await Curl.run(arguments)
    }

    /// What differs between two boards by nature: times, secrets, the sandboxes' paths, the size of their files.
    static func normalized(_ text: String, roots: [URL]) -> String {
        var text = text
        for root in roots { text = text.replacingOccurrences(of: root.path, with: "<root>") }
        let patterns = [
            (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#, "<time>"), (#"\d{4}-\d\d-\d\d"#, "<date>"),
            (#"\*:[a-z0-9-]+\.pb_[A-Za-z0-9_-]+"#, "<token>"), (#"pba_[A-Za-z0-9_-]+"#, "<access-token>"),
            (#"\*:[a-z0-9-]+\.pb_[A-Za-z0-9_-]{1,6}…"#, "<prefix>"), (#"[0-9a-f]{64}"#, "<hash>"),
            // A backup's size in pages: the served board also holds its access token's rows.
            (#"\(\d+ bytes\)"#, "(<size>)"),
        ]
        for (pattern, replacement) in patterns {
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return text
    }

    /// Runs each command of `story` on the board file of `local` and through `served`, and expects the same exit
    /// status, stdout and stderr (``normalized(_:roots:)``); returns both results by command line.
    @discardableResult
    static func runBothWays(_ story: [[String]], local: Sandbox, served: Served, roots: [URL]) async throws -> [String: (
        file: CLIResult, served: CLIResult
    )] {
        var results: [String: (file: CLIResult, served: CLIResult)] = [:]
        for command in story {
            let viaFile = try await local.run(command)
            let viaServer = try await served.run(command)
            let what = "plugboard \(command.joined(separator: " "))"
            results[what] = (viaFile, viaServer)
            #expect(
                viaFile.status == viaServer.status, "\(what): exit \(viaFile.status) on the file, \(viaServer.status) served\n\(viaServer)")
            #expect(
                normalized(viaFile.stdout, roots: roots) == normalized(viaServer.stdout, roots: roots),
                "\(what): stdout differs\nfile: \(viaFile.stdout)\nserved: \(viaServer.stdout)")
            #expect(
                normalized(viaFile.stderr, roots: roots) == normalized(viaServer.stderr, roots: roots),
                "\(what): stderr differs\nfile: \(viaFile.stderr)\nserved: \(viaServer.stderr)")
        }
        return results
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func theOperatorStoryGivesTheSameOutputThroughTheServerAsOnTheBoardFile() async throws {
        let local = try await Sandbox.withBoard()
        let remote = try await Sandbox.withBoard()
        let served = try await Self.serve(remote)
        defer { Task { await served.stop() } }
        // The served board got an access token: so does the board file, so that both hold the same rows.
        try await local.ok("access-token", "create", "--name", "tests")

        // The same inputs on both sides: a manifest, an artifact, a signing key and a signature of the release.
        let files = try Sandbox()
        let manifestPath = try files.write("alpha.json", manifest(Self.alpha, "1.0.0", #""description":"Alpha""#))
        let beta = try files.write("beta.json", manifest("com.example.beta", "2.0.0"))
        let artifact = try files.write("alpha.so", String(repeating: "plug-in code ", count: 50_000))
        let key = files.root.appendingPathComponent("release.key").path
        let generated = try await files.run(["signing-key", "generate", "--out", key, "--json"], db: false)
        #expect(generated.status == 0, "\(generated)")
        let publicKey = try #require((try generated.json() as? [String: Any])?["publicKey"] as? String)
        let signature = files.root.appendingPathComponent("alpha.sig").path
        let signed = try await files.run(
            ["plugin", "sign", manifestPath, "--artifact", artifact, "--key", key, "--out", signature], db: false)
        #expect(signed.status == 0, "\(signed)")
        let features = try files.write(
            "features.json", #"{"version":2,"features":[{"name":"imported.flag","enabled":true,"strategies":[{"name":"default"}]}]}"#)

        let story: [[String]] = [
            ["plugin", "register", manifestPath, "--artifact", artifact, "--signature", signature],
            ["plugin", "register", beta], ["plugin", "register", beta],
            ["plugin", "list"], ["plugin", "list", "--json"], ["plugin", "enable", Self.alpha], ["plugin", "enable", Self.alpha],
            ["plugin", "show", Self.alpha], ["plugin", "show", Self.alpha, "--json"], ["plugin", "show", "com.example.missing"],
            ["plugin", "pin", Self.alpha, "1.0.0"], ["plugin", "unpin", Self.alpha],
            ["plugin", "yank", "com.example.beta", "2.0.0", "--reason", "broken"], ["plugin", "unyank", "com.example.beta", "2.0.0"],
            ["plugin", "kill", Self.alpha, "--reason", "INC-42"], ["plugin", "kill", "com.example.missing", "--reason", "x"],
            ["plugin", "revive", Self.alpha, "--reason", "fixed"], ["plugin", "disable", "com.example.beta"],
            ["owner", "add", Self.alpha, "alice", "--role", "maintainer"], ["owner", "list", Self.alpha],
            ["owner", "list", Self.alpha, "--json"], ["owner", "remove", Self.alpha, "alice"], ["admin", "list"],
            ["admin", "add", "alice"], ["admin", "remove", "alice"], ["admin", "add", "plugboard/anything"],
            ["flag", "create", "checkout.new-flow", "--description", "New checkout"], ["flag", "enable", "checkout.new-flow"],
            ["flag", "rollout", "checkout.new-flow", "25"], ["flag", "list"], ["flag", "show", "checkout.new-flow"],
            ["flag", "show", "checkout.new-flow", "--json"], ["flag", "archive", "checkout.new-flow"],
            ["flag", "unarchive", "checkout.new-flow"], ["flag", "import", features], ["flag", "export"],
            ["flag", "create", "ops.breaker", "--type", "kill-switch"], ["flag", "rollout", "ops.breaker", "30", "--stickiness", "userId"],
            ["flag", "disable", "checkout.new-flow"], ["flag", "list", "--stale"], ["flag", "list", "--unused", "7", "--json"],
            ["flag", "show", "no.such.flag"], ["secret", "list", "--plugin", Self.alpha, "--json"],
            ["policy", "set", "--signatures", "warn"], ["policy", "show"],
            ["signer", "add", Self.alpha, publicKey, "--name", "release"], ["signer", "list"], ["signer", "list", "--json"],
            ["signer", "list", Self.alpha], ["policy", "list", "--json"],
            ["plugin", "add-signature", Self.alpha, "1.0.0", signature],
            ["token", "create", "--name", "shop"], ["token", "list"], ["token", "revoke", "shop"], ["token", "revoke", "shop"],
            ["plugin", "status"], ["plugin", "status", Self.alpha, "--json"], ["env", "list"], ["clients"],
            ["secret", "list", "--plugin", Self.alpha], ["audit", "verify"], ["audit", "verify", "--json"],
            ["backup", "--to", files.root.appendingPathComponent("backup.sqlite").path],
        ]
        try await Self.runBothWays(story, local: local, served: served, roots: [local.root, remote.root, files.root])

        // The audit log of one board reads the same through the server as from its file (the two boards' logs differ:
        // one says how each change arrived).
        for command in [
            ["audit"], ["audit", "--json"], ["audit", "--target", Self.alpha, "--limit", "3"], ["audit", "--actor", "nobody"],
        ] {
            let fromFile = try await remote.run(command)
            let throughServer = try await served.run(command)
            #expect(
                fromFile.status == throughServer.status && fromFile.stdout == throughServer.stdout
                    && fromFile.stderr == throughServer.stderr,
                "plugboard \(command.joined(separator: " ")): \(fromFile) / \(throughServer)")
        }

        // Changes made through the API are the person's, with the token and the client's address.
        let rows = try await remote.ok("audit", "--target", Self.alpha, "--json").stdout.split(separator: "\n")
        let kill = try #require(
            rows.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.first {
                $0["action"] as? String == "plugin.kill"
            })
        #expect(kill["via"] as? String == "token tests from 127.0.0.1", "\(kill)")
        let actor = try #require(kill["actor"] as? String)
        let byActor = try await remote.ok("audit", "--actor", actor, "--target", Self.alpha).stdout
        #expect(byActor.contains("plugin.kill") && byActor.contains("via token tests from 127.0.0.1"), "\(byActor)")
        let verified = try await remote.ok("audit", "verify").stdout
        #expect(verified.contains("The audit log is intact"), "\(verified)")
        // The uploaded artifact reached the store; nothing is left in the upload folder.
        let shown = try #require(try await remote.ok("plugin", "show", Self.alpha, "--json").json() as? [String: Any])
        let version = try #require((shown["versions"] as? [[String: Any]])?.first)
        #expect((version["artifact_sha256"] as? String)?.count == 64)
        let uploads = (try? FileManager.default.contentsOfDirectory(atPath: remote.board + ".uploads")) ?? []
        #expect(uploads.isEmpty, "\(uploads)")

        // The backup downloaded last is the served board's, and verifies.
        let backup = try await files.run(["audit", "verify", "--db", files.root.appendingPathComponent("backup.sqlite").path], db: false)
        #expect(backup.status == 0 && backup.stdout.contains("intact"), "\(backup)")
        #expect(files.mode(files.root.appendingPathComponent("backup.sqlite").path) == 0o600)

        // What stays on the board's machine says so, as a usage error.
        for command in [
            ["secret", "get", "--plugin", Self.alpha, "k"], ["keys", "list"], ["init"], ["migrate"], ["restore", "--from", "x"],
        ] {
            let refused = try await served.run(command)
            #expect(refused.status == 2, "plugboard \(command.joined(separator: " ")) --server: \(refused)")
            #expect(refused.stderr.hasPrefix("error: plugboard ") && refused.stderr.contains("cannot run with --server"), "\(refused)")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func tokensAreCheckedOnEveryRequest() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await Self.serve(sandbox)
        defer { Task { await served.stop() } }
        let created = try #require(
            try await sandbox.ok("access-token", "create", "--name", "viewer", "--read-only", "--json").json() as? [String: Any])
        let readOnly = try #require(created["token"] as? String)

        // A read-only token reads, and is refused every change with a sentence; nothing changes.
        #expect(try await served.run(["plugin", "list"], token: readOnly).status == 0)
        let refused = try await served.run(["plugin", "kill", Self.alpha, "--reason", "x"], token: readOnly)
        #expect(refused.status == 1 && refused.stderr.contains("is read-only"), "\(refused)")
        #expect(try await sandbox.ok("plugin", "list", "--json").stdout.contains("\"killed\" : false"))

        // Revoked through the API itself: refused from the next request.
        #expect(try await served.run(["access-token", "revoke", "viewer"]).status == 0)
        let afterRevoke = try await served.run(["plugin", "list"], token: readOnly)
        #expect(afterRevoke.status == 1 && afterRevoke.stderr.contains("was revoked"), "\(afterRevoke)")

        // An unknown token, a missing one; the secret never appears in the server's log.
        let unknown = try await served.run(["plugin", "list"], token: "pba_notarealtoken")
        #expect(unknown.status == 1 && unknown.stderr.contains("not known"), "\(unknown)")
        let none = try await Self.curl(["-X", "POST", "-d", #"{"env":"default"}"#, "\(served.url)/api/admin/plugin.list"])
        #expect(none.status == 401 && none.headers.lowercased().contains("www-authenticate: bearer"), "\(none)")
        #expect(!served.server.errorOutput.contains(served.token) && !served.server.errorOutput.contains(readOnly))

        // Bodies are bounded.
        let big = try files(sandbox, "big.json", "{\"name\":\"" + String(repeating: "x", count: 2 << 20) + "\"}")
        let tooLarge = try await Self.curl([
            "-X", "POST", "-H", "Authorization: Bearer \(served.token)", "-H", "Content-Type: application/json", "--data-binary", "@\(big)",
            "\(served.url)/api/admin/flag.create",
        ])
        #expect(tooLarge.status == 413, "\(tooLarge.status) \(tooLarge.body)")
    }

    func files(_ sandbox: Sandbox, _ name: String, _ text: String) throws -> String { try sandbox.write(name, text) }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func failedLoginsFromOneAddressDoNotHoldUpAnother() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await Self.serve(sandbox)
        defer { Task { await served.stop() } }
        // 1,000 wrong tokens from 127.0.0.1 while another client, from 127.0.0.2, reads with a good one.
        let script = """
            import http.client, sys, threading, json
            host, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            flood = {}
            def attack():
                c = http.client.HTTPConnection(host, port, timeout=120, source_address=("127.0.0.1", 0))
                for i in range(1000):
                    c.request("POST", "/api/admin/plugin.list", body='{"env":"default"}', headers={"Authorization": "Bearer pba_guess%d" % i})
                    r = c.getresponse(); r.read()
                    flood[r.status] = flood.get(r.status, 0) + 1
                    if r.status == 429: flood["retry_after"] = r.getheader("Retry-After")
            t = threading.Thread(target=attack); t.start()
            good = {}
            c = http.client.HTTPConnection(host, port, timeout=120, source_address=("127.0.0.2", 0))
            for i in range(100):
                c.request("POST", "/api/admin/plugin.list", body='{"env":"default"}', headers={"Authorization": "Bearer " + token})
                r = c.getresponse(); r.read()
                good[r.status] = good.get(r.status, 0) + 1
            t.join()
            print(json.dumps({"flood": {str(k): v for k, v in flood.items()}, "good": {str(k): v for k, v in good.items()}}))
            """
        let path = try sandbox.write("flood.py", script)
        let port = String(served.url.split(separator: ":").last ?? "")
        let result = try await Spawned.run("/usr/bin/python3", [path, "127.0.0.1", port, served.token]).text.stdout
        let counts = try #require(try JSONSerialization.jsonObject(with: Data(result.utf8)) as? [String: [String: Any]], "\(result)")
        #expect(counts["good"]?["200"] as? Int == 100, "the other client was refused: \(result)")
        #expect((counts["flood"]?["429"] as? Int ?? 0) > 900, "failed logins were not limited: \(result)")
        #expect((counts["flood"]?["401"] as? Int ?? 0) <= 20, "\(result)")
        #expect(Int(counts["flood"]?["retry_after"] as? String ?? "") ?? 0 >= 1, "\(result)")
    }

    @Test func aKillSwitchMadeRemotelyReachesARunningHost() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        try await sandbox.ok("plugin", "enable", Self.alpha)
        let served = try await Self.serve(sandbox)
        defer { Task { await served.stop() } }
        // A host of the board file, and a host on another machine that reads the board through the same server.
        let hostsToken = try await sandbox.hostsToken()
        let boardKey = try await sandbox.boardKey()
        let local = try ChildProcess(Self.hostBinary, ["--db", sandbox.board, "--plugins", Self.alpha, "--poll-ms", "50"])
        let remote = try ChildProcess(
            Self.hostBinary,
            [
                "--server", served.url, "--token", hostsToken, "--board-key", boardKey, "--cache",
                sandbox.root.appendingPathComponent("cache").path, "--host-id", "remote-1", "--plugins", Self.alpha,
            ])
        let loaded = { (line: String) in line.contains("\"event\":\"loaded\"") && line.contains(Self.alpha) }
        for host in [local, remote] { #expect(await host.waitForLine(loaded) != nil, "\(host.output) \(host.errorOutput)") }
        let seen = [local.output.count, remote.output.count]
        let killed = try await served.run(["plugin", "kill", Self.alpha, "--reason", "INC-7"])
        #expect(killed.status == 0, "\(killed)")
        for (host, after) in zip([local, remote], seen) {
            let deactivated = await host.waitForLine(after: after) {
                $0.contains("\"event\":\"deactivated\"") && $0.contains(Self.alpha) && $0.contains("killed")
            }
            #expect(deactivated != nil, "the host did not deactivate the plug-in: \(host.output.suffix(5))")
            #expect(await host.closeInput() == 0)
        }
    }

    @Test func loginKeepsTheTokenInAPrivateFileAndLogoutForgetsIt() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let served = try await Self.serve(sandbox)
        defer { Task { await served.stop() } }
        let config = sandbox.root.appendingPathComponent("config").path
        let environment = ["XDG_CONFIG_HOME": config]
        let login = try await sandbox.run(["login", served.url], db: false, environment: environment, stdin: served.token + "\n")
        #expect(login.status == 0 && login.stdout.contains("Logged in to"), "\(login)")
        #expect(!login.stdout.contains(served.token) && !login.stderr.contains(served.token))
        let file = config + "/plugboard/credentials.json"
        #expect(sandbox.mode(file) == 0o600)
        #expect(sandbox.mode(config + "/plugboard") == 0o700)
        let listed = try await sandbox.run(
            ["plugin", "list"], db: false, environment: environment.merging(["PLUGBOARD_SERVER": served.url]) { $1 })
        #expect(listed.status == 0 && listed.stdout.contains(Self.alpha), "\(listed)")
        let bad = try await sandbox.run(["login", served.url], db: false, environment: environment, stdin: "pba_wrong\n")
        #expect(bad.status == 1 && bad.stderr.contains("not known"), "\(bad)")
        let logout = try await sandbox.run(["logout", served.url], db: false, environment: environment)
        #expect(logout.status == 0, "\(logout)")
        let after = try await sandbox.run(["--server", served.url, "plugin", "list"], db: false, environment: environment)
        #expect(after.status == 1 && after.stderr.contains("no access token"), "\(after)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func theServedDocumentIsTheOneInTheRepositoryAndEveryOperationInItIsServed() async throws {
        let sandbox = try await Sandbox.withBoard()
        let served = try await Self.serve(sandbox)
        defer { Task { await served.stop() } }
        let document = try await Self.curl(["\(served.url)/api/admin/openapi.yaml"])
        #expect(document.status == 200)
        let committed = try String(contentsOfFile: Self.repository + "/docs/admin-openapi.yaml", encoding: .utf8)
        #expect(
            document.body == committed,
            "docs/admin-openapi.yaml is not what the server serves; regenerate it with: plugboard serve --print-openapi > docs/admin-openapi.yaml"
        )
        // Every operation the document lists is routed: without a token each gets the API's own refusal, never a 404.
        var path = ""
        var operations: [(String, String)] = []
        for line in document.body.split(separator: "\n") {
            if line.hasPrefix("  /") && line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()) }
            for method in ["get", "put", "post", "delete"] where line == "    \(method):" && !path.isEmpty {
                operations.append((method.uppercased(), path))
            }
        }
        #expect(operations.count >= 40, "\(operations.count) operations")
        for (method, template) in operations {
            let concrete = template.replacingOccurrences(of: #"\{[a-z_0-9]+\}"#, with: "x", options: .regularExpression)
            let answer = try await Self.curl(["-X", method, "\(served.url)/api/admin\(concrete)"])
            #expect(
                answer.status == 401 && answer.body.contains("\"error\":\"notAllowed\""),
                "\(method) \(template): \(answer.status) \(answer.body)")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func overHTTPSTheCLITrustsTheCertificatesOfPLUGBOARD_CA_FILE() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        let certificate = sandbox.root.appendingPathComponent("cert.pem").path
        let key = sandbox.root.appendingPathComponent("key.pem").path
        let openssl = try await sandbox.run(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
                "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
            ], db: false, executable: "/usr/bin/openssl")
        #expect(openssl.status == 0, "\(openssl)")
        let served = try await Self.serve(sandbox, options: ["--tls-cert", certificate, "--tls-key", key], scheme: "https")
        defer { Task { await served.stop() } }
        let untrusted = try await served.run(["plugin", "list"])
        #expect(untrusted.status == 1 && untrusted.stderr.contains("TLS"), "\(untrusted)")
        let trusted = try await sandbox.run(
            ["--server", served.url, "plugin", "list"], db: false,
            environment: ["PLUGBOARD_TOKEN": served.token, "PLUGBOARD_CA_FILE": certificate])
        #expect(trusted.status == 0 && trusted.stdout.contains(Self.alpha), "\(trusted)")
    }

    /// The repository's root, from this file's path.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
}
