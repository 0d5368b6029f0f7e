import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A signed advisory feed published by one board's CLI, hosted by a static file server in a process of its own, and
/// taken in by another board: by `plugboard serve`, and once by `plugboard advisory feed fetch`; a forged feed, a slow
/// server and a 100 MB answer are refused with a sentence and change nothing.
@Suite("advisory feeds published and subscribed to (processes)", .timeLimit(.hangGuard), .serialized)
struct AdvisoryFeedProcessTests {
    /// An HTTP server in Python: `files FOLDER` serves the folder's files as they are at each request; `slow` sends a
    /// head, then a byte a second; `huge` sends 100 MB without a length. Prints `listening PORT`.
    static let script = #"""
        import http.server, os, sys, time
        mode = sys.argv[1]

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"
            def log_message(self, *args): pass
            def do_GET(self):
                try:
                    if mode == "files":
                        path = os.path.join(sys.argv[2], os.path.basename(self.path))
                        if not os.path.isfile(path):
                            self.send_error(404)
                            return
                        body = open(path, "rb").read()
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(body)))
                        self.end_headers()
                        self.wfile.write(body)
                    elif mode == "slow":
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.end_headers()
                        for _ in range(120):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                            time.sleep(1)
                    else:
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.end_headers()
                        chunk = b" " * (1 << 20)
                        for _ in range(100):
                            self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print("listening", server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// Starts the server in `mode`; returns it and its base URL.
    static func start(_ sandbox: Sandbox, _ mode: String, _ arguments: [String] = []) async throws -> (ChildProcess, String) {
        let path = try sandbox.write("feed_server.py", script)
        let server = try ChildProcess("/usr/bin/env", ["python3", path, mode] + arguments)
        let index = try #require(await server.waitForLine { $0.hasPrefix("listening ") }, "\(server.errorOutput)")
        return (server, "http://127.0.0.1:\(server.output[index].dropFirst("listening ".count))")
    }

    /// A publisher's board in `sandbox` with the fixtures' advisories, a key file, and the feed published to
    /// `FOLDER/feed.json`; answers the folder, the key file and its public key.
    static func publish(_ sandbox: Sandbox) async throws -> (folder: String, key: String, publicKey: String) {
        let publisher = sandbox.root.appendingPathComponent("publisher.sqlite").path
        let folder = sandbox.root.appendingPathComponent("site").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let key = sandbox.root.appendingPathComponent("feed.key").path
        for arguments in [["init"], ["advisory", "import", AdvisoryFixtures.folder]] {
            let result = try await sandbox.run(arguments + ["--db", publisher], db: false)
            #expect(result.status == 0, "\(result)")
        }
        let generated = try await sandbox.run(["signing-key", "generate", "--out", key, "--json"], db: false)
        let publicKey = try #require((try generated.json() as? [String: Any])?["publicKey"] as? String, "\(generated)")
        let published = try await sandbox.run(
            ["advisory", "feed", "publish", "--key", key, "--out", folder + "/feed.json", "--expires", "7d", "--db", publisher], db: false)
        #expect(published.status == 0 && published.stdout.contains("4 advisories"), "\(published)")
        #expect(published.stderr.isEmpty, "\(published)")
        return (folder, key, publicKey)
    }

    /// The ids of the subscriber's advisories.
    static func advisories(_ sandbox: Sandbox) async throws -> [String] {
        let listed = try await sandbox.ok("advisory", "list", "--json").json() as? [[String: Any]] ?? []
        return listed.compactMap { $0["id"] as? String }.sorted()
    }

    @Test func serveImportsASubscribedFeedAsTheFeedAndFetchRefusesAForgedOne() async throws {
        let sandbox = try await Sandbox.withBoard()
        let (folder, _, publicKey) = try await Self.publish(sandbox)
        let (files, url) = try await Self.start(sandbox, "files", [folder])
        let subscribed = try await sandbox.ok("advisory", "feed", "subscribe", url + "/feed.json", "--key", publicKey, "--name", "vendor")
        #expect(subscribed.stdout.contains("Subscribed to the feed vendor"), "\(subscribed)")
        // A feed that answers a byte a second, listed first: serve fetches each feed apart, so it delays no other.
        let (slow, slowURL) = try await Self.start(sandbox, "slow")
        try await sandbox.ok("advisory", "feed", "subscribe", slowURL + "/feed.json", "--key", publicKey, "--name", "a-slow-mirror")
        let server = try ChildProcess(
            Sandbox.binary, ["serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--log-level", "notice", "--feed-allow-private"])
        #expect(await server.waitForLine { $0.hasPrefix("Serving the board at") } != nil, "\(server.errorOutput)")
        let expected = ["PBSA-2026-0001", "PBSA-2026-0002", "PBSA-2026-0003", "PBSA-2026-0004"]
        try await eventually("serve to import the feed") { (try? await Self.advisories(sandbox)) == expected }
        // serve logged the vendor's feed applied before the slow feed's fetch ended (it takes 30 s): it did not wait.
        let log = server.errorOutput
        let applied = try #require(log.range(of: "advisory feed applied"), "\(log)")
        #expect(log.range(of: "a-slow-mirror").map { $0.lowerBound > applied.lowerBound } ?? true, "\(log)")
        _ = await server.stop()
        _ = await slow.stop(signal: SIGKILL)
        try await sandbox.ok("advisory", "feed", "unsubscribe", "a-slow-mirror")
        let audit = try await sandbox.ok("audit").stdout
        #expect(audit.contains("plugboard/advisory-feed via feed vendor (\(url)/feed.json)"), "\(audit)")
        #expect(audit.contains("advisory-feed.apply"), "\(audit)")
        let listed = try await sandbox.ok("advisory", "feed", "list", "--json").json() as? [[String: Any]]
        let head = try #require(listed?.first?["head"] as? String)
        #expect(audit.contains("advisory_feed:vendor"))

        // Fetched again by the CLI: unchanged, exit 0.
        let again = try await sandbox.run(["advisory", "feed", "fetch", "vendor", "--allow-private"])
        #expect(again.status == 0 && again.stdout.contains("is unchanged") && again.stderr.isEmpty, "\(again)")

        // The same host's feed replaced by one a stranger signed: refused, nothing changed.
        let stranger = sandbox.root.appendingPathComponent("stranger.key").path
        try await sandbox.ok("signing-key", "generate", "--out", stranger)
        let forged = try await sandbox.run(
            ["advisory", "feed", "publish", "--key", stranger, "--out", folder + "/forged.json", "--sequence", "99999999999999"])
        #expect(forged.status == 0, "\(forged)")
        try FileManager.default.removeItem(atPath: folder + "/feed.json")
        try FileManager.default.moveItem(atPath: folder + "/forged.json", toPath: folder + "/feed.json")
        let rowsBefore = try await sandbox.ok("audit").stdout
        let refused = try await sandbox.run(["advisory", "feed", "fetch", "vendor", "--allow-private"])
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused)")
        #expect(refused.stderr.contains("signed by no key this subscription trusts"), "\(refused)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused)")
        #expect(try await sandbox.ok("audit").stdout == rowsBefore)
        #expect(try await Self.advisories(sandbox) == expected)
        let after = try await sandbox.ok("advisory", "feed", "list", "--json").json() as? [[String: Any]]
        #expect(after?.first?["head"] as? String == head)

        // Without --allow-private, a loopback feed is not fetched.
        let loopback = try await sandbox.run(["advisory", "feed", "fetch", "vendor"])
        #expect(loopback.status == 1 && loopback.stderr.contains("loopback address"), "\(loopback)")
        _ = await files.stop(signal: SIGKILL)
    }

    @Test func aSlowServerAndAHundredMegabyteAnswerAreBoundedAndChangeNothing() async throws {
        let sandbox = try await Sandbox.withBoard()
        let (folder, _, publicKey) = try await Self.publish(sandbox)
        let (files, url) = try await Self.start(sandbox, "files", [folder])
        try await sandbox.ok("advisory", "feed", "subscribe", url + "/feed.json", "--key", publicKey, "--name", "vendor")
        try await sandbox.ok("advisory", "feed", "fetch", "vendor", "--allow-private")
        _ = await files.stop(signal: SIGKILL)
        let before = try await sandbox.ok("audit").stdout

        let (slow, slowURL) = try await Self.start(sandbox, "slow")
        try await sandbox.ok("advisory", "feed", "subscribe", slowURL + "/feed.json", "--key", publicKey, "--name", "slow")
        let started = ContinuousClock.now
        let slowResult = try await sandbox.run(["advisory", "feed", "fetch", "slow", "--allow-private", "--timeout", "2s"])
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(slowResult.status == 1 && slowResult.stderr.contains("did not answer in time"), "\(slowResult)")
        #expect(slowResult.stderr.contains("nothing was changed"), "\(slowResult)")
        _ = await slow.stop(signal: SIGKILL)

        let (huge, hugeURL) = try await Self.start(sandbox, "huge")
        try await sandbox.ok("advisory", "feed", "subscribe", hugeURL + "/feed.json", "--key", publicKey, "--name", "huge")
        let hugeResult = try await sandbox.run(["advisory", "feed", "fetch", "huge", "--allow-private"])
        #expect(hugeResult.status == 1 && hugeResult.stderr.contains("more than 16 MiB"), "\(hugeResult)")
        _ = await huge.stop(signal: SIGKILL)

        // Every feed at once: the two refusals named, exit 1; only the subscriptions were written since.
        let all = try await sandbox.run(["advisory", "feed", "fetch", "--allow-private", "--timeout", "2s"])
        #expect(all.status == 1 && all.stderr.contains("huge:") && all.stderr.contains("slow:"), "\(all)")
        let json = try await sandbox.run(["advisory", "feed", "fetch", "--allow-private", "--timeout", "2s", "--json"])
        let answers = try json.json() as? [[String: Any]] ?? []
        #expect(json.status == 1 && answers.count == 3, "\(json)")
        #expect(answers.allSatisfy { ($0["error"] as? String)?.contains("nothing was changed") == true }, "\(json)")
        let audit = try await sandbox.ok("audit").stdout
        let added = audit.split(separator: "\n").filter { !before.contains($0) }
        #expect(added.allSatisfy { $0.contains("advisory-feed.subscribe") || $0.contains("audit ") }, "\(added)")
        #expect(try await Self.advisories(sandbox).count == 4)
    }
    @Test func aRestoreKeepsTheLastSequenceAppliedSoAnOlderFeedIsStillRefused() async throws {
        let sandbox = try await Sandbox.withBoard()
        let (folder, key, publicKey) = try await Self.publish(sandbox)
        let (files, url) = try await Self.start(sandbox, "files", [folder])
        try await sandbox.ok("advisory", "feed", "subscribe", url + "/feed.json", "--key", publicKey, "--name", "vendor")
        try await sandbox.ok("advisory", "feed", "fetch", "vendor", "--allow-private")
        let older = try Data(contentsOf: URL(fileURLWithPath: folder + "/feed.json"))
        let backup = sandbox.root.appendingPathComponent("backup.sqlite").path
        try await sandbox.ok("backup", "--to", backup)
        // A newer feed, applied after the backup.
        let publisher = sandbox.root.appendingPathComponent("publisher.sqlite").path
        let next = try await sandbox.run(
            ["advisory", "feed", "publish", "--key", key, "--out", folder + "/feed.json", "--db", publisher], db: false)
        #expect(next.status == 0, "\(next)")
        let applied = try await sandbox.ok("advisory", "feed", "fetch", "vendor", "--allow-private").stdout
        #expect(applied.contains("Applied the feed vendor"), "\(applied)")

        let restored = try #require(try await sandbox.ok("restore", "--from", backup, "--json").json() as? [String: Any])
        let carried = (restored["carried"] as? [[String: Any]] ?? []).map { "\($0["kind"] ?? "") \($0["target"] ?? "")" }
        #expect(carried.contains("advisory feed vendor"), "\(restored)")
        // The older feed served again: still a replay.
        try older.write(to: URL(fileURLWithPath: folder + "/feed.json"))
        let replayed = try await sandbox.run(["advisory", "feed", "fetch", "vendor", "--allow-private"])
        #expect(replayed.status == 1 && replayed.stderr.contains("a replayed or older feed"), "\(replayed)")
        _ = await files.stop(signal: SIGKILL)
    }
}
