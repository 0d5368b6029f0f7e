import Crypto
import Foundation
import PlugboardModel
import PlugboardNetwork
import PlugboardTestSupport
import Testing

@testable import PlugboardEvents

/// What an endpoint receives: Standard Webhooks signatures a receiver can check, bodies under 20 KB with the row's
/// place in the chain, and chat and monitoring messages that name the plug-in, the reason, the person and the page.
@Suite("webhook payloads, formats and signatures", .timeLimit(.hangGuard))
struct WebhookFormatTests {
    static let payload = WebhookPayload(boardID: "b0a4d", consoleURL: "https://plugboard.example.com/")

    static func row(
        action: String = "plugin.kill", outcome: String = "ok", reason: String? = "INC-42 crashes on start", after: String? = nil
    ) -> AuditRecord {
        AuditRecord(
            seq: 12, at: "2026-11-29T10:00:00.000Z", by: "alice", onBehalfOf: nil, action: action, outcome: outcome, targetType: "plugin",
            targetID: "com.example.greeter", environment: "production", reason: reason, beforeJSON: nil, afterJSON: after,
            prevHash: String(repeating: "a", count: 64), hash: String(repeating: "b", count: 64), stateChanges: nil,
            stateRoot: String(repeating: "c", count: 64))
    }

    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theStandardBodyCarriesTheRowAndItsPlaceInTheChain() throws {
        let body = try Self.object(Self.payload.body(Self.row(after: #"{"killed":true}"#), format: .standard))
        let data = try #require(body["data"] as? [String: Any])
        #expect(body["type"] as? String == "plugin.kill")
        #expect(data["seq"] as? Int == 12 && data["prev_hash"] as? String == String(repeating: "a", count: 64))
        #expect(
            data["hash"] as? String == String(repeating: "b", count: 64)
                && data["state_root"] as? String == String(repeating: "c", count: 64))
        #expect(data["actor"] as? String == "alice" && data["reason"] as? String == "INC-42 crashes on start")
        #expect(data["console_url"] as? String == "https://plugboard.example.com/ui/plugins/com.example.greeter")
        #expect((data["after"] as? [String: Any])?["killed"] as? Bool == true)
        #expect(Self.payload.id(Self.row()) == "b0a4d:12")
    }

    @Test func aBodyStaysUnder20KBAndSaysWhenItIsThin() throws {
        let large = #"{"manifest":""# + String(repeating: "x", count: 40_000) + #""}"#
        let data = Self.payload.body(Self.row(after: large), format: .standard)
        #expect(data.count < WebhookPayload.limit)
        let body = try #require(try Self.object(data)["data"] as? [String: Any])
        #expect(body["thin"] as? Bool == true && body["after"] == nil && body["hash"] != nil)
    }

    @Test func aKillSwitchNamesThePluginTheReasonThePersonAndThePageInEveryFormat() throws {
        for format in [WebhookFormat.slack, .teams, .datadog] {
            let text = String(decoding: Self.payload.body(Self.row(), format: format), as: UTF8.self)
            for expected in [
                "com.example.greeter", "INC-42 crashes on start", "alice", "https://plugboard.example.com/ui/plugins/com.example.greeter",
            ] {
                #expect(text.contains(expected), "\(format): \(expected) in \(text)")
            }
        }
        let teams = try Self.object(Self.payload.body(Self.row(), format: .teams))
        let attachment = try #require((teams["attachments"] as? [[String: Any]])?.first)
        #expect(attachment["contentType"] as? String == "application/vnd.microsoft.card.adaptive")
        #expect((attachment["content"] as? [String: Any])?["type"] as? String == "AdaptiveCard")
        let datadog = try Self.object(Self.payload.body(Self.row(), format: .datadog))
        #expect(
            datadog["alert_type"] as? String == "error" && (datadog["tags"] as? [String])?.contains("plugin:com.example.greeter") == true)
        let slack = try Self.object(Self.payload.body(Self.row(), format: .slack))
        #expect((slack["blocks"] as? [[String: Any]])?.isEmpty == false && (slack["text"] as? String)?.contains("Kill switch") == true)
    }

    @Test func aRefusedKillIsNeitherSentFirstNorToldAsAKillSwitch() {
        let refused = Self.row(outcome: "refused")
        #expect(!WebhookFormats.isStop(refused) && WebhookFormats.isStop(Self.row()))
        #expect(Self.payload.summary(refused).contains("(refused)") && !Self.payload.summary(refused).contains("Kill switch"))
    }

    @Test func bothSignaturesVerifyOverIdTimestampAndBody() throws {
        let secret = Data((0..<32).map { UInt8($0) })
        let signing = Curve25519.Signing.PrivateKey()
        let body = Data(#"{"type":"plugin.kill"}"#.utf8)
        let headers = Dictionary(
            uniqueKeysWithValues: WebhookSigning.headers(
                id: "b0a4d:12", timestamp: 1_800_000_000, body: body, secret: secret, signingKey: signing.rawRepresentation))
        #expect(headers["webhook-id"] == "b0a4d:12" && headers["webhook-timestamp"] == "1800000000")
        let signed = Data("b0a4d:12.1800000000.".utf8) + body
        let parts = try #require(headers["webhook-signature"]).split(separator: " ").map { $0.split(separator: ",", maxSplits: 1) }
        let v1 = try #require(parts.first { $0.first == "v1" }.flatMap { Data(base64Encoded: String($0[1])) })
        #expect(HMAC<SHA256>.isValidAuthenticationCode(v1, authenticating: signed, using: SymmetricKey(data: secret)))
        let v1a = try #require(parts.first { $0.first == "v1a" }.flatMap { Data(base64Encoded: String($0[1])) })
        #expect(signing.publicKey.isValidSignature(v1a, for: signed))
        #expect(!signing.publicKey.isValidSignature(v1a, for: signed + Data("x".utf8)))
    }

    @Test func retriesFollowTheScheduleWithJitterAndHonourRetryAfter() {
        var settings = WebhookSettings()
        let now = Date()
        let first = WebhookSettings.seconds(settings.wait(afterAttempts: 1, retryAfter: nil, now: now))
        #expect((4.5...5.5).contains(first))
        let last = WebhookSettings.seconds(settings.wait(afterAttempts: 50, retryAfter: nil, now: now))
        #expect((32_400...39_600).contains(last))
        #expect(WebhookSettings.seconds(settings.wait(afterAttempts: 1, retryAfter: "120", now: now)) == 120)
        settings.schedule = [.milliseconds(200)]
        #expect(WebhookSettings.seconds(settings.wait(afterAttempts: 3, retryAfter: nil, now: now)) < 0.3)
        #expect(WebhookSettings.schedule("200ms,1s,5m,2h") == [.milliseconds(200), .seconds(1), .seconds(300), .seconds(7200)])
        #expect(WebhookSettings.schedule("soon") == nil)
    }

    @Test func urlsAreHTTPWithPublicLiteralAddressesUnlessPrivateIsAllowed() throws {
        #expect(throws: BoardError.self) { try WebhookAddress.check("http://169.254.169.254/latest", allowPrivate: true) }
        #expect(throws: BoardError.self) { try WebhookAddress.check("http://127.0.0.1:9/x", allowPrivate: false) }
        #expect(throws: BoardError.self) { try WebhookAddress.check("http://[::ffff:10.0.0.1]/x", allowPrivate: false) }
        #expect(throws: BoardError.self) { try WebhookAddress.check("file:///etc/passwd", allowPrivate: true) }
        _ = try WebhookAddress.check("http://127.0.0.1:9/x", allowPrivate: true)
        _ = try WebhookAddress.check("https://hooks.slack.com/services/T/B/X", allowPrivate: false)
    }
}
