import Foundation
import PlugboardModel
import PlugboardTestSupport
import PlugboardVersioning
import Testing

@testable import PlugboardStore

/// Advisories in the board: OSV documents taken in whole or not at all, what they affect among registered versions,
/// their action per environment, and what a host reads of them with its registry.
@Suite("advisories in the board", .timeLimit(.hangGuard))
struct AdvisoryStoreTests {
    static let admin = try! Principal(osUser: "alice")

    /// A board with the calendar at 1.0.0, 1.2.0, 1.4.1 and 1.4.2, the notes at 2.0.1 and 2.1.0 and the greeter at 1.1.0,
    /// all enabled in production.
    static func board() throws -> Board {
        let board = try Board.inMemory(by: admin)
        for (id, versions) in [
            ("com.example.calendar", ["1.0.0", "1.2.0", "1.4.1", "1.4.2"]), ("com.example.notes", ["2.0.1", "2.1.0"]),
            ("com.example.greeter", ["1.1.0"]),
        ] {
            for version in versions { _ = try board.register(StoreOperationTests.manifest(id, version), by: admin) }
            _ = try board.setEnabled(id, true, environment: "production", by: admin)
        }
        return board
    }

    static func documents(_ names: [String]) throws -> [(text: String, file: String)] {
        try names.map { (try AdvisoryFixtures.text($0), $0) }
    }

    static let all = ["PBSA-2026-0001.json", "PBSA-2026-0002.json", "PBSA-2026-0003.json", "PBSA-2026-0004.json"]

    @Test func osvRangesFollowTheSpecification() throws {
        func affects(_ events: [AdvisoryEvent], _ version: String) throws -> Bool {
            AdvisoryRange(events: events).affects(try SemanticVersion(version))
        }
        let fixed = [AdvisoryEvent(.introduced, "1.2.0"), AdvisoryEvent(.fixed, "1.4.2")]
        #expect(try !affects(fixed, "1.1.9") && affects(fixed, "1.2.0") && affects(fixed, "1.4.1") && !affects(fixed, "1.4.2"))
        let last = [AdvisoryEvent(.introduced, "0"), AdvisoryEvent(.lastAffected, "2.0.1")]
        #expect(try affects(last, "0.0.1") && affects(last, "2.0.1") && !affects(last, "2.0.2"))
        // Two stretches in one range: affected from 1.0.0 to 1.1.0, and again from 2.0.0.
        let twice = [AdvisoryEvent(.fixed, "1.1.0"), AdvisoryEvent(.introduced, "2.0.0"), AdvisoryEvent(.introduced, "1.0.0")]
        #expect(try affects(twice, "1.0.5") && !affects(twice, "1.5.0") && affects(twice, "3.0.0"))
        #expect(try AdvisoryRange(versions: ["1.1.0"]).affects(SemanticVersion("1.1.0")))
        #expect(try !AdvisoryRange(versions: ["1.1.0"]).affects(SemanticVersion("1.1.1")))
    }

    @Test func cvssV3BaseScoresAreComputedByTheSpecification() {
        #expect(CVSSv3.baseScore("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H") == 9.8)
        #expect(CVSSv3.baseScore("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H") == 10.0)
        #expect(CVSSv3.baseScore("CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:L/I:N/A:N") == 4.3)
        #expect(CVSSv3.baseScore("CVSS:3.0/AV:L/AC:H/PR:H/UI:R/S:U/C:N/I:N/A:N") == 0)
        #expect(CVSSv3.baseScore("CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N") == nil)
        #expect(CVSSv3.baseScore("CVSS:3.1/AV:N/AC:L") == nil)
        #expect(CVSSv3.severity(9.8) == .critical && CVSSv3.severity(7.5) == .high && CVSSv3.severity(4.3) == .medium)
    }

    @Test func importTakesEveryDocumentAndListsWhatTheyAffect() throws {
        let board = try Self.board()
        let result = try board.importAdvisories(try Self.documents(Self.all), by: Self.admin)
        #expect(result.changed && result.message.contains("Imported 4 advisories"), "\(result)")
        let listed = Dictionary(uniqueKeysWithValues: try board.advisories(affecting: false).map { ($0.id, $0) })
        #expect(listed["PBSA-2026-0001"]?.severity == .high)
        #expect(listed["PBSA-2026-0001"]?.aliases == ["CVE-2026-10001", "GHSA-9x4c-2m5q-7w3r"])
        #expect(listed["PBSA-2026-0001"]?.affecting == ["com.example.calendar@1.4.1", "com.example.calendar@1.2.0"])
        #expect(listed["PBSA-2026-0002"]?.severity == .critical, "the CVSS vector scores 9.8")
        #expect(listed["PBSA-2026-0002"]?.affecting == ["com.example.notes@2.0.1"])
        #expect(listed["PBSA-2026-0003"]?.withdrawn == "2026-11-22T09:00:00Z")
        #expect(listed["PBSA-2026-0004"]?.affecting == ["com.example.calendar@1.0.0", "com.example.greeter@1.1.0"])
        // --affecting: the standing ones that affect a registered version.
        #expect(try board.advisories(affecting: true).map(\.id) == ["PBSA-2026-0001", "PBSA-2026-0002", "PBSA-2026-0004"])
        // Each advisory is an audit row, and the log and the state proof verify.
        #expect(try board.auditRecords(AuditQuery()).filter { $0.action == AuditAction.advisoryImport.name }.count == 4)
        let verified = try board.verifyAudit()
        #expect(verified.ok, "\(verified)")
        // The same documents again change nothing.
        #expect(try !board.importAdvisories(try Self.documents(Self.all), by: Self.admin).changed)
    }

