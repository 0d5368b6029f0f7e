import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Webhooks delivered by `plugboard serve` to receivers in processes of their own, each delivery verified with PyPI's
/// `standardwebhooks`: in order, at least once across a crash, retried on a schedule, stopped by 410, and one
/// endpoint never waiting for another.
@Suite("webhook delivery to real receivers (processes)", .timeLimit(.hangGuard))
struct WebhookDeliveryTests {
    /// `plugboard serve` with delivery on (private addresses allowed: the receivers are on loopback) and a short retry
    /// schedule.
    static func serve(_ sandbox: Sandbox, schedule: String = "200ms,200ms,400ms", attemptTimeout: String = "10s") async throws
        -> ChildProcess
    {
        let server = try ChildProcess(
            Sandbox.binary,
            [
                "serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--log-level", "warning", "--webhook-allow-private",
                "--webhook-retry-schedule", schedule, "--webhook-attempt-timeout", attemptTimeout,
            ])
        #expect(await server.waitForLine { $0.hasPrefix("Serving the board at") } != nil, "\(server.errorOutput)")
        return server
    }

    /// The log's last seq.
    static func head(_ sandbox: Sandbox) async throws -> Int64 {
        // One JSON object a line.
        let lines = try await sandbox.ok("audit", "--json").stdout.split(separator: "\n")
        let rows = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return rows.compactMap { ($0["seq"] as? NSNumber)?.int64Value }.max() ?? 0
    }

    /// The endpoint `name` as `plugboard webhook show --json` gives it.
    static func endpoint(_ sandbox: Sandbox, _ name: String) async throws -> [String: Any]? {
        (try await sandbox.ok("webhook", "show", name, "--json").json() as? [String: Any])?["endpoint"] as? [String: Any]
    }

    /// Waits until `receiver` acknowledged every seq up to `seq`.
    static func received(_ receiver: WebhookReceiver, through seq: Int64, timeout: Duration = .eventDeadline) async throws {
        try await eventually(
            "the receiver to acknowledge seq \(seq): \(receiver.deliveries.map { "\($0.seq ?? 0):\($0.status ?? 0)" })", timeout: timeout
        ) {
            receiver.deliveries.contains { $0.seq == seq && $0.status == 200 }
        }
    }

    /// Some changes: each an audit row.
    static func changes(_ sandbox: Sandbox, _ count: Int, prefix: String = "f") async throws {
        for index in 0..<count { try await sandbox.ok("flag", "create", "\(prefix)\(index)") }
    }

