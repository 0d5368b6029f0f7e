import Foundation
import GRDB
import PlugboardModel
import PlugboardTestSupport
import PlugboardVersioning
import Testing

@testable import PlugboardStore

/// `Board.releaseQuarantine`: one audited change per release, for the plug-in's owners, maintainers and admins; the
/// rows reach the registry a host reads and are proven with the board's head.
@Suite("quarantine releases", .timeLimit(.hangGuard))
struct QuarantineReleaseStoreTests {
    static let admin = StoreOperationTests.admin
    static let stranger = StoreOperationTests.stranger
    static let alpha = "com.example.a"

    static func board() throws -> Board {
        let board = try Board.inMemory(by: admin)
        _ = try board.register(StoreOperationTests.manifest(alpha, "1.0.0"), by: admin)
        _ = try board.setEnabled(alpha, true, environment: "default", by: admin)
        return board
    }

    @Test func aReleaseIsAuditedReachesTheRegistryAndALaterOneReplacesIt() throws {
        let board = try Self.board()
        let version = try SemanticVersion("1.0.0")
        #expect(
            try board.releaseQuarantine(hostID: "web-1", pluginID: Self.alpha, version: version, reason: "fixed", by: Self.admin).changed)
        let first = try #require(try board.quarantineReleases().first)
        #expect(first.hostID == "web-1" && first.version == "1.0.0" && first.releasedBy == "alice" && first.reason == "fixed")

        _ = try board.releaseQuarantine(hostID: "web-1", pluginID: Self.alpha, version: version, reason: nil, by: Self.admin)
        _ = try board.releaseQuarantine(hostID: "web-2", pluginID: Self.alpha, version: version, reason: nil, by: Self.admin)
        let releases = try board.quarantineReleases()
        #expect(releases.map(\.hostID) == ["web-1", "web-2"])
        #expect(releases[0].reason == nil && releases[0].releasedAt >= first.releasedAt)

        let snapshot = try board.registrySnapshot(environment: "default", relevantTo: [])
        #expect(snapshot.quarantineReleases(forHost: "web-1").map(\.version) == ["1.0.0"])
        #expect(snapshot.quarantineReleases(forHost: "web-3").isEmpty)
        let (view, _) = try board.hostView(environment: "default", relevantTo: [])
        #expect(view.registry.quarantineReleases(forHost: "web-2").count == 1)

        let records = try board.auditRecords(AuditQuery()).filter { $0.action == "host.release-quarantine" }
        #expect(
            records.map(\.targetID) == ["com.example.a@1.0.0 on web-1", "com.example.a@1.0.0 on web-1", "com.example.a@1.0.0 on web-2"])
        #expect(records.allSatisfy { $0.outcome == "ok" })
        let verification = try board.verifyAudit()
        #expect(verification.ok, "\(verification.problems)")
    }

    @Test func refusalsWriteNoRelease() throws {
        let board = try Self.board()
        let version = try SemanticVersion("1.0.0")
        let notAllowed = #expect(throws: BoardError.self) {
            try board.releaseQuarantine(hostID: "web-1", pluginID: Self.alpha, version: version, reason: nil, by: Self.stranger)
        }
        #expect(notAllowed?.code == .notAllowed)
        let unknown = #expect(throws: BoardError.self) {
            try board.releaseQuarantine(hostID: "web-1", pluginID: "com.example.zzz", version: version, reason: nil, by: Self.admin)
        }
        #expect(unknown?.code == .notFound)
        let unregistered = #expect(throws: BoardError.self) {
            try board.releaseQuarantine(
                hostID: "web-1", pluginID: Self.alpha, version: try SemanticVersion("2.0.0"), reason: nil, by: Self.admin)
        }
        #expect(unregistered?.code == .notFound)
        let count = try board.auditRecords(AuditQuery()).count
        for host in ["", "web\n1", String(repeating: "h", count: 256)] {
            let invalid = #expect(throws: BoardError.self) {
                try board.releaseQuarantine(hostID: host, pluginID: Self.alpha, version: version, reason: nil, by: Self.admin)
            }
            #expect(invalid?.code == .invalidInput)
        }
        #expect(try board.auditRecords(AuditQuery()).count == count, "invalid input is not recorded")
        #expect(try board.quarantineReleases().isEmpty)
        #expect(try board.auditRecords(AuditQuery()).filter { $0.outcome == "refused" }.count == 3)

        // A maintainer of the plug-in may.
        _ = try board.addOwner(Self.alpha, principal: "mallory", role: .maintainer, by: Self.admin)
        #expect(
            try board.releaseQuarantine(hostID: "web-1", pluginID: Self.alpha, version: version, reason: nil, by: Self.stranger).changed)
    }

    @Test func aReleaseAddedBehindTheLogKeepsHostsFromReadingTheRegistry() throws {
        let board = try Self.board()
        // Written on the board's own connection, which the board's cache of proofs does not watch (another process's
        // edit changes `PRAGMA data_version`): nothing is proven before it.
        try board.writer.writeWithoutTransaction { db in
            try db.execute(
                sql: "INSERT INTO quarantine_releases VALUES ('web-1', ?, '1.0.0', '2026-01-01T00:00:00.000Z', 'mallory', NULL)",
                arguments: [Self.alpha])
        }
        let problem = "quarantine_releases: row com.example.a@1.0.0 on web-1 was added without an audit row"
        #expect(try board.verifyAudit().problems.contains(problem))
        let refused = #expect(throws: BoardError.self) { try board.provenRegistrySnapshot(environment: "default", anchor: nil) }
        #expect(refused?.code == .integrity && refused?.message == problem, "\(String(describing: refused))")
    }
}
