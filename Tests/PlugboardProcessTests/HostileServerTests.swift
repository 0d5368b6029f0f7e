import Foundation
import PlugboardTestSupport
import Testing

/// The CLI with `--server` against a server that is not `plugboard serve`, or one that lies: what it sends reaches the
/// terminal escaped, a backup it sends is verified here before the CLI says so, and an answer it trickles ends at the
/// deadline of the whole request.
@Suite("the CLI against a hostile server (processes)", .timeLimit(.hangGuard), .serialized)
struct HostileServerTests {
    /// A small HTTP server in Python that answers every request as `mode` says, and prints `listening PORT`.
    static let script = #"""
        import hashlib, http.server, json, sys, time, urllib.parse
        mode, payload = sys.argv[1], (open(sys.argv[2], "rb").read() if len(sys.argv) > 2 else b"")

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def do_GET(self):
                if mode == "refuse":
                    body = json.dumps({"error": "notAllowed", "message": "no \x1b[2J\x1b[31mred\u202eevil"}).encode()
                    self.send_response(403)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif mode == "backup":
                    description = {"board": "/srv/\x1b[31mboard.sqlite", "seq": 7, "hash": "0" * 64, "state_root": None,
                                   "size": len(payload), "time": "2026-01-01T00:00:00Z",
                                   "sha256": hashlib.sha256(payload).hexdigest(), "not_in_backup": []}
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(payload)))
                    self.send_header("Plugboard-Backup", urllib.parse.quote(json.dumps(description), safe=" "))
                    self.end_headers()
                    self.wfile.write(payload)
                else:  # trickle: a head at once, then one byte a second for a minute
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "60")
                    self.end_headers()
                    for _ in range(60):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(1)
            do_POST = do_GET

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print("listening", server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// Starts the server in `mode`; returns it and its URL.
    static func start(_ sandbox: Sandbox, _ mode: String, payload: String? = nil) async throws -> (ChildProcess, String) {
        let path = try sandbox.write("hostile_server.py", script)
        let server = try ChildProcess("/usr/bin/env", ["python3", path, mode] + (payload.map { [$0] } ?? []))
        let index = try #require(await server.waitForLine { $0.hasPrefix("listening ") }, "\(server.errorOutput)")
        return (server, "http://127.0.0.1:\(server.output[index].dropFirst("listening ".count))")
    }

    @Test func whatAServerSaysReachesTheTerminalEscaped() async throws {
        let sandbox = try Sandbox()
        let (server, url) = try await Self.start(sandbox, "refuse")
        let result = try await sandbox.run(["--server", url, "plugin", "list"], db: false, environment: ["PLUGBOARD_TOKEN": "pba_x"])
        #expect(result.status == 1, "\(result)")
        #expect(!result.stderr.utf8.contains(0x1B), "a raw escape reached the terminal: \(result.stderr)")
        #expect(!result.stderr.unicodeScalars.contains("\u{202E}"), "\(result.stderr)")
        #expect(result.stderr.contains("no \\u{1b}[2J\\u{1b}[31mred\\u{202e}evil"), "\(result.stderr)")
        _ = await server.stop(signal: SIGKILL)
    }

    @Test func aDownloadedBackupThatIsNotABoardIsNotCalledVerified() async throws {
        let sandbox = try Sandbox()
        let notABoard = try sandbox.write("not-a-board", String(repeating: "not a board, but bytes the server sends\n", count: 200))
        let (server, url) = try await Self.start(sandbox, "backup", payload: notABoard)
        let destination = sandbox.root.appendingPathComponent("backup.sqlite").path
        let result = try await sandbox.run(
            ["--server", url, "backup", "--to", destination], db: false, environment: ["PLUGBOARD_TOKEN": "pba_x"])
        #expect(result.status == 1, "\(result)")
        #expect(!result.stdout.contains("verified"), "\(result)")
        #expect(result.stderr.contains("the backup downloaded from \(url)"), "\(result.stderr)")
        #expect(!result.stderr.utf8.contains(0x1B), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: destination), "nothing is written for a backup that does not verify")
        let left = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).filter { $0.hasPrefix("backup.sqlite") }
        #expect(left.isEmpty, "the download's temporary files are removed: \(left)")
        _ = await server.stop(signal: SIGKILL)
    }

    @Test func anAnswerTrickledAByteAtATimeEndsAtTheDeadlineOfTheWholeRequest() async throws {
        let sandbox = try Sandbox()
        let (server, url) = try await Self.start(sandbox, "trickle")
        let started = ContinuousClock.now
        let result = try await sandbox.run(
            ["--server", url, "plugin", "list"], db: false, environment: ["PLUGBOARD_TOKEN": "pba_x", "PLUGBOARD_TIMEOUT": "3"])
        let took = ContinuousClock.now - started
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("did not answer within 3 seconds"), "\(result.stderr)")
        // The server trickles for a minute; a deadline that restarts with every byte would wait all of it.
        #expect(took < .seconds(45), "the CLI waited \(took)")
        _ = await server.stop(signal: SIGKILL)
    }
}
