import Foundation
import PlugboardTestSupport
import Testing

/// The host checks for itself: an attacker who edits the board file with SQLite, swaps in an older copy, edits a host's
/// cache, or sits between hosts and `plugboard serve` cannot make a host load what the board killed, did not sign, or
/// did not register. Real processes throughout: the CLI, `plugboard serve`, hosts, and an HTTP proxy.
@Suite("the host checks for itself (processes)", .timeLimit(.hangGuard), .serialized)
struct HostTrustTests {
    static let greeter = "com.example.greeter"
    static let other = "com.example.other"
    static let lib = "com.example.lib"
    static let app = "com.example.app"
    static let gated = "com.example.gated"
    static let segmented = "com.example.segmented"
    static let everyPlugin = [greeter, other, lib, app, gated, segmented]
    /// The drills' entry point, whose `snapshot-proxy` is the attacking proxy.
    static let drill = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/Drills/drill").path

    /// The attacking proxy in front of the server at `upstream`, its mode read from `modeFile` at every request.
    static func proxy(upstream: String, modeFile: String) throws -> ChildProcess {
        try ChildProcess("/usr/bin/env", ["python3", drill, "snapshot-proxy", "--upstream", upstream, "--mode-file", modeFile])
    }

    /// `plugboard serve` of the sandbox's board (freshness notices every `lifetime` / 4 seconds) behind the drill's
    /// snapshot proxy, which passes everything until its mode file says otherwise.
    struct Proxied {
        let server: ChildProcess
        let proxy: ChildProcess
        /// The proxy's URL, for hosts.
        let url: String
        /// Write a mode (`pass`, `remove-kill`, `push-forge`, …) here to change what the proxy does.
        let modeFile: String
        /// The board's key and a hosts token of `default`.
        let key: String
        let token: String
    }

    static func servedThroughProxy(_ sandbox: Sandbox, lifetime: Int = 2) async throws -> Proxied {
        let server = try ChildProcess(
            Sandbox.binary,
            ["serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--log-level", "warning", "--snapshot-lifetime", String(lifetime)])
        let upstream = "http://127.0.0.1:\(try await server.servedPort())"
        let modeFile = sandbox.root.appendingPathComponent("proxy-mode").path
        try "pass".write(toFile: modeFile, atomically: true, encoding: .utf8)
        let proxy = try Self.proxy(upstream: upstream, modeFile: modeFile)
        let listening = try #require(await proxy.waitForLine { $0.hasPrefix("listening on ") }, "\(proxy.errorOutput)")
        let url = "http://127.0.0.1:" + proxy.output[listening].dropFirst("listening on ".count)
        return Proxied(
            server: server, proxy: proxy, url: url, modeFile: modeFile, key: try await sandbox.boardKey(),
            token: try await Self.token(sandbox))
    }

