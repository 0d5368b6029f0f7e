import Foundation
import PlugboardTestSupport
import Testing

/// The alerting trigger with the real Prometheus Alertmanager (Debian's `prometheus-alertmanager`): Alertmanager on
/// loopback with a rule-free configuration whose webhook receiver is `plugboard serve --admin`'s trigger, authenticated
/// with a stop token; an alert posted to Alertmanager's API kills the plug-in it names, a remote host of the same server
/// that runs it deactivates it, and resolved the alert revives nothing, on the board or in the host.
///
/// Skipped when no Alertmanager is installed, unless `CI` is set (then it fails): `.ci/run` installs it and exports
/// `PLUGBOARD_ALERTMANAGER`.
@Suite("the alerting trigger with Prometheus Alertmanager (processes)", .timeLimit(.hangGuard))
struct AlertmanagerProcessTests {
    /// The Alertmanager binary: `$PLUGBOARD_ALERTMANAGER`, else Debian's `prometheus-alertmanager`, else `alertmanager` on
    /// the PATH.
    static let binary: String? = {
        let environment = ProcessInfo.processInfo.environment
        let path = (environment["PATH"] ?? "/usr/bin").split(separator: ":").map(String.init)
        let candidates =
            [environment["PLUGBOARD_ALERTMANAGER"]].compactMap { $0 } + ["/usr/bin/prometheus-alertmanager"]
            + path.map { $0 + "/alertmanager" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()
    static let inCI = ProcessInfo.processInfo.environment["CI"] != nil

    /// Alertmanager's configuration: no rules, every alert a group of its own, sent at once to `url` with `token`.
    static func configuration(url: String, token: String) -> String {
        """
        route:
          receiver: plugboard
          group_by: ['...']
          group_wait: 1s
          group_interval: 1s
          repeat_interval: 1h
        receivers:
          - name: plugboard
            webhook_configs:
              - url: '\(url)/api/triggers/alertmanager'
                send_resolved: true
                max_alerts: 100
                http_config:
                  authorization:
                    type: Bearer
                    credentials: '\(token)'
        """
    }

    /// How many notifications Alertmanager's webhook integration sent, and how many of them failed (its `/metrics`).
    static func notifications(_ url: String) async throws -> (sent: Int, failed: Int) {
        let metrics = try await Curl.run(["\(url)/metrics"]).body
        func value(_ name: String) -> Int {
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("\(name){") && $0.contains(#"integration="webhook""#) }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
        }
        return (value("alertmanager_notifications_total"), value("alertmanager_notifications_failed_total"))
    }

    /// Posts `alerts` to Alertmanager's API v2.
    static func postAlerts(_ url: String, _ alerts: [[String: Any]], in sandbox: Sandbox) async throws {
        let data = try JSONSerialization.data(withJSONObject: alerts)
        let file = try sandbox.write("alerts-\(UUID().uuidString).json", String(decoding: data, as: UTF8.self))
        let posted = try await Curl.run([
            "-X", "POST", "-H", "Content-Type: application/json", "--data-binary", "@\(file)", "\(url)/api/v2/alerts",
        ])
        #expect(posted.status == 200, "Alertmanager refused the alert: \(posted)")
    }

    @Test(
        .enabled(
            if: (binary != nil || inCI) && FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"),
            "Alertmanager is not installed: apt-get install prometheus-alertmanager, or set PLUGBOARD_ALERTMANAGER"))
    func anAlertFromAlertmanagerKillsThePluginAndItsResolutionRevivesNothing() async throws {
        let alertmanager = try #require(Self.binary, "Alertmanager is not installed (apt-get install prometheus-alertmanager)")
        let (served, stopToken) = try await AlertTriggerTests.served()
        defer { Task { await served.stop() } }
        let sandbox = served.sandbox
        // A remote host of the served board runs alpha and gamma before any alert fires.
        let (alpha, gamma) = (AlertTriggerTests.alpha, AlertTriggerTests.gamma)
        try await sandbox.ok("plugin", "enable", alpha)
        try await sandbox.ok("plugin", "enable", gamma)
        let host = try RemoteHostTests().host(
            served.url, try await sandbox.hostsToken(), key: try await sandbox.boardKey(),
            cache: sandbox.root.appendingPathComponent("host-cache").path, plugins: [alpha, gamma])
        let config = try sandbox.write("alertmanager.yml", Self.configuration(url: served.url, token: stopToken))
        let storage = sandbox.root.appendingPathComponent("alertmanager-data").path
        let port = try freeLoopbackPort()
        let manager = try ChildProcess(
            alertmanager,
            [
                "--config.file=\(config)", "--storage.path=\(storage)", "--web.listen-address=127.0.0.1:\(port)",
                "--cluster.listen-address=", "--log.level=warn",
            ])
        defer { Task { await manager.stop() } }
        let url = "http://127.0.0.1:\(port)"
        try await eventually("Alertmanager ready at \(url) (\(manager.errorOutput))", poll: .milliseconds(100)) {
            try await Curl.run(["\(url)/-/ready"]).status == 200
        }

        for plugin in [alpha, gamma] {
            #expect(
                await host.waitForLine(RemoteHostTests.event("loaded", plugin)) != nil,
                "the host did not load \(plugin): \(host.output) \(host.errorOutput)")
        }
        let running = try await RemoteHostTests().waitForReport(sandbox, alpha) { $0["state"] as? String == "loaded" }
        #expect(running != nil, "the host did not report alpha loaded")
        let seen = host.output.count

        let labels = ["alertname": "HighErrorRate", "plugin": AlertTriggerTests.alpha, "severity": "page"]
        let summary = "alpha answers 5xx to 12% of calls"
        let started = Date()
        try await Self.postAlerts(
            url, [["labels": labels, "annotations": ["summary": summary], "startsAt": Self.rfc3339(started)]], in: sandbox)
        let kill: [String: Any] = try await eventually("the kill of \(AlertTriggerTests.alpha) by Alertmanager", timeout: .seconds(180)) {
            try await AlertTriggerTests.kills(sandbox, AlertTriggerTests.alpha).last
        }
        #expect(kill["reason"] as? String == summary, "\(kill)")
        #expect((kill["via"] as? String)?.hasPrefix("alertmanager alert HighErrorRate (token alerts from 127.0.0.1") == true, "\(kill)")
        #expect(try await AlertTriggerTests.killed(sandbox, AlertTriggerTests.alpha))
        #expect(!(try await AlertTriggerTests.killed(sandbox, AlertTriggerTests.beta)))
        // The running host deactivates alpha as killed, keeps gamma, and reports so to the board.
        let deactivated = await host.waitForLine(after: seen) {
            RemoteHostTests.event("deactivated", alpha)($0) && $0.contains("\"reason\":\"killed\"")
        }
        #expect(deactivated != nil, "the kill by Alertmanager did not reach the host: \(host.output.suffix(5)) \(host.errorOutput)")
        let reported = try await RemoteHostTests().waitForReport(sandbox, alpha) { $0["state"] as? String == "deactivated" }
        #expect(reported?["reason_code"] as? String == "killed", "\(String(describing: reported))")
        #expect(!host.output[seen...].contains(where: RemoteHostTests.event("deactivated", gamma)), "\(host.output.suffix(5))")

        // Resolved (its end in the past): Alertmanager sends the resolution, and nothing is revived.
        let before = try await Self.notifications(url)
        try await Self.postAlerts(
            url,
            [
                [
                    "labels": labels, "annotations": ["summary": summary], "startsAt": Self.rfc3339(started),
                    "endsAt": Self.rfc3339(Date().addingTimeInterval(-1)),
                ]
            ], in: sandbox)
        try await eventually("Alertmanager's notification of the resolution", poll: .milliseconds(200)) {
            try await Self.notifications(url).sent > before.sent
        }
        let after = try await Self.notifications(url)
        #expect(after.failed == 0, "Alertmanager's webhook notifications failed: \(after)")
        #expect(try await AlertTriggerTests.killed(sandbox, AlertTriggerTests.alpha))
        #expect(try await AlertTriggerTests.kills(sandbox, AlertTriggerTests.alpha).count == 1)
        let revives = try await sandbox.ok("audit", "--json").stdout.split(separator: "\n").filter { $0.contains("\"plugin.revive\"") }
        #expect(revives.isEmpty, "\(revives)")
        // The host, having taken a change made after the resolution (gamma disabled), still does not run alpha.
        let fence = host.output.count
        try await sandbox.ok("plugin", "disable", gamma)
        let gammaOff = await host.waitForLine(after: fence) {
            RemoteHostTests.event("deactivated", gamma)($0) && $0.contains("\"reason\":\"disabled\"")
        }
        #expect(gammaOff != nil, "the change after the resolution did not reach the host: \(host.output.suffix(5))")
        #expect(
            !host.output[seen...].contains(where: RemoteHostTests.event("loaded", alpha)),
            "the host ran alpha again after the alert: \(host.output[seen...])")
        let still = try await RemoteHostTests().waitForReport(sandbox, gamma) { $0["state"] as? String == "deactivated" }
        #expect(still?["reason_code"] as? String == "disabled", "\(String(describing: still))")
        #expect(try await RemoteHostTests().reported(sandbox, alpha)?["reason_code"] as? String == "killed")
        #expect(await host.closeInput() == 0, "the host did not stop cleanly: \(host.errorOutput)")
        let verified = try await sandbox.ok("audit", "verify").stdout
        #expect(verified.contains("The audit log is intact"), "\(verified)")
    }

    /// RFC 3339 in UTC, as Alertmanager's API takes it.
    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
