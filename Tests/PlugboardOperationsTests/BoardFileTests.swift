import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardTestSupport
import Testing

/// The operations as the Swift API: a board created, changed and read through `BoardFile`, with the checks and
/// answers of the CLI's commands.
@Suite("operations: the Swift API (BoardFile)", .timeLimit(.hangGuard))
struct BoardFileTests {
    static let admin = try! Principal(osUser: "admin")
    static let notes = """
        {"id": "com.example.notes", "name": "Notes", "version": "1.0.0", "host": ">=2.0.0 <3.0.0"}
        """

    /// A scratch folder, removed when the test ends.
    final class Folder: Sendable {
        let path = NSTemporaryDirectory() + "plugboard-board-file-\(UUID().uuidString.prefix(8))"
        init() throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func aBoardCreatedInSwiftTakesTheCLIsOperationsAndAnswersAsItsJSON() throws {
        let folder = try Folder()
        let board = try BoardFile.create(at: folder.path + "/board.sqlite", by: Self.admin)
        // What `plugboard init` makes: the board and, without PLUGBOARD_MASTER_KEY, its key file, both 0600.
        for file in [board.path] + (ProcessInfo.processInfo.environment["PLUGBOARD_MASTER_KEY"] == nil ? [board.path + ".key"] : []) {
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            #expect(mode & 0o077 == 0, "\(file) is readable by others: \(String(mode, radix: 8))")
        }

        let registered = try board.perform(PluginOperations.Register(manifest: .init(file: "notes.json", text: Self.notes)), as: Self.admin)
        #expect(registered.value.changed)
        let id = try PluginID(validating: "com.example.notes")
        _ = try board.perform(PluginOperations.Enable(id: id, env: "default"), as: Self.admin)
        let kill = try board.perform(PluginOperations.Kill(.plugin(id.text), reason: Reason(validating: "INC-7")), as: Self.admin)
        #expect(kill.value.changed)
        #expect(kill.value.message.contains("com.example.notes"), "\(kill.value.message)")

        let listed = try board.perform(PluginOperations.List(env: "default"), as: Self.admin).value
        #expect(listed.map(\.id) == ["com.example.notes"])
        #expect(listed.first?.enabled == true && listed.first?.killed == true)
        let detail = try board.perform(PluginOperations.Show(id: id), as: Self.admin).value
        #expect(detail.killSwitches.map(\.reason) == ["INC-7"])
        let audit = try board.perform(BoardOperations.Audit(since: nil, actor: nil, target: nil, limit: nil, after: nil), as: Self.admin)
        #expect(audit.value.records.map(\.action).contains("plugin.kill"))
        #expect(try board.perform(BoardOperations.Verify(checkpoint: nil), as: Self.admin).value.ok)

        // Another process's view of the same file agrees: the change is on the board, not in this handle.
        let reopened = try BoardFile.open(at: board.path)
        #expect(try reopened.perform(PluginOperations.Show(id: id), as: Self.admin).value.killSwitches.count == 1)
        #expect(try BoardFile.migrate(at: board.path, by: Self.admin).applied.isEmpty)
    }

    @Test func anOperationMadeInSwiftIsCheckedAsTheCLIChecksItsArgumentsAndChangesNothingWhenRefused() throws {
        let folder = try Folder()
        let board = try BoardFile.create(at: folder.path + "/board.sqlite", by: Self.admin)
        let flag = try NewFlagName(validating: "checkout.new")
        _ = try board.perform(FlagOperations.Create(name: flag, type: .release, description: nil), as: Self.admin)
        func auditCount() throws -> Int {
            try board.perform(BoardOperations.Audit(since: nil, actor: nil, target: nil, limit: nil, after: nil), as: Self.admin).value
                .records.count
        }
        let before = try auditCount()

        let name = try FlagName(validating: "checkout.new")
        #expect {
            _ = try board.perform(FlagOperations.Rollout(name: name, percent: 150, env: "default"), as: Self.admin)
        } throws: { error in
            (error as? BoardError)?.message.contains("the rollout percentage 150 is not between 0 and 100") == true
        }
        #expect {
            _ = try board.perform(PluginOperations.List(env: "default", limit: 0), as: Self.admin)
        } throws: { error in
            (error as? BoardError)?.message.contains("--limit must be between 1 and 10000") == true
        }
        // A principal who is no admin is refused as on the command line, and the refusal is audited.
        let mallory = try Principal(osUser: "mallory")
        #expect {
            _ = try board.perform(FlagOperations.Rollout(name: name, percent: 50, env: "default"), as: mallory)
        } throws: { error in
            (error as? BoardError)?.code == .notAllowed
        }
        let flagAfter = try board.perform(FlagOperations.Show(name: name), as: Self.admin).value
        #expect(flagAfter.environments.first { $0.environment == "default" }?.strategies.isEmpty != false)
        #expect(try auditCount() == before + 1)
    }

    @Test func theArtifactStoreAnswersOnlyForADigest() throws {
        let folder = try Folder()
        let board = try BoardFile.create(at: folder.path + "/board.sqlite", by: Self.admin)
        #expect(board.artifactPath(sha256: "../../etc/passwd") == nil)
        #expect(board.artifactPath(sha256: String(repeating: "A", count: 64)) == nil)
        #expect(board.artifactPath(sha256: String(repeating: "a", count: 64)) == nil)  // a digest it does not hold
    }
}