    /// A board where, in `default`, only `other` may load: greeter and lib are killed, app needs lib, gated's gate
    /// flag depends on a parent flag that is off, and segmented's gate flag is on only in a segment no host is in. In `production` the policy requires signatures and `other` is
    /// unsigned, so nothing loads there. Returns the sandbox and a checkpoint taken at the end.
    static func board(killAll: Bool = false) async throws -> (Sandbox, String) {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        try await sandbox.ok(
            "plugin", "register", sandbox.write("g.json", manifest(greeter)), sandbox.write("o.json", manifest(other)),
            sandbox.write("l.json", manifest(lib)),
            sandbox.write("a.json", manifest(app, "1.0.0", #""dependencies":{"com.example.lib":"^1.0"}"#)),
            sandbox.write("x.json", manifest(gated, "1.0.0", #""gate":"rollout.gated""#)),
            sandbox.write("s.json", manifest(segmented, "1.0.0", #""gate":"rollout.segmented""#)))
        let features = """
            {"version":2,"features":[
              {"name":"parent.flag","enabled":false,"strategies":[{"name":"default"}]},
              {"name":"rollout.gated","enabled":true,"strategies":[{"name":"default"}],"dependencies":[{"feature":"parent.flag"}]},
              {"name":"rollout.segmented","enabled":true,"strategies":[{"name":"default","segments":[7]}]}],
             "segments":[{"id":7,"constraints":[{"contextName":"userId","operator":"IN","values":["nobody"]}]}]}
            """
        try await sandbox.ok("flag", "import", sandbox.write("flags.json", features))
        for id in everyPlugin { try await sandbox.ok("plugin", "enable", id) }
        try await sandbox.ok("plugin", "enable", other, "--env", "production")
        try await sandbox.ok("policy", "set", "--env", "production", "--signatures", "require")
        try await sandbox.ok("plugin", "kill", greeter, "--reason", "INC-1: leaks file handles")
        try await sandbox.ok("plugin", "kill", lib, "--reason", "INC-2")
        if killAll { try await sandbox.ok("plugin", "kill", "--all", "--reason", "INC-3") }
        let checkpoint = try await sandbox.ok("audit", "checkpoint").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return (sandbox, checkpoint)
    }

    static func edit(_ sandbox: Sandbox, _ sql: String) async throws {
        try await sandbox.boardFile.execute(sql)
    }

    /// Runs a host of the board file until it has started, and returns the plug-ins it loaded and its output.
    static func loadedByHost(_ sandbox: Sandbox, env: String = "default", state: String? = nil) async throws -> (Set<String>, [String]) {
        let host = try ChildProcess(
            RemoteHostTests.hostBinary,
            ["--db", sandbox.board, "--env", env, "--plugins", everyPlugin.joined(separator: ",")]
                + (state.map { ["--state", $0] } ?? []))
        let started = await host.waitForLine { $0.contains("\"started\"") }
        #expect(started != nil, "\(host.output) \(host.errorOutput)")
        _ = await host.closeInput()
        return (loaded(host.output), host.output)
    }

    static func loaded(_ lines: [String]) -> Set<String> {
        Set(everyPlugin.filter { id in lines.contains { $0.contains("\"event\":\"loaded\"") && $0.contains("\"plugin\":\"\(id)\"") } })
    }

    @Test func theUntouchedBoardLoadsWhatItShould() async throws {
        let (sandbox, checkpoint) = try await Self.board()
        try await sandbox.ok("audit", "verify")
        try await sandbox.ok("audit", "verify", "--checkpoint", checkpoint)
        #expect(try await Self.loadedByHost(sandbox).0 == [Self.other])
        #expect(try await Self.loadedByHost(sandbox, env: "production").0 == [])
    }

    /// Each edit an attacker with write access to the board file made: `audit verify` fails with and without the
    /// checkpoint taken before, and no host (of the board file, or served) loads what it must not.
    @Test(
        arguments: [
            (
                "drop the proof's table and revive a kill switch", false,
                "DROP TABLE state_buckets; UPDATE kill_switches SET revived_at = '2026-01-01T00:00:00.000Z', revived_by = 'root' WHERE plugin_id = 'com.example.greeter'"
            ),
            (
                "drop the proof's table and lower the signature policy", false,
                "DROP TABLE state_buckets; UPDATE signature_policies SET signatures = 'off' WHERE environment = 'production'"
            ),
            (
                "move a kill switch to another plug-in", false,
                "UPDATE kill_switches SET plugin_id = 'com.example.other' WHERE plugin_id = 'com.example.greeter'"
            ),
            (
                "turn a kill of everything into the kill of one version", true,
                "UPDATE kill_switches SET scope = 'version', plugin_id = 'com.example.greeter', version = '9.9.9' WHERE scope = 'all'"
            ),
            ("delete a dependency", false, "DELETE FROM plugin_dependencies WHERE plugin_id = 'com.example.app'"),
            ("enable the gate flag's parent", false, "UPDATE flag_environments SET enabled = 1 WHERE flag_name = 'parent.flag'"),
            ("empty the gate flag's segment", false, "UPDATE segments SET constraints_json = '[]'"),
            (
                "drop the audit triggers and every state root", false,
                """
                DROP TRIGGER audit_log_no_update; UPDATE audit_log SET state_root = NULL, state_changes = NULL;
                UPDATE kill_switches SET revived_at = '2026-01-01T00:00:00.000Z', revived_by = 'root' WHERE plugin_id = 'com.example.greeter'
                """
            ),
            (
                "append a forged audit row", false,
                """
                UPDATE kill_switches SET revived_at = '2026-01-01T00:00:00.000Z', revived_by = 'root' WHERE plugin_id = 'com.example.greeter';
                INSERT INTO audit_log (seq, at, actor, action, outcome, target_type, target_id, state_changes, state_root, prev_hash, hash)
                  SELECT seq + 1, at, 'root', 'plugin.revive', 'ok', 'plugin', 'com.example.greeter', NULL, state_root,
                         '\(String(repeating: "0", count: 64))', '\(String(repeating: "1", count: 64))' FROM audit_log ORDER BY seq DESC LIMIT 1
                """
            ),
        ])
    func anEditBehindTheLogIsCaughtByVerifyAndByEveryHost(attack: String, killAll: Bool, sql: String) async throws {
        let (sandbox, checkpoint) = try await Self.board(killAll: killAll)
        // Made before the edit: a board whose proof was dropped takes no change, a token included.
        let token = try await Self.token(sandbox)
        try await Self.edit(sandbox, sql)
        for arguments in [["audit", "verify"], ["audit", "verify", "--checkpoint", checkpoint]] {
            let verify = try await sandbox.run(arguments)
            #expect(verify.status == 1, "\(attack): \(arguments.joined(separator: " ")) passed: \(verify)")
        }
        // What the edit touched is refused (the whole board when the edit is in a row every host relies on, such as a
        // kill switch or the log itself; the one release otherwise), and nothing else loads but `other` in `default`.
        for env in ["default", "production"] {
            let (loaded, output) = try await Self.loadedByHost(sandbox, env: env)
            #expect(loaded.isSubset(of: env == "default" ? [Self.other] : []), "\(attack): a host of \(env) loaded \(loaded): \(output)")
            if env == "default" {
                #expect(output.contains { $0.contains("unproven_state") }, "\(attack): \(output)")
            }
        }
        // The served board: the server proves the board too, and signs nothing it cannot prove.
        let (server, url, _) = try await RemoteHostTests().serve(sandbox)
        let host = try RemoteHostTests().host(
            url, token, key: try await sandbox.boardKey(), cache: sandbox.root.appendingPathComponent("cache").path,
            plugins: Self.everyPlugin)
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "\(host.output)")
        _ = await host.closeInput()
        #expect(Self.loaded(host.output).isSubset(of: [Self.other]), "\(attack): a served host loaded \(Self.loaded(host.output))")
        _ = await server.stop()
    }

    /// A copy of the board from before the kill switches, swapped in with `mv` (as a member of the board's group may):
    /// `audit verify --checkpoint` fails, and a host that had accepted the newer board refuses the older one.
    @Test func anOlderCopyOfTheBoardIsRefused() async throws {
        let (sandbox, _) = try await Self.board()
        let older = sandbox.root.appendingPathComponent("older.sqlite").path
        try await sandbox.ok("plugin", "revive", Self.greeter)
        try await sandbox.boardFile.backup(to: older)
        try await sandbox.ok("plugin", "kill", Self.greeter, "--reason", "INC-4")
        let checkpoint = try await sandbox.ok("audit", "checkpoint").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let state = sandbox.root.appendingPathComponent("host-state").path
        #expect(try await Self.loadedByHost(sandbox, state: state).0 == [Self.other])

        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: sandbox.board + suffix) }
        #expect(rename(older, sandbox.board) == 0)
        #expect(try await sandbox.run(["audit", "verify", "--checkpoint", checkpoint]).status == 1)
        let (loaded, output) = try await Self.loadedByHost(sandbox, state: state)
        #expect(loaded.isEmpty, "the host loaded \(loaded) from an older board: \(output)")
        #expect(output.contains { $0.contains("older copy of the board") || $0.contains("is not the one this host accepted") }, "\(output)")
    }

    /// A host's cache edited behind its back (a kill switch removed from the snapshot) is refused when the host starts
    /// from it while the server is down.
    @Test func anEditedCacheIsRefused() async throws {
        let (sandbox, _) = try await Self.board()
        let token = try await Self.token(sandbox)
        let (server, url, _) = try await RemoteHostTests().serve(sandbox)
        let cache = sandbox.root.appendingPathComponent("cache").path
        let key = try await sandbox.boardKey()
        let first = try RemoteHostTests().host(url, token, key: key, cache: cache, plugins: Self.everyPlugin)
        #expect(await first.waitForLine(RemoteHostTests.event("loaded", Self.other)) != nil, "\(first.output)")
        _ = await first.closeInput()
        _ = await server.stop()

        // The kill switches taken out of the cached snapshot, its signature left as it was.
        let path = cache + "/snapshot.json"
        var stored = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        var envelope = try #require(stored["snapshot"] as? [String: Any])
        let content = try #require(Data(base64Encoded: envelope["content"] as? String ?? ""))
        let text = String(decoding: content, as: UTF8.self).replacingOccurrences(of: "\"killed\":true", with: "\"killed\":false")
        #expect(text != String(decoding: content, as: UTF8.self))
        envelope["content"] = Data(text.utf8).base64EncodedString()
        stored["snapshot"] = envelope
        try JSONSerialization.data(withJSONObject: stored).write(to: URL(fileURLWithPath: path))

        let second = try RemoteHostTests().host(url, token, key: key, cache: cache, plugins: Self.everyPlugin)
        #expect(await second.waitForLine { $0.contains("\"started\"") } != nil)
        _ = await second.closeInput()
        #expect(Self.loaded(second.output).isEmpty, "a host loaded \(Self.loaded(second.output)) from an edited cache")
        #expect(second.output.contains { $0.contains("cached snapshot") && $0.contains("refused") }, "\(second.output)")
    }

    /// A proxy between hosts and the server rewrites what passes: snapshots without the kill switches, signature checks
    /// set to valid, another library; or it replays an older snapshot. Hosts load none of it. A frozen feed is
    /// reported as stale, and a host that fails closed stops its plug-ins.
    @Test func aProxyBetweenHostsAndTheServerCannotMakeAHostLoadWhatMustNot() async throws {
        let (sandbox, _) = try await Self.board()
        let library = try sandbox.write("libother.so", "the library that was registered")
        try await sandbox.ok("plugin", "register", try sandbox.write("lib2.json", manifest("com.example.dynamic")), "--artifact", library)
        try await sandbox.ok("plugin", "enable", "com.example.dynamic")
        let proxied = try await Self.servedThroughProxy(sandbox)
        let (server, proxy, url, modeFile, key, token) = (
            proxied.server, proxied.proxy, proxied.url, proxied.modeFile, proxied.key, proxied.token
        )

        for mode in ["remove-kill", "flip-signature", "swap-artifact"] {
            try mode.write(toFile: modeFile, atomically: true, encoding: .utf8)
            for env in ["default", "production"] {
                let host = try RemoteHostTests().host(
                    url, token, key: key, cache: sandbox.root.appendingPathComponent("cache-\(mode)-\(env)").path,
                    plugins: Self.everyPlugin, options: ["--env", env])
                #expect(await host.waitForLine { $0.contains("\"started\"") } != nil)
                _ = await host.closeInput()
                let loaded = Self.loaded(host.output).union(
                    host.output.contains { $0.contains("com.example.dynamic") && $0.contains("\"loaded\"") } ? ["com.example.dynamic"] : [])
                #expect(loaded.isEmpty, "through a proxy in mode \(mode), a host of \(env) loaded \(loaded): \(host.output)")
            }
        }

        // Replay: a host that saw the kill switch refuses the snapshot from before it.
        try "pass".write(toFile: modeFile, atomically: true, encoding: .utf8)
        let cache = sandbox.root.appendingPathComponent("cache-replay").path
        try await sandbox.ok("plugin", "revive", Self.greeter)
        var host = try RemoteHostTests().host(url, token, key: key, cache: cache, plugins: Self.everyPlugin)
        #expect(await host.waitForLine(RemoteHostTests.event("loaded", Self.greeter)) != nil, "\(host.output)")
        try await sandbox.ok("plugin", "kill", Self.greeter, "--reason", "INC-5")
        #expect(await host.waitForLine(RemoteHostTests.event("deactivated", Self.greeter)) != nil, "\(host.output)")
        _ = await host.closeInput()
        try "replay".write(toFile: modeFile, atomically: true, encoding: .utf8)
        host = try RemoteHostTests().host(url, token, key: key, cache: cache, plugins: Self.everyPlugin)
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil)
        _ = await host.closeInput()
        #expect(!Self.loaded(host.output).contains(Self.greeter), "a replayed snapshot revived the greeter: \(host.output)")
        #expect(host.output.contains { $0.contains("older snapshot is refused") }, "\(host.output)")

        // Freeze: the feed says nothing more; the host says its snapshot is stale and, failing closed, stops its plug-ins.
        try "pass".write(toFile: modeFile, atomically: true, encoding: .utf8)
        host = try RemoteHostTests().host(
            url, token, key: key, cache: sandbox.root.appendingPathComponent("cache-freeze").path, plugins: Self.everyPlugin,
            options: ["--fail-closed-after", "1"])
        #expect(await host.waitForLine(RemoteHostTests.event("loaded", Self.other)) != nil, "\(host.output)")
        try "freeze".write(toFile: modeFile, atomically: true, encoding: .utf8)
        try await sandbox.ok("plugin", "kill", Self.other, "--reason", "INC-6")
        #expect(
            await host.waitForLine { $0.contains("\"warning\"") && $0.contains("expired") } != nil,
            "the frozen feed was not reported: \(host.output)")
        #expect(
            await host.waitForLine {
                $0.contains("\"deactivated\"") && $0.contains(Self.other) && $0.contains("\"reason\":\"stale\"")
            } != nil, "the host did not fail closed: \(host.output)")
        _ = await host.closeInput()
        _ = await proxy.closeInput()
        _ = await server.stop()
    }

    /// The board key is rotated with an overlap: hosts that know only the old key learn the new one from snapshots both
    /// sign, and keep working once the old one is retired; a host that never saw such a snapshot refuses the new key's.
    @Test func hostsFollowARotationOfTheBoardKey() async throws {
        let (sandbox, _) = try await Self.board()
        let token = try await Self.token(sandbox)
        let old = try await sandbox.boardKey()
        let cache = sandbox.root.appendingPathComponent("cache").path
        func run(_ url: String, cache: String) async throws -> Set<String> {
            let host = try RemoteHostTests().host(url, token, key: old, cache: cache, plugins: Self.everyPlugin)
            #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "\(host.output)")
            _ = await host.closeInput()
            return Self.loaded(host.output)
        }
        try await sandbox.ok("board-key", "rotate")
        var (server, url, _) = try await RemoteHostTests().serve(sandbox)
        #expect(try await run(url, cache: cache) == [Self.other])
        _ = await server.stop()

        try await sandbox.ok("board-key", "retire")
        #expect(try await sandbox.boardKey() != old)
        (server, url, _) = try await RemoteHostTests().serve(sandbox)
        #expect(try await run(url, cache: cache) == [Self.other], "a host that learned the new key refused it")
        #expect(try await run(url, cache: sandbox.root.appendingPathComponent("fresh-cache").path).isEmpty)
        _ = await server.stop()
    }

    /// A host of the board file refuses a state folder or anchor another user may write (it could delete the anchor
    /// and have the host trust an older copy of the board), saying how to fix it, and loads nothing until it is fixed.
    @Test func aStateFolderOthersMayWriteIsRefused() async throws {
        let (sandbox, _) = try await Self.board()
        let state = sandbox.root.appendingPathComponent("state").path
        #expect(try await Self.loadedByHost(sandbox, state: state).0 == [Self.other])
        #expect(try FileManager.default.attributesOfItem(atPath: state)[.posixPermissions] as? Int == 0o700)
        let anchor = state + "/anchor"
        for (path, mode, fix) in [(state, 0o777, "chmod 700 \(state)"), (anchor, 0o666, "chmod 600 \(anchor)")] {
            #expect(chmod(path, mode_t(mode)) == 0)
            let (loaded, output) = try await Self.loadedByHost(sandbox, state: state)
            #expect(loaded.isEmpty, "a host with \(path) in mode \(String(mode, radix: 8)) loaded \(loaded)")
            #expect(output.contains { $0.contains("writable by its group or others") && $0.contains(fix) }, "\(output)")
            #expect(chmod(path, mode_t(path == state ? 0o700 : 0o600)) == 0)
        }
        #expect(try await Self.loadedByHost(sandbox, state: state).0 == [Self.other])
    }

    static func token(_ sandbox: Sandbox) async throws -> String {
        try await sandbox.hostsToken(name: "hosts-\(UUID().uuidString.prefix(6))")
    }
}
