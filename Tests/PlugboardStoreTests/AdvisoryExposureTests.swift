import Foundation
import PlugboardModel
import PlugboardTestSupport
import PlugboardVersioning
import Testing

@testable import PlugboardStore

/// Exposure from the fleet's load reports: which hosts run an affected release, and the fix each plug-in gets (the
/// lowest release above that no advisory affects, works with the hosts and fits every dependent), with its command.
@Suite("advisory exposure in the board", .timeLimit(.hangGuard))
struct AdvisoryExposureTests {
    static let admin = try! Principal(osUser: "alice")
    static let alpha = "com.example.alpha"

    /// An OSV advisory of `alpha` from `introduced` before `fixed`.
    static func advisory(_ id: String, _ introduced: String, _ fixed: String, severity: String = "HIGH", plugin: String = alpha) -> String {
        """
        {"schema_version":"1.7.0","id":"\(id)","modified":"2026-11-20T10:00:00Z","summary":"\(id) leaks a token",
         "affected":[{"package":{"ecosystem":"Plugboard","name":"\(plugin)"},
           "ranges":[{"type":"SEMVER","events":[{"introduced":"\(introduced)"},{"fixed":"\(fixed)"}]}]}],
         "database_specific":{"severity":"\(severity)"}}
        """
    }

    /// Alpha at 1.0.0 to 2.0.0 (1.3.0 needs host API 3), beta needing alpha ^1.0; both enabled in production and staging.
    static func board() throws -> Board {
        let board = try Board.inMemory(by: admin)
        for version in ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0", "2.0.0"] {
            let host = version == "1.3.0" ? #","host":">=3.0.0""# : ""
            _ = try board.register(StoreOperationTests.manifest(alpha, version, extra: host), by: admin)
        }
        _ = try board.register(
            StoreOperationTests.manifest("com.example.beta", "1.0.0", extra: #","dependencies":{"com.example.alpha":"^1.0"}"#), by: admin)
        for environment in ["production", "staging"] {
            for id in [alpha, "com.example.beta"] { _ = try board.setEnabled(id, true, environment: environment, by: admin) }
        }
        _ = try board.importAdvisories([(advisory("PBSA-1", "1.1.0", "1.3.0"), "PBSA-1.json")], by: admin)
        _ = try board.importAdvisories([(advisory("PBSA-2", "1.4.0", "1.5.0", severity: "LOW"), "PBSA-2.json")], by: admin)
        return board
    }

    static func report(_ board: Board, _ host: String, _ environment: String, alpha version: String, beta: Bool = true) throws {
        var entries = [LoadReportEntry(pluginID: alpha, version: version, state: .loaded)]
        if beta { entries.append(LoadReportEntry(pluginID: "com.example.beta", version: "1.0.0", state: .loaded)) }
        try board.writeLoadReport(hostID: host, environment: environment, hostVersion: "2.0.0", entries: entries)
    }

    @Test func theHostsThatRunAnAffectedReleaseAndTheFixThatFitsThem() throws {
        let board = try Self.board()
        try Self.report(board, "p-1", "production", alpha: "1.1.0")
        try Self.report(board, "p-2", "production", alpha: "1.2.0")
        try Self.report(board, "p-3", "production", alpha: "1.0.0")
        try Self.report(board, "s-1", "staging", alpha: "1.2.0", beta: false)
        // A host that skipped an affected release does not run it.
        try board.writeLoadReport(
            hostID: "s-2", environment: "staging", hostVersion: "2.0.0",
            entries: [LoadReportEntry(pluginID: Self.alpha, version: "1.1.0", state: .skipped, reasonCode: "advisory", reason: "x")])

        let all = try board.advisoryExposure()
        #expect(
            all.map { "\($0.environment) \($0.pluginID) \($0.hosts.map(\.hostID))" } == [
                "production com.example.alpha [\"p-1\", \"p-2\"]", "staging com.example.alpha [\"s-1\"]",
            ])
        // 1.3.0 needs host API 3, 1.4.0 is affected by PBSA-2: 1.5.0; 2.0.0 is out of beta's range, and without beta it is
        // not the lowest either.
        let production = try #require(all.first)
        #expect(production.fix == "1.5.0" && !production.fixIsLower && !production.opensChangeRequest)
        #expect(
            production.command == "plugboard rollout start com.example.alpha 1.5.0 --env production --steps 10,50,100 --every 10m")
        #expect(production.hosts.first?.advisories == ["PBSA-1"] && production.hosts.first?.action == .refuseNew)

