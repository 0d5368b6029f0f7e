import Foundation
import GRDB
import PlugboardModel
import PlugboardTestSupport
import Synchronization
import Testing

@testable import PlugboardStore

/// Webhook endpoints: admins add and change them, each change one audit row that never names the secret; delivery's
/// progress is runtime data without audit rows.
@Suite("webhook endpoints", .timeLimit(.hangGuard))
struct WebhookStoreTests {
    static let admin = try! Principal(osUser: "alice")
    static let mallory = try! Principal(osUser: "mallory")
    static let key = WebhookSigningKey(publicKey: "cHVibGlj", sealedPrivateKey: Data([1, 2, 3]))

    static func endpoint(_ name: String = "ops", events: String = "*", environment: String? = nil) -> NewWebhook {
        NewWebhook(
            name: name, url: "https://hooks.example.com/\(name)", events: events, environment: environment, format: .standard,
            sealedSecret: Data([9, 9, 9]), signingKey: key)
    }

    @Test func anAddedEndpointStartsAtTheHeadAndEveryChangeIsOneAuditRow() throws {
        let board = try Board.inMemory(by: Self.admin)
        let head = try board.auditHead()
        _ = try board.addWebhook(Self.endpoint(), by: Self.admin)
        var ops = try board.webhook("ops")
        #expect(ops.cursor == head && ops.enabled && ops.format == .standard && !ops.failing)
        // Its first event is its own add.
        #expect(try board.auditRows(after: ops.cursor, limit: 10).map(\.action) == ["webhook.add"])
        #expect(try board.webhookSigningKey() == Self.key)

        _ = try board.setWebhookEnabled("ops", false, by: Self.admin)
        #expect(try !board.webhook("ops").enabled)
        _ = try board.setWebhookEnabled("ops", true, by: Self.admin)
        _ = try board.rotateWebhookSecret("ops", sealedSecret: Data([7]), by: Self.admin)
        #expect(try board.sealedWebhookSecret("ops") == Data([7]))
        _ = try board.replayWebhook("ops", from: 1, by: Self.admin)
        ops = try board.webhook("ops")
        #expect(ops.cursor == 0)
        let actions = try board.auditRecords(AuditQuery(target: "ops")).map(\.action)
        #expect(actions == ["webhook.add", "webhook.disable", "webhook.enable", "webhook.rotate-secret", "webhook.replay"])
        // No audit row carries the sealed secret.
        for row in try board.auditRecords(AuditQuery(target: "ops")) {
            #expect(!(row.afterJSON ?? "").contains("secret") && !(row.beforeJSON ?? "").contains("secret"))
        }
        _ = try board.removeWebhook("ops", by: Self.admin)
        #expect(try board.webhooks().isEmpty)
        #expect(try board.verifyAudit().ok)
    }

    @Test func onlyAdminsChangeEndpointsAndNamesAndFiltersAreChecked() throws {
        let board = try Board.inMemory(by: Self.admin)
        #expect(throws: BoardError.self) { try board.addWebhook(Self.endpoint(), by: Self.mallory) }
        #expect(throws: BoardError.self) { try board.addWebhook(Self.endpoint("bad name"), by: Self.admin) }
        #expect(throws: BoardError.self) { try board.addWebhook(Self.endpoint(events: "plugin.*x"), by: Self.admin) }
        #expect(throws: BoardError.self) { try board.addWebhook(Self.endpoint(environment: "nowhere"), by: Self.admin) }
        _ = try board.addWebhook(Self.endpoint(), by: Self.admin)
        #expect(throws: BoardError.self) { try board.addWebhook(Self.endpoint(), by: Self.admin) }
        #expect(throws: BoardError.self) { try board.removeWebhook("ops", by: Self.mallory) }
        #expect(try board.webhooks().count == 1)
    }

    @Test func deliveryProgressMovesTheCursorWithoutAuditRows() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.addWebhook(Self.endpoint(), by: Self.admin)
        let head = try board.auditHead()
        try board.recordWebhookFailed("ops", status: 500, error: "answered 500", nextAttempt: Date().addingTimeInterval(5))
        var ops = try board.webhook("ops")
        #expect(ops.attempts == 1 && ops.lastStatus == 500 && ops.failingSince != nil && ops.nextAttemptAt != nil)
        let synchronous = { try board.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") } }
        let durable = try synchronous()
        #expect(try board.recordWebhookDelivered("ops", from: ops.cursor, through: head, status: 200))
        // Progress commits without waiting for the disk; the connection's own setting, which changes wait for, is back.
        #expect(try synchronous() == durable && durable == 2)
        ops = try board.webhook("ops")
        #expect(ops.cursor == head && ops.attempts == 0 && ops.failingSince == nil && ops.lastError == nil)
        #expect(try board.auditHead() == head)
        // A replay meanwhile wins over a delivery that started before it.
        _ = try board.replayWebhook("ops", from: 1, by: Self.admin)
        #expect(try !board.recordWebhookDelivered("ops", from: head, through: head + 1, status: 200))
        #expect(try board.webhook("ops").cursor == 0)
        #expect(try board.verifyAudit().ok)
    }

    @Test func anEndpointFailingForADayShowsAsFailing() throws {
        let now = Mutex(Date())
        let clock = TimeSource(date: { now.withLock { $0 } }, instant: { ContinuousClock.now })
        let board = try Board.inMemory(by: Self.admin, clock: clock)
        _ = try board.addWebhook(Self.endpoint(), by: Self.admin)
        try board.recordWebhookFailed("ops", status: nil, error: "no answer in time", nextAttempt: now.withLock { $0 })
        #expect(try !board.webhook("ops").failing)
        now.withLock { $0 += 86_400 }
        try board.recordWebhookFailed("ops", status: 503, error: "answered 503", nextAttempt: now.withLock { $0 })
        let ops = try board.webhook("ops")
        #expect(ops.failing && ops.attempts == 2 && ops.lastStatus == 503)
        try board.recordWebhookDelivered("ops", from: ops.cursor, through: ops.cursor, status: 200)
        #expect(try !board.webhook("ops").failing)
    }

    @Test func eventFiltersMatchExactActionsGroupsAndEnvironments() {
        #expect(WebhookEndpoint.matches(events: "plugin.kill,change.*", action: "change.apply"))
        #expect(WebhookEndpoint.matches(events: "plugin.kill,change.*", action: "plugin.kill"))
        #expect(!WebhookEndpoint.matches(events: "plugin.kill,change.*", action: "plugin.revive"))
        #expect(WebhookEndpoint.matches(events: "*", action: "flag.create"))
    }
}
