import Foundation
import GRDB
import PlugboardFlags
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardStore

/// `REGEX` patterns in `values`: boards accepted them once and their hosts matched any of them, while Unleash's SDKs
/// read only `value`. A board reads them into `value`, so every client sees the pattern the flag was written with.
@Suite("REGEX patterns stored in values", .timeLimit(.hangGuard))
struct RegexValuesTests {
    static let admin = try! Principal(osUser: "alice")

    @Test func aBoardReadsRegexPatternsStoredInValuesIntoValueAndKeepsTheirMeaning() throws {
        let board = try Board.inMemory(by: Self.admin)
        let written = try FeatureSet.decode(
            from: #"""
                {"version":2,"features":[{"name":"gate","enabled":true,"strategies":[{"name":"default",
                 "constraints":[{"contextName":"userId","operator":"REGEX","value":"^x$"}],"segments":[1]}]}],
                 "segments":[{"id":1,"constraints":[{"contextName":"appName","operator":"REGEX","value":"^x$"}]}]}
                """#)
        _ = try board.importFlags(written, environment: "production", by: Self.admin)
        // What an older board holds (written behind the log here: no command accepts `values` for REGEX any more).
        try board.writer.writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    UPDATE flag_environments SET strategies_json = '[{"name":"default","constraints":[{"contextName":"userId","operator":"REGEX","values":["^a","^b"]}],"segments":[1]}]';
                    UPDATE segments SET constraints_json = '[{"contextName":"appName","operator":"REGEX","values":["^shop$"]}]';
                    """)
        }
        let read = try board.featureSet(environment: "production")
        let constraint = try #require(read.features.first?.strategies?.first?.constraints?.first)
        #expect(constraint.value == "(?:^a)|(?:^b)" && constraint.values == nil)
        #expect(read.segments?.first?.constraints.first?.value == "^shop$")
        let snapshot = try FlagSnapshot(read)
        for (user, app, expected) in [("alice", "shop", true), ("bob", "shop", true), ("carol", "shop", false), ("alice", "admin", false)] {
            #expect(snapshot.isEnabled("gate", context: UnleashContext(userId: user, appName: app)) == expected, "\(user) \(app)")
        }
        // Another flag's change validates the whole environment, this flag included: it is not refused for it.
        let other = try FeatureSet.decode(from: #"{"version":2,"features":[{"name":"other","enabled":true}]}"#)
        _ = try board.importFlags(other, environment: "production", by: Self.admin)
        #expect(try board.featureSet(environment: "production").features.map(\.name) == ["gate", "other"])
    }
}
