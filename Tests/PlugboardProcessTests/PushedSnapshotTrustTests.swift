import Foundation
import PlugboardTestSupport
import Testing

/// Snapshots pushed on the host stream are trusted as little as snapshots read: a proxy between hosts and `plugboard
/// serve` that forges, replays, drops or reorders them makes no host load what the board stopped. Real processes: the
/// CLI, `plugboard serve`, the attacking proxy (`drill snapshot-proxy`) and hosts.
@Suite("pushed snapshots through an attacking proxy (processes)", .timeLimit(.hangGuard), .serialized)
struct PushedSnapshotTrustTests {
    static let greeter = HostTrustTests.greeter
    static let other = HostTrustTests.other

    @Test(arguments: ["push-forge", "push-replay", "push-drop", "push-reorder"])
    func aProxyThatTampersWithPushedSnapshotsMakesNoHostLoadWhatTheBoardStopped(mode: String) async throws {
        let (sandbox, _) = try await HostTrustTests.board()
        try await sandbox.ok("plugin", "revive", Self.greeter)
        // Freshness notices every half second: a host that hears of no change learns of a newer head from them.
        let proxied = try await HostTrustTests.servedThroughProxy(sandbox)
        let (server, proxy, url, modeFile, key, token) = (
            proxied.server, proxied.proxy, proxied.url, proxied.modeFile, proxied.key, proxied.token
        )

        let host = try RemoteHostTests().host(
            url, token, key: key, cache: sandbox.root.appendingPathComponent("cache").path, plugins: HostTrustTests.everyPlugin)
        #expect(await host.waitForLine(RemoteHostTests.event("loaded", Self.greeter)) != nil, "\(host.output)")
        // A change pushed while the proxy passes everything: the snapshot a replaying proxy sends later (the proxy keeps
        // it as it passes, before the host takes it).
        let beforeDisable = host.output.count
        try await sandbox.ok("plugin", "disable", "com.example.segmented")
        #expect(
            await host.waitForLine(after: beforeDisable) { $0.contains(#""event":"changed""#) } != nil,
            "the change never reached the host through the proxy: \(host.output.suffix(6))")

        try mode.write(toFile: modeFile, atomically: true, encoding: .utf8)
        let seen = host.output.count
        try await sandbox.ok("plugin", "kill", Self.greeter, "--reason", "INC-7")
        // Reordering needs a pair of pushed changes: the later one is delivered first, the earlier one after it.
        if mode == "push-reorder" { try await sandbox.ok("plugin", "kill", Self.other, "--reason", "INC-8") }
        let stopped = await host.waitForLine(after: seen, RemoteHostTests.event("deactivated", Self.greeter))
        #expect(stopped != nil, "through a proxy in mode \(mode), the kill switch never reached the host: \(host.output.suffix(6))")
        // The point is what does not happen: a fixed wait, long enough for more freshness notices and any event the
        // proxy held back.
        try await Task.sleep(for: .seconds(2))
        if mode == "push-forge" {
            // A change the server could not sign at the version it noticed goes out as a notice alone, with nothing
            // to forge: changes are made until the proxy forged one, which the host must refuse aloud.
            var forged = await proxy.waitForLine(timeout: .seconds(5)) { $0.hasPrefix("forged the snapshot pushed") }
            for round in 1...20 where forged == nil {
                try await sandbox.ok("plugin", round.isMultiple(of: 2) ? "disable" : "enable", "com.example.segmented")
                forged = await proxy.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("forged the snapshot pushed") }
            }
            #expect(forged != nil, "the proxy never forged a pushed snapshot: \(proxy.output.suffix(4))")
            do {
                let refusal = "ignored a snapshot pushed"
                try await eventually("the host to refuse the forged snapshot aloud") {
                    host.errorOutput.contains(refusal) || host.output.contains { $0.contains(refusal) }
                }
            } catch {
                Issue.record("the forged snapshot was not refused aloud: \(host.errorOutput.suffix(600))")
            }
        }
        _ = await host.closeInput()
        let after = host.output.dropFirst(stopped ?? seen)
        #expect(
            !after.contains(where: RemoteHostTests.event("loaded", Self.greeter)),
            "through a proxy in mode \(mode), the host loaded the killed plug-in again: \(host.output.suffix(6))")
        _ = await proxy.closeInput()
        _ = await server.stop()
    }
}
