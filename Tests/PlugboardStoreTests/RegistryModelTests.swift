import Foundation
import GRDB
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import PlugboardVersioning
import Testing

@Suite("registry model", .timeLimit(.hangGuard))
struct RegistryModelTests {
    @Test func precedenceKeyOrdersLikeSemVer() throws {
        // SemVer 2.0.0 §11 example, plus numeric and length edge cases.
        let ordered = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
            "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0-0", "1.10.0-a", "1.10.0-a-b", "1.10.0", "2.0.0", "10.0.0",
            "18446744073709551615.0.0",
        ]
        let versions = try ordered.map { try SemanticVersion($0) }
        let keys = versions.map(\.precedenceKey)
        #expect(keys == keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        #expect(Set(keys).count == keys.count)
        for (a, b) in zip(versions, versions.dropFirst()) { #expect(a < b) }
        // Build metadata does not change precedence.
        #expect(try SemanticVersion("1.0.0+build.5").precedenceKey == SemanticVersion("1.0.0").precedenceKey)
    }

    @Test func aFullManifestParses() throws {
        let manifest = try PluginManifest.parse(
            Data(
                """
                {"id":"com.example.calendar","name":"Calendar","version":"1.4.0","description":"Calendar sync",
                 "host":">=2.0.0 <3.0.0","dependencies":{"com.example.auth":"^1.2"},"capabilities":["secure-storage","flags","events"],
                 "gate":"plugin.calendar.rollout","entry":"plugboard_plugin_entry","metadata":{"team":"inbox"}}
                """.utf8))
        #expect(manifest.id == "com.example.calendar")
        #expect(manifest.version == (try SemanticVersion("1.4.0")))
        #expect(manifest.dependencies.keys.sorted() == ["com.example.auth"])
        #expect(manifest.capabilities == ["secure-storage", "flags", "events"])
        #expect(manifest.metadataJSON == "{\"team\":\"inbox\"}")
        #expect(manifest.source.contains("\"Calendar sync\""))
    }

    @Test(arguments: ["com.example.calendar", "io.github.some-user.tool_2", "a.b", "org.example.x9"])
    func validIDs(_ id: String) throws {
        try Validate.pluginID(id)
    }

    @Test(arguments: [
        "", "calendar", "Com.example.x", "com..x", ".com.x", "com.x.", "9com.x", "com.-x", "com.x-", "com.ex ample", "com.exämple",
        String(repeating: "a", count: 64) + ".x",
    ])
    func invalidIDs(_ id: String) {
        #expect(throws: BoardError.self) { try Validate.pluginID(id) }
    }

    @Test func auditHashFollowsTheDocumentedEncoding() throws {
        // Recompute one row's hash from the README's description, independently of AuditLog.chainHash's loop.
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        let board = try Board.create(at: temp.path, by: TemporaryBoard.actor)
        let row = try #require(try board.auditRecords(AuditQuery()).first)
        var text = AuditLog.genesisHash + "\nplugboard-audit-v1\n"
        for field in [
            String(row.seq), row.at, row.by, row.onBehalfOf, row.action, row.outcome, row.targetType, row.targetID,
            row.environment, row.reason, row.beforeJSON, row.afterJSON,
        ] {
            text += field.map { "\($0.utf8.count):\($0)\n" } ?? "-\n"
        }
        let digest = try Spawned.runBlocking("/usr/bin/env", ["sha256sum"], input: Data(text.utf8)).text.stdout.prefix(64)
        #expect(row.hash == String(digest))
        #expect(row.prevHash == AuditLog.genesisHash)
    }

    @Test func aRefusedChangeLeavesOnlyItsAuditRow() throws {
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        let board = try Board.create(at: temp.path, by: TemporaryBoard.actor)
        let before = try board.auditRecords(AuditQuery()).count
        #expect(throws: BoardError.self) {
            try board.setEnabled("com.example.ghost", true, environment: "default", by: TemporaryBoard.actor)
        }
        let rows = try board.auditRecords(AuditQuery())
        #expect(rows.count == before + 1)
        #expect(rows.last?.outcome == "refused")
        #expect(rows.last?.reason?.contains("not registered") == true)
        #expect(try board.verifyAudit().ok)
    }

    @Test func aReadOnlyBoardRefusesWrites() throws {
        let temp = try TemporaryBoard()
        defer { temp.remove() }
        _ = try Board.create(at: temp.path, by: TemporaryBoard.actor)
        let board = try Board.open(at: temp.path, readOnly: true)
        #expect(try board.pluginSummaries(environment: "default").isEmpty)
        let error = #expect(throws: BoardError.self) { try board.addAdmin("alice", by: TemporaryBoard.actor) }
        #expect(error?.message.contains("read-only") == true)
    }
}