    @Test func aRefusedDocumentImportsNothingAndNamesTheFile() throws {
        let board = try Self.board()
        for (bad, says) in [
            ("advisories-refused/another-ecosystem.json", "for the ecosystem 'npm', not Plugboard"),
            ("advisories-refused/git-range.json", "of type GIT; only SEMVER ranges are read"),
            ("advisories-refused/malformed.json", "is not a JSON object"),
        ] {
            let documents = try Self.documents(["PBSA-2026-0001.json", bad])
            let error = #expect(throws: BoardError.self) { try board.importAdvisories(documents, by: Self.admin) }
            #expect(error?.message.contains(bad) == true && error?.message.contains(says) == true, "\(String(describing: error))")
            #expect(error?.message.hasSuffix("nothing was imported") == true)
        }
        #expect(try board.advisories(affecting: false).isEmpty)
        // Too large, and not an admin.
        let large = String(repeating: " ", count: OSVDocument.maximumSize) + (try AdvisoryFixtures.text("PBSA-2026-0001.json"))
        #expect(throws: BoardError.self) { try board.importAdvisories([(large, "large.json")], by: Self.admin) }
        let mallory = try Principal(osUser: "mallory")
        #expect(throws: BoardError.self) { try board.importAdvisories(try Self.documents(Self.all), by: mallory) }
        #expect(try board.advisories(affecting: false).isEmpty)
    }

    @Test func actionsFollowSeverityChoiceAndTheEnvironmentsFloor() throws {
        let board = try Self.board()
        _ = try board.importAdvisories(try Self.documents(Self.all), by: Self.admin)
        func action(_ id: String) throws -> AdvisoryAction? {
            try board.advisory(id).actions.first { $0.environment == "production" }?.action
        }
        #expect(try action("PBSA-2026-0001") == .refuseNew && action("PBSA-2026-0002") == .stop && action("PBSA-2026-0004") == .warn)
        #expect(try board.advisory("PBSA-2026-0003").actions.isEmpty, "a withdrawn advisory acts nowhere")
        _ = try board.setAdvisoryAction("PBSA-2026-0002", .warn, environment: "production", by: Self.admin)
        #expect(try action("PBSA-2026-0002") == .warn)
        _ = try board.setAdvisoryFloor(.refuseNew, environment: "production", by: Self.admin)
        #expect(try action("PBSA-2026-0002") == .refuseNew && action("PBSA-2026-0004") == .refuseNew)
        #expect(try board.advisoryActionLoosens("PBSA-2026-0001", to: .warn, environment: "production") == false, "the floor holds")
        #expect(try board.advisoryActionLoosens("PBSA-2026-0002", to: .stop, environment: "production") == false)
        // What a host of production reads: the standing advisories with their actions, never the withdrawn one.
        let snapshot = try board.registrySnapshot(environment: "production")
        #expect(snapshot.advisories?.map(\.id) == ["PBSA-2026-0001", "PBSA-2026-0002", "PBSA-2026-0004"])
        #expect(snapshot.advisories?.allSatisfy { $0.action == .refuseNew } == true)
        let verified = try board.verifyAudit()
        #expect(verified.ok, "\(verified)")
    }

    @Test func aWithdrawalStandsWhateverALaterImportSays() throws {
        let board = try Self.board()
        _ = try board.importAdvisories(try Self.documents(["PBSA-2026-0001.json"]), by: Self.admin)
        #expect(try board.withdrawAdvisory("PBSA-2026-0001", reason: "not exploitable here", by: Self.admin).changed)
        #expect(try !board.withdrawAdvisory("PBSA-2026-0001", reason: "again", by: Self.admin).changed)
        let newer = try AdvisoryFixtures.text("PBSA-2026-0001.json").replacingOccurrences(
            of: "2026-11-20T10:00:00Z", with: "2026-11-25T10:00:00Z")
        #expect(try board.importAdvisories([(newer, "newer.json")], by: Self.admin).changed)
        let detail = try board.advisory("PBSA-2026-0001")
        #expect(detail.modified == "2026-11-25T10:00:00Z" && detail.withdrawn != nil && detail.withdrawnBy == "alice")
        #expect(try board.registrySnapshot(environment: "production").advisories == nil)
        #expect(throws: BoardError.self) { try board.withdrawAdvisory("PBSA-2099-0001", reason: "x", by: Self.admin) }
        let verified = try board.verifyAudit()
        #expect(verified.ok, "\(verified)")
    }
}
