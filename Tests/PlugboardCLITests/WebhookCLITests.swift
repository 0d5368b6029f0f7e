import Foundation
import PlugboardTestSupport
import Testing

/// `plugboard webhook …` end to end: an endpoint's secret printed once and kept sealed, refused addresses, and every
/// change an audit row that never carries the secret.
@Suite("plugboard webhook commands", .timeLimit(.hangGuard))
struct WebhookCLITests {
    @Test func anEndpointIsAddedWithItsSecretShownOnceAndManagedWithAuditedCommands() async throws {
        let sandbox = try await Sandbox.withBoard()
        let added =
            try await sandbox.ok("webhook", "add", "ops", "https://hooks.example.com/ops", "--events", "plugin.kill,change.*", "--json")
            .json() as? [String: Any]
        let secret = try #require(added?["secret"] as? String)
        #expect(secret.hasPrefix("whsec_") && (Data(base64Encoded: String(secret.dropFirst(6)))?.count ?? 0) >= 24)
        let publicKey = try #require(added?["public_key"] as? String)
        #expect(Data(base64Encoded: publicKey)?.count == 32)

        let list = try await sandbox.ok("webhook", "list").stdout
        #expect(list.contains("ops") && list.contains("plugin.kill,change.*") && list.contains("ok") && !list.contains(secret))
        let shown = try await sandbox.ok("webhook", "show", "ops").stdout
        #expect(shown.contains(publicKey) && !shown.contains(secret))
        try await sandbox.ok("webhook", "test", "ops")
        try await sandbox.ok("webhook", "disable", "ops")
        #expect(try await sandbox.ok("webhook", "list").stdout.contains("disabled"))
        try await sandbox.ok("webhook", "enable", "ops")
        try await sandbox.ok("webhook", "replay", "ops", "--from", "1")
        let rotated = try await sandbox.ok("webhook", "rotate-secret", "ops", "--json").json() as? [String: Any]
        let second = try #require(rotated?["secret"] as? String)
        #expect(second != secret && second.hasPrefix("whsec_"))
        try await sandbox.ok("webhook", "remove", "ops")
        #expect(try await sandbox.ok("webhook", "list").stdout.contains("No webhooks"))

        // The log names every change and never a secret; the board holds neither in plaintext.
        let audit = try await sandbox.ok("audit", "--json").stdout
        for action in [
            "webhook.add", "webhook.test", "webhook.disable", "webhook.enable", "webhook.replay", "webhook.rotate-secret", "webhook.remove",
        ] {
            #expect(audit.contains(action), "\(action)")
        }
        let file = try Data(contentsOf: URL(fileURLWithPath: sandbox.board))
        for text in [secret, second, String(secret.dropFirst(6)), String(second.dropFirst(6))] {
            #expect(!audit.contains(text) && file.range(of: Data(text.utf8)) == nil)
        }
        try await sandbox.ok("audit", "verify")
    }

    @Test func urlsAtLoopbackPrivateAndMetadataAddressesAreRefusedAndChangeNothing() async throws {
        let sandbox = try await Sandbox.withBoard()
        let before = try await sandbox.snapshot()
        for url in [
            "http://127.0.0.1:8080/hook", "http://169.254.169.254/latest/meta-data", "http://10.0.0.8/hook", "http://[::1]:9/x",
            "ftp://hooks.example.com/x", "https://user:pass@hooks.example.com/x",
        ] {
            let refused = try await sandbox.run(["webhook", "add", "evil", url])
            #expect(refused.status != 0 && refused.stderr.hasPrefix("error: "), "\(url): \(refused)")
        }
        #expect(try await sandbox.snapshot() == before)
        // A name is checked where it matters: at delivery, before each connection.
        try await sandbox.ok("webhook", "add", "named", "http://localhost:9/hook")
    }

    @Test func aMasterKeyRotationResealsEndpointSecretsAndTheSigningKey() async throws {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("webhook", "add", "ops", "http://localhost:9/hook")
        let rotated = try await sandbox.ok("keys", "rotate", "--json").stdout
        #expect(rotated.contains("rotated") || rotated.contains("Rotated"), "\(rotated)")
        #expect(try await sandbox.ok("audit", "--json").stdout.contains("resealed_webhook_secrets"))
        // Delivery opens the secret and the key under the new master key; it gets as far as the address check.
        let delivered = try await sandbox.run(["webhook", "deliver", "--now"])
        #expect(!delivered.stdout.contains("does not open") && delivered.stdout.contains("loopback"), "\(delivered)")
        try await sandbox.ok("audit", "verify")
    }
}
