import Foundation
import PlugboardTestSupport
import Testing

/// `plugboard serve` as a process of its own, with the CLI changing the board from another process: the change
/// must reach a connected event stream, tokens must be checked, and SIGTERM must stop it cleanly.
@Suite("plugboard serve (processes)", .timeLimit(.hangGuard))
struct ServeProcessTests {
    /// Runs curl and returns (status code, body).
    static func curl(_ arguments: [String]) async throws -> (Int, String) {
        do {
            let text = try await Spawned.run("/usr/bin/curl", ["-s", "-w", "\n%{http_code}", "--max-time", "10"] + arguments).text.stdout
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
        }
    }

    /// Makes a self-signed certificate for 127.0.0.1 and its private key (PEM) with openssl.
    static func selfSigned(_ sandbox: Sandbox, key: String, certificate: String) throws {
        let openssl = try sandbox.runBlocking(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
                "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
            ], db: false, executable: "/usr/bin/openssl")
        #expect(openssl.status == 0, "\(openssl)")
    }

    /// Starts `plugboard serve` over TLS with `certificate` and `key`; answers it and its port.
    static func serveTLS(_ sandbox: Sandbox, certificate: String, key: String) async throws -> (ChildProcess, Int) {
        let server = try ChildProcess(
            Sandbox.binary,
            [
                "serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", key, "--log-level",
                "warning",
            ])
        return (server, try await server.servedPort(scheme: "https"))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func aCLIChangeReachesAConnectedStreamAndTokensAreChecked() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("flag", "create", "checkout.new-flow")
        try await sandbox.ok("flag", "create", "other.env", "--env", "staging")
        try await sandbox.ok("flag", "enable", "other.env", "--env", "staging")
        let created = try await sandbox.ok("token", "create", "--env", "default", "--name", "shop", "--json").json() as? [String: Any]
        let token = try #require(created?["token"] as? String)
        let server = try ChildProcess(
            Sandbox.binary, ["serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--log-level", "warning"])
        let port = try await server.servedPort()
        let base = "http://127.0.0.1:\(port)"

        #expect(try await Self.curl(["\(base)/api/client/features"]).0 == 401)
        #expect(try await Self.curl(["-H", "Authorization: *:default.pb_wrong", "\(base)/api/client/features"]).0 == 401)
        let forbidden = try await Self.curl(["-H", "Authorization: \(token)", "\(base)/api/client/features?environment=staging"])
        #expect(forbidden.0 == 403, "\(forbidden)")
        let (status, body) = try await Self.curl(["-H", "Authorization: \(token)", "\(base)/api/client/features"])
        #expect(status == 200 && body.contains("checkout.new-flow") && body.contains("other.env"), "\(status) \(body)")

        let stream = try ChildProcess("/usr/bin/curl", ["-sN", "-H", "Authorization: \(token)", "\(base)/api/client/streaming"])
        let hydrated = await stream.waitForLine { $0.contains(#""type":"hydration""#) }
        #expect(hydrated != nil, "no hydration event: \(stream.output)")
        let seen = stream.output.count
        let start = ContinuousClock.now
        try await sandbox.ok("flag", "enable", "checkout.new-flow")
        let updated = await stream.waitForLine(after: seen) {
            $0.contains(#""type":"feature-updated""#) && $0.contains("checkout.new-flow")
        }
        #expect(updated != nil, "the change did not reach the stream: \(stream.output)")
        // Informational: the CLI process's own run time is most of this.
        print("CLI change reached the stream \(ContinuousClock.now - start) after the CLI started")

        try await sandbox.ok("token", "revoke", "shop")
        // The server notices at its next board check (every 20 ms); a guard against hanging, not a measurement.
        try await eventually("the server to refuse the revoked token", poll: .milliseconds(50)) {
            try await Self.curl(["-H", "Authorization: \(token)", "\(base)/api/client/features"]).0 == 401
        }

        let exit = await server.stop()
        #expect(exit == 0, "serve did not stop cleanly on SIGTERM: \(server.errorOutput)")
        await stream.stop()
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
        ))
    func itServesHTTPSWithACertificate() async throws {
        let sandbox = try await Sandbox.withBoard()
        let certificate = sandbox.root.appendingPathComponent("cert.pem").path
        let key = sandbox.root.appendingPathComponent("key.pem").path
        try Self.selfSigned(sandbox, key: key, certificate: certificate)
        let created = try await sandbox.ok("token", "create", "--env", "default", "--name", "tls", "--json").json() as? [String: Any]
        let token = try #require(created?["token"] as? String)
        let (server, port) = try await Self.serveTLS(sandbox, certificate: certificate, key: key)
        let secure = try await Self.curl([
            "--cacert", certificate, "-H", "Authorization: \(token)", "https://127.0.0.1:\(port)/api/client/features",
        ])
        #expect(secure.0 == 200, "\(secure)")
        #expect(try await Self.curl(["http://127.0.0.1:\(port)/health"]).0 != 200, "plain HTTP must not be served on the TLS port")
        let exit = await server.stop()
        #expect(exit == 0, "\(server.errorOutput)")
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
        ))
    func aPEMKeyOfAnyNameServesAndABadKeyGetsASentenceAboutTheKey() async throws {
        let sandbox = try await Sandbox.withBoard()
        let certificate = sandbox.root.appendingPathComponent("server.crt").path
        let key = sandbox.root.appendingPathComponent("server.key").path
        try Self.selfSigned(sandbox, key: key, certificate: certificate)
        // A PEM key whose name ends in .key (as openssl and most guides name it) serves.
        let (server, port) = try await Self.serveTLS(sandbox, certificate: certificate, key: key)
        #expect(try await Self.curl(["--cacert", certificate, "https://127.0.0.1:\(port)/health"]).0 == 200)
        #expect(await server.stop() == 0, "\(server.errorOutput)")

        // A key file that holds no key, and the key of another certificate, each get a sentence about the key.
        let garbage = try sandbox.write("garbage.key", "not a key\n")
        let otherCertificate = sandbox.root.appendingPathComponent("other.crt").path
        let otherKey = sandbox.root.appendingPathComponent("other.pem").path
        try Self.selfSigned(sandbox, key: otherKey, certificate: otherCertificate)
        for (bad, sentence) in [
            (garbage, "--tls-key \(garbage) holds no private key that can be read (PEM or DER, not encrypted)"),
            (otherKey, "the private key in --tls-key \(otherKey) cannot be used with the certificate in --tls-cert \(certificate)"),
        ] {
            let refused = try await sandbox.run(
                ["serve", "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", bad, "--log-level", "warning"])
            #expect(refused.status != 0 && refused.stdout.isEmpty, "\(refused)")
            #expect(refused.stderr.contains(sentence), "\(refused.stderr)")
            #expect(!refused.stderr.contains("--listen") && !refused.stderr.contains("network"), "\(refused.stderr)")
        }
    }
}
