import Foundation
import PlugboardTestSupport
import Testing

/// A host without an anchor (a new container, a wiped cache) takes as its first state only a snapshot the server
/// proved fresh for its own request: a proxy that kept a snapshot from before a kill switch cannot replay it to a new
/// host, expired or not. Real processes: the CLI, `plugboard serve`, the snapshot proxy and hosts.
@Suite("a new host's first snapshot is proven fresh (processes)", .timeLimit(.hangGuard), .serialized)
struct FirstContactTests {
    static let greeter = HostTrustTests.greeter
    static let other = HostTrustTests.other

    /// The board of ``HostTrustTests/board(killAll:)`` with the greeter alive, served with `lifetime` behind the snapshot
    /// proxy; a first host reads it through the proxy in `pass` mode (the proxy keeps that snapshot, with its proof),
    /// then the greeter is killed. Returns what the tests need, and the audit row after the kill.
    struct Setup {
        let sandbox: Sandbox
        let server: ChildProcess
        let proxy: ChildProcess
        let url: String
        let modeFile: String
        let key: String
        let token: String
        let killedAt: Int64

        func mode(_ mode: String) throws { try mode.write(toFile: modeFile, atomically: true, encoding: .utf8) }

        /// A new host (empty cache) through the proxy, once it started.
        func newHost(_ name: String, options: [String] = []) async throws -> ChildProcess {
            let host = try RemoteHostTests().host(
                url, token, key: key, cache: sandbox.root.appendingPathComponent("cache-\(name)").path, id: name,
                plugins: HostTrustTests.everyPlugin, options: options)
            #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "\(host.output) \(host.errorOutput)")
            return host
        }

        func stop() async {
            _ = await proxy.closeInput()
            _ = await server.stop()
        }
    }

    static func setUp(lifetime: Int) async throws -> Setup {
        let (sandbox, _) = try await HostTrustTests.board()
        try await sandbox.ok("plugin", "revive", greeter)
        let proxied = try await HostTrustTests.servedThroughProxy(sandbox, lifetime: lifetime)
        let (server, proxy, url, modeFile, key, token) = (
            proxied.server, proxied.proxy, proxied.url, proxied.modeFile, proxied.key, proxied.token
        )

        let first = try RemoteHostTests().host(
            url, token, key: key, cache: sandbox.root.appendingPathComponent("cache-first").path, id: "first",
            plugins: HostTrustTests.everyPlugin)
        #expect(await first.waitForLine(RemoteHostTests.event("loaded", greeter)) != nil, "\(first.output)")
        try await sandbox.ok("plugin", "kill", greeter, "--reason", "INC-7")
        #expect(await first.waitForLine(RemoteHostTests.event("deactivated", greeter)) != nil, "\(first.output)")
        _ = await first.closeInput()
        let checkpoint = try await sandbox.ok("audit", "checkpoint").stdout
        let seq = try #require(Int64(checkpoint.prefix { $0.isNumber }))
        return Setup(
            sandbox: sandbox, server: server, proxy: proxy, url: url, modeFile: modeFile, key: key, token: token, killedAt: seq)
    }

    static func refusal(_ line: String) -> Bool {
        line.contains("\"warning\"") && line.contains("takes only a snapshot proven fresh")
    }

    /// The proxy replays the snapshot from before the kill switch, long past its signed lifetime, to a host with an
    /// empty cache: the host refuses it (saying it expired), loads nothing, and reads again until the real board answers.
    /// An operator may accept such a first snapshot (`--accept-stale-first-snapshot`), or pin a minimum sequence, which
    /// refuses the replayed one even so and takes a current one without the proof.
    @Test func aNewHostRefusesAnExpiredSnapshotReplayedAfterAKill() async throws {
        let setup = try await Self.setUp(lifetime: 2)
        // Past the replayed snapshot's lifetime (it was signed before the kill): the wall clock passing its expiry is the
        // point, so a fixed wait.
        try await Task.sleep(for: .seconds(3))
        try setup.mode("replay")
        let host = try await setup.newHost("fresh")
        #expect(
            await host.waitForLine { Self.refusal($0) && $0.contains("expired at") } != nil,
            "the replayed snapshot was not refused: \(host.output)")
        #expect(HostTrustTests.loaded(host.output).isEmpty, "a new host loaded from a replayed snapshot: \(host.output)")
        // It reads again (with backoff) and takes the board's real state once the proxy lets it through.
        try setup.mode("pass")
        #expect(await host.waitForLine(timeout: .seconds(480), RemoteHostTests.event("loaded", Self.other)) != nil, "\(host.output)")
        _ = await host.closeInput()
        #expect(!HostTrustTests.loaded(host.output).contains(Self.greeter), "\(host.output)")

        // The operator's opt-in takes the replayed snapshot, and says so.
        try setup.mode("replay")
        let stale = try await setup.newHost("stale", options: ["--accept-stale-first-snapshot"])
        _ = await stale.closeInput()
        #expect(HostTrustTests.loaded(stale.output).contains(Self.greeter), "\(stale.output)")
        #expect(stale.output.contains { $0.contains("\"warning\"") && $0.contains("expired at") }, "\(stale.output)")

        // A pinned minimum sequence refuses the replayed snapshot, and takes a current one without a proof.
        let pinned = try await setup.newHost("pinned", options: ["--min-seq", String(setup.killedAt)])
        #expect(
            await pinned.waitForLine { $0.contains("below the minimum sequence \(setup.killedAt)") } != nil, "\(pinned.output)")
        #expect(HostTrustTests.loaded(pinned.output).isEmpty, "\(pinned.output)")
        try setup.mode("pass")
        #expect(await pinned.waitForLine(timeout: .seconds(480), RemoteHostTests.event("loaded", Self.other)) != nil, "\(pinned.output)")
        _ = await pinned.closeInput()
        #expect(!HostTrustTests.loaded(pinned.output).contains(Self.greeter), "\(pinned.output)")
        try setup.mode("strip-proof")
        let unproven = try await setup.newHost("pinned-unproven", options: ["--min-seq", String(setup.killedAt)])
        _ = await unproven.closeInput()
        #expect(HostTrustTests.loaded(unproven.output) == [Self.other], "\(unproven.output)")
        await setup.stop()
    }

    /// Within the snapshot's lifetime, the freshness proof is what refuses a replay: the proof the proxy kept answers
    /// another host's nonce, a proof the server signs now vouches for the current head, not the replayed one, and a
    /// snapshot without a proof is not a first state. Through an honest proxy, a new host loads what the board allows.
    @Test func aReplayWithinTheLifetimeIsRefusedByTheNonceProof() async throws {
        let setup = try await Self.setUp(lifetime: 3600)
        for (mode, why) in [
            ("replay", "answers another request"), ("replay-proof", "not for the snapshot's row"), ("strip-proof", "no freshness proof"),
        ] {
            try setup.mode(mode)
            let host = try await setup.newHost("fresh-\(mode)")
            #expect(
                await host.waitForLine { Self.refusal($0) && $0.contains(why) && !$0.contains("expired at") } != nil,
                "through a proxy in mode \(mode): \(host.output)")
            _ = await host.closeInput()
            #expect(HostTrustTests.loaded(host.output).isEmpty, "through a proxy in mode \(mode), a new host loaded: \(host.output)")
        }
        try setup.mode("pass")
        let host = try await setup.newHost("honest")
        _ = await host.closeInput()
        #expect(HostTrustTests.loaded(host.output) == [Self.other], "\(host.output)")
        await setup.stop()
    }
}