        // Pinned: the fix is pinned; protected: the command opens a change request.
        _ = try board.pin(Self.alpha, version: try SemanticVersion("1.1.0"), environment: "staging", by: Self.admin)
        _ = try board.setApprovalPolicy(approvals: 2, signed: nil, environment: "staging", by: Self.admin)
        let staging = try #require(try board.advisoryExposure(id: "PBSA-1", environment: "staging").first)
        #expect(staging.command == "plugboard plugin pin com.example.alpha 1.5.0 --env staging", "\(staging)")
        #expect(staging.opensChangeRequest && staging.note?.contains("needs 2 approvals") == true)

        // When nothing above fits the dependents, the highest release below that does.
        _ = try board.importAdvisories([(Self.advisory("PBSA-3", "1.5.0", "2.0.0"), "PBSA-3.json")], by: Self.admin)
        let lower = try #require(try board.advisoryExposure(id: "PBSA-1", environment: "production").first)
        #expect(
            lower.fix == "1.0.0" && lower.fixIsLower && lower.command == "plugboard plugin pin com.example.alpha 1.0.0 --env production")
        // With that one affected too, no fix, and why.
        _ = try board.importAdvisories([(Self.advisory("PBSA-4", "0", "1.1.0"), "PBSA-4.json")], by: Self.admin)
        let none = try #require(try board.advisoryExposure(id: "PBSA-1", environment: "production").first)
        #expect(none.fix == nil && none.command == nil && none.note?.contains("fits its dependents") == true, "\(none)")
    }

    @Test func onlyTheAdvisoryAskedForAndNothingForAnUnknownOne() throws {
        let board = try Self.board()
        try Self.report(board, "p-1", "production", alpha: "1.1.0")
        #expect(try board.advisoryExposure(id: "PBSA-2").isEmpty)
        #expect(try board.advisoryExposure(id: "PBSA-1").count == 1)
        #expect(try board.advisoryExposure(environment: "staging").isEmpty)
        _ = try board.withdrawAdvisory("PBSA-1", reason: "a false alarm", by: Self.admin)
        #expect(try board.advisoryExposure().isEmpty)
        #expect(throws: BoardError.self) { try board.advisoryExposure(id: "PBSA-9") }
    }

    @Test func aFixWhoseOwnDependenciesTheHostsDoNotRunIsNotTheFix() throws {
        let board = try Board.inMemory(by: Self.admin)
        let gamma = "com.example.gamma"
        for version in ["1.0.0", "1.1.0", "1.5.0"] {
            let needs = version == "1.5.0" ? #","dependencies":{"com.example.gamma":">=2.0.0"}"# : ""
            _ = try board.register(StoreOperationTests.manifest(Self.alpha, version, extra: needs), by: Self.admin)
        }
        for version in ["1.0.0", "2.0.0"] { _ = try board.register(StoreOperationTests.manifest(gamma, version), by: Self.admin) }
        _ = try board.importAdvisories([(Self.advisory("PBSA-1", "1.1.0", "1.3.0"), "PBSA-1.json")], by: Self.admin)
        for (host, environment, runs) in [("p-1", "production", "1.0.0"), ("s-1", "staging", "2.0.0")] {
            for id in [Self.alpha, gamma] { _ = try board.setEnabled(id, true, environment: environment, by: Self.admin) }
            try board.writeLoadReport(
                hostID: host, environment: environment, hostVersion: "2.0.0",
                entries: [
                    LoadReportEntry(pluginID: Self.alpha, version: "1.1.0", state: .loaded),
                    LoadReportEntry(pluginID: gamma, version: runs, state: .loaded),
                ])
        }
        // Production's host runs gamma 1.0.0, which 1.5.0 does not take: the fix is the release below. Staging's runs 2.0.0.
        let fixes = try board.advisoryExposure().map { "\($0.environment) \($0.fix ?? "none") \($0.fixIsLower)" }
        #expect(fixes == ["production 1.0.0 true", "staging 1.5.0 false"], "\(fixes)")
        // With 1.0.0 affected too, production has no fix, and the note says which dependency is not met.
        _ = try board.importAdvisories([(Self.advisory("PBSA-2", "0", "1.1.0"), "PBSA-2.json")], by: Self.admin)
        let none = try #require(try board.advisoryExposure(environment: "production").first)
        #expect(none.fix == nil, "\(none)")
        #expect(
            none.note
                == "no release of com.example.alpha free of advisories has its own dependencies on the hosts here (1.5.0 needs com.example.gamma >=2.0.0; host p-1 runs 1.0.0)",
            "\(none)")
    }
}