    /// Checks what a receiver acknowledged: every delivery verified, each seq once (duplicates marked), the rows other
    /// than kill switches in seq order, and every seq from the first to the last there, each chained to the one before.
    static func expectInOrderAndChained(_ receiver: WebhookReceiver, sourceLocation: SourceLocation = #_sourceLocation) {
        let accepted = receiver.deliveries.filter { $0.status == 200 && $0.duplicate == false }
        let seqs = accepted.filter { $0.action != "plugin.kill" }.compactMap(\.seq)
        #expect(seqs == seqs.sorted(), "\(seqs)", sourceLocation: sourceLocation)
        let bySeq = Dictionary(accepted.compactMap { row in row.seq.map { ($0, row) } }) { first, _ in first }
        #expect(bySeq.count == accepted.count, "a seq accepted twice as new", sourceLocation: sourceLocation)
        if let low = bySeq.keys.min(), let high = bySeq.keys.max() {
            for seq in (low + 1)...max(high, low + 1) where seq <= high {
                #expect(
                    bySeq[seq]?.prevHash != nil && bySeq[seq]?.prevHash == bySeq[seq - 1]?.hash, "seq \(seq) is missing or not chained",
                    sourceLocation: sourceLocation)
            }
        }
        #expect(
            receiver.deliveries.allSatisfy { $0.error == nil },
            "a delivery failed verification: \(receiver.deliveries.compactMap(\.error))",
            sourceLocation: sourceLocation)
    }

    @Test(.enabled(if: WebhookReceiver.python != nil, Comment(rawValue: WebhookReceiver.skipped)))
    func everyEventArrivesInOrderVerifiedAndChainedAndAKillSwitchGoesFirst() async throws {
        let sandbox = try await Sandbox.withBoard()
        let receiver = try await WebhookReceiver(sandbox, "plain")
        try await receiver.add(sandbox, "plain")
        // Events wait (no server yet), a kill switch last among them: it is sent first.
        try await Self.changes(sandbox, 6)
        try await sandbox.ok("plugin", "kill", "--all", "--reason", "drill")
        let server = try await Self.serve(sandbox)
        try await Self.received(receiver, through: try await Self.head(sandbox))
        #expect(receiver.deliveries.first?.action == "plugin.kill", "\(receiver.deliveries.map { $0.action ?? "" })")
        // Then what comes while it serves.
        try await Self.changes(sandbox, 3, prefix: "live")
        try await Self.received(receiver, through: try await Self.head(sandbox))
        Self.expectInOrderAndChained(receiver)
        // Events follow one another over a connection kept open, not one connection each.
        let peers = Set(receiver.deliveries.compactMap(\.peer))
        #expect(peers.count < receiver.deliveries.count / 2, "\(receiver.deliveries.count) deliveries over \(peers.count) connections")
        _ = await server.stop()
    }

    @Test(.enabled(if: WebhookReceiver.python != nil, Comment(rawValue: WebhookReceiver.skipped)))
    func aReceiverThatFailsForAWhileGetsEverythingInOrderAfterRetries() async throws {
        let sandbox = try await Sandbox.withBoard()
        let receiver = try await WebhookReceiver(sandbox, "flaky", options: ["--fail", "4"])
        try await receiver.add(sandbox, "flaky")
        let server = try await Self.serve(sandbox)
        try await Self.changes(sandbox, 4)
        try await Self.received(receiver, through: try await Self.head(sandbox))
        #expect(receiver.deliveries.prefix(4).allSatisfy { $0.status == 500 }, "\(receiver.deliveries.map { $0.status ?? 0 })")
        Self.expectInOrderAndChained(receiver)
        // The cursor's next write (within the flush interval) ends the attempts.
        try await eventually("the endpoint's attempts to end") {
            let listed = try await sandbox.ok("webhook", "list", "--json").json() as? [[String: Any]]
            return listed?.first?["attempts"] as? Int == 0 && listed?.first?["failing_since"] == nil
        }
        _ = await server.stop()
    }

    @Test(.enabled(if: WebhookReceiver.python != nil, Comment(rawValue: WebhookReceiver.skipped)))
    func anEndpointThatAnswersGoneIsDisabledWithAnAuditRow() async throws {
        let sandbox = try await Sandbox.withBoard()
        let receiver = try await WebhookReceiver(sandbox, "gone", options: ["--status", "410"])
        try await receiver.add(sandbox, "gone")
        let server = try await Self.serve(sandbox)
        try await eventually("the endpoint to be disabled") {
            let listed = try await sandbox.ok("webhook", "list", "--json").json() as? [[String: Any]]
            return listed?.first?["enabled"] as? Bool == false
        }
        let audit = try await sandbox.ok("audit", "--json").stdout
        #expect(audit.contains("webhook.disable") && audit.contains("plugboard/webhook-delivery") && audit.contains("410 Gone"))
        _ = await server.stop()
    }

    @Test(.enabled(if: WebhookReceiver.python != nil, Comment(rawValue: WebhookReceiver.skipped)))
    func aHangingReceiverDelaysNoOtherEndpoint() async throws {
        let sandbox = try await Sandbox.withBoard()
        let hanging = try await WebhookReceiver(sandbox, "hanging", options: ["--hang"])
        try await hanging.add(sandbox, "hanging")
        let healthy = try await WebhookReceiver(sandbox, "healthy")
        try await healthy.add(sandbox, "healthy")
        // The hanging endpoint's attempt outlasts the test: the healthy one can get its events only beside it.
        let server = try await Self.serve(sandbox, attemptTimeout: "600s")
        try await sandbox.ok("plugin", "kill", "--all", "--reason", "while one hangs")
        try await Self.received(healthy, through: try await Self.head(sandbox))
        // The healthy endpoint got everything while the hanging one's first attempt had not ended.
        let first = try await Self.endpoint(sandbox, "hanging")
        if first?["attempts"] as? Int != 0 || first?["last_error"] != nil {
            // On a machine busy enough to keep the sender's event loop from running for the 3 s of its connect timeout,
            // the first attempt ends there, without reaching the receiver. The next one hangs: the healthy endpoint
            // must then get new rows while that attempt has not ended.
            let connectTimeout = "the webhook hanging's URL did not accept a connection in time"
            #expect(first?["last_error"] as? String == connectTimeout, "\(String(describing: first))")
            _ = try await eventually("the hanging receiver to hold a request") { hanging.held }
            let holding = try await Self.endpoint(sandbox, "hanging")
            try await Self.changes(sandbox, 2, prefix: "while-held")
            try await Self.received(healthy, through: try await Self.head(sandbox))
            let after = try await Self.endpoint(sandbox, "hanging")
            let unchanged =
                after?["attempts"] as? Int == holding?["attempts"] as? Int
                && after?["last_error"] as? String == holding?["last_error"] as? String
            #expect(unchanged, "\(String(describing: after))")
        }
        Self.expectInOrderAndChained(healthy)
        // Stopped, the server cancels the hanging attempt, closes its connections and the event loop they run on, and
        // exits long before the attempt's own timeout.
        #expect(await server.stop() == 0, "\(server.errorOutput)")
    }

    @Test(.enabled(if: WebhookReceiver.python != nil, Comment(rawValue: WebhookReceiver.skipped)))
    func aServerKilledBetweenSendingAndRecordingSendsAgainAndTheReceiverDeduplicates() async throws {
        let sandbox = try await Sandbox.withBoard()
        // Held long enough that the server is killed while it waits, however busy the machine; should its attempt end
        // first, its retry is the duplicate the test asks for.
        let receiver = try await WebhookReceiver(sandbox, "crash", options: ["--hold", "120"])
        try await receiver.add(sandbox, "crash")
        let first = try await Self.serve(sandbox)
        let held = try await eventually("the receiver to hold a delivery") { receiver.held }
        // Sent, not yet answered, so not recorded: the server dies.
        _ = await first.stop(signal: SIGKILL)
        try await Self.changes(sandbox, 2, prefix: "after")
        let second = try await Self.serve(sandbox)
        try await Self.received(receiver, through: try await Self.head(sandbox))
        let again = receiver.deliveries.filter { $0.seq == held }
        #expect(again.count >= 2 && again.dropFirst().allSatisfy { $0.duplicate == true }, "\(again.map { "\($0.duplicate ?? false)" })")
        Self.expectInOrderAndChained(receiver)
        _ = await second.stop()
    }

    @Test(.enabled(if: WebhookReceiver.python != nil, Comment(rawValue: WebhookReceiver.skipped)))
    func aNameThatResolvesToAPrivateAddressIsRefusedAtDeliveryWithoutTheFlag() async throws {
        let sandbox = try await Sandbox.withBoard()
        let receiver = try await WebhookReceiver(sandbox, "private")
        try await receiver.add(sandbox, "private")
        let refused = try await sandbox.run(["webhook", "deliver", "--now"])
        #expect(refused.status != 0, "\(refused)")
        let error = try await Self.endpoint(sandbox, "private")?["last_error"] as? String ?? ""
        #expect(error.contains("loopback"), "\(error)")
        #expect(receiver.deliveries.isEmpty)
        // Allowed, one pass delivers what waits.
        try await sandbox.ok("webhook", "deliver", "--now", "--allow-private")
        #expect(receiver.deliveries.contains { $0.status == 200 && $0.action == "webhook.add" })
    }
}
