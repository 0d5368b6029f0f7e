import Foundation
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// What `plugboard serve` keeps in the board: tokens (audited, hash only) and client usage (unaudited, bounded).
@Suite("tokens and client usage", .timeLimit(.hangGuard))
struct ServeStoreTests {
    static let admin = try! Principal(osUser: "alice")
    static let stranger = try! Principal(osUser: "mallory")

    @Test func tokensKeepOnlyADigestAndEveryChangeIsAudited() throws {
        let board = try Board.inMemory(by: Self.admin)
        let created = try board.createAPIToken(name: "shop", environment: "default", by: Self.admin)
        #expect(created.secret.hasPrefix("*:default.pb_") && created.token.state == .active)
        let credential = try #require(try board.apiTokenCredentials().first)
        #expect(APITokenSecret.constantTimeEquals(credential.digest, APITokenSecret.digest(created.secret)))
        #expect(!APITokenSecret.constantTimeEquals(credential.digest, APITokenSecret.digest(created.secret + "x")))

        #expect(throws: BoardError.self) { try board.createAPIToken(name: "shop", environment: "default", by: Self.admin) }
        #expect(throws: BoardError.self) { try board.createAPIToken(name: "evil", environment: "default", by: Self.stranger) }
        #expect(throws: BoardError.self) {
            try board.createAPIToken(name: "late", environment: "default", expiresAt: Date(timeIntervalSinceNow: -60), by: Self.admin)
        }
        #expect(try board.revokeAPIToken("shop", reason: "rotated", by: Self.admin).changed)
        #expect(try board.revokeAPIToken("shop", by: Self.admin).changed == false)
        #expect(try board.apiTokenCredentials().first?.revoked == true)
        #expect(try board.apiTokens().first?.state == .revoked)

        let actions = try board.auditRecords(AuditQuery()).map { "\($0.action):\($0.outcome)" }
        #expect(actions.filter { $0.hasPrefix("token.") } == ["token.create:ok", "token.create:refused", "token.revoke:ok"])
        #expect(try board.auditRecords(AuditQuery()).allSatisfy { !($0.afterJSON ?? "").contains(created.secret) })
        #expect(try board.verifyAudit().ok)
    }

    @Test func usageAddsUpIsUnauditedAndOldBucketsGo() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.createFlag("used", by: Self.admin)
        _ = try board.createFlag("unused", by: Self.admin)
        let auditRows = try board.auditRecords(AuditQuery()).count
        let now = Date()
        let bucket = FlagUsageCount.bucket(for: now)
        let old = FlagUsageCount.bucket(for: now.addingTimeInterval(-40 * 86400))
        for _ in 0..<2 {
            try board.recordClientUsage(
                registrations: [ClientRegistration(appName: "shop", instanceID: "1", environment: "default", sdkVersion: "sdk:1")],
                usage: [
                    FlagUsageCount(
                        bucket: bucket, flag: "used", environment: "default", appName: "shop", yes: 3, no: 1, variants: ["a": 2]),
                    FlagUsageCount(bucket: old, flag: "unused", environment: "default", appName: "shop", yes: 9, no: 0),
                ], now: now)
        }
        let usage = try #require(try board.flagUsage("used").first)
        #expect(usage.yes == 6 && usage.no == 2 && usage.variants == ["a": 4] && usage.lastSeen == bucket)
        #expect(try board.flagUsage("unused").isEmpty, "buckets older than 30 days are deleted")
        #expect(try board.unusedFlags(environment: "default", days: 7).map(\.name) == ["unused"])
        #expect(try board.clientInstances().map(\.instanceID) == ["1"])
        #expect(try board.auditRecords(AuditQuery()).count == auditRows, "usage writes no audit row")
    }
}
