import Foundation
import PlugboardTestSupport
import Testing

/// Backups taken while a host and writers use the board, and restores that never revive what was stopped: the host,
/// the writers and the CLI are separate processes, as in every deployment.
@Suite("backup and restore of a board in use", .timeLimit(.hangGuard), .serialized)
struct BackupRestoreTests {
    static let hostBinary = Sandbox.builtExecutable("plugboard-test-host")
    static let alpha = "com.example.alpha"

    func makeBoard() async throws -> Sandbox {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        try await sandbox.ok("plugin", "register", sandbox.write("alpha.json", manifest(Self.alpha, "1.0.0")))
        try await sandbox.ok("plugin", "enable", Self.alpha)
        try await sandbox.ok("token", "create", "--name", "ci", "--json")
        try await sandbox.ok("access-token", "create", "--principal", "alice", "--name", "laptop")
        return sandbox
    }

    func startHost(_ sandbox: Sandbox) async throws -> ChildProcess {
        let host = try ChildProcess(Self.hostBinary, ["--db", sandbox.board, "--plugins", Self.alpha, "--poll-ms", "50"])
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "the host did not start: \(host.errorOutput)")
        return host
    }

    static func event(_ name: String) -> (String) -> Bool {
        { $0.contains("\"event\":\"\(name)\"") && $0.contains("\"plugin\":\"\(alpha)\"") }
    }

    @Test("backups taken while a host runs and writers write are complete, private and verify")
    func backupsOfABoardInUseVerify() async throws {
        let sandbox = try await makeBoard()
        let host = try await startHost(sandbox)
        #expect(await host.waitForLine(Self.event("loaded")) != nil, "alpha did not load: \(host.output)")
        let writers = Task {
            for index in 0..<20 { _ = try await sandbox.run(["flag", "create", "flag-\(index)"]) }
        }
        for round in 0..<3 {
            let file = sandbox.root.appendingPathComponent("backup-\(round).sqlite").path
            let result = try await sandbox.ok("backup", "--to", file, "--json")
            let report = try #require(try result.json() as? [String: Any])
            #expect((report["seq"] as? Int ?? 0) > 0, "\(report)")
            #expect((report["state_root"] as? String)?.count == 64, "\(report)")
            #expect((report["size"] as? Int ?? 0) > 0 && report["time"] is String, "\(report)")
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "backup \(round) has mode \(String(mode ?? 0, radix: 8))")
            #expect(!FileManager.default.fileExists(atPath: file + "-wal"), "backup \(round) left a write-ahead log beside it")
            let verified = try await sandbox.run(["audit", "verify", "--db", file], db: false)
            #expect(verified.status == 0, "backup \(round) does not verify: \(verified)")
        }
        try await writers.value
        #expect(await host.closeInput() == 0)
    }

    @Test("a restore is refused while a host has the board open, and names it; the board is unchanged")
    func restoreRefusedWhileAHostRuns() async throws {
        let sandbox = try await makeBoard()
        let backup = sandbox.root.appendingPathComponent("backup.sqlite").path
        try await sandbox.ok("backup", "--to", backup)
        let host = try await startHost(sandbox)
        let before = try await sandbox.ok("audit", "checkpoint").stdout
        let refused = try await sandbox.run(["restore", "--from", backup])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("cannot restore the board at \(sandbox.board)"), "\(refused)")
        #expect(refused.stderr.contains("\(host.pid)"), "the refusal does not name the host process: \(refused)")
        #expect(refused.stdout.isEmpty)
        #expect(try await sandbox.ok("audit", "checkpoint").stdout == before)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).filter { $0.contains(".restore-") }
        #expect(leftovers.isEmpty, "the refused restore left \(leftovers)")
        #expect(await host.closeInput() == 0)
    }

    @Test("a restore carries newer kill switches, yanks and revocations forward: the host does not load the plug-in again")
    func restoreNeverRevives() async throws {
        let sandbox = try await makeBoard()
        let keyFile = sandbox.root.appendingPathComponent("publisher.key").path
        let key = try #require(try await sandbox.ok("signing-key", "generate", "--out", keyFile, "--json").json() as? [String: String])
        let keyID = try #require(key["keyID"])
        try await sandbox.ok("signer", "add", Self.alpha, try #require(key["publicKey"]))
        let backup = sandbox.root.appendingPathComponent("backup.sqlite").path
        try await sandbox.ok("backup", "--to", backup)
        try await sandbox.ok("plugin", "kill", Self.alpha, "--reason", "crashes hosts")
        try await sandbox.ok("plugin", "yank", Self.alpha, "1.0.0", "--reason", "bad release")
        try await sandbox.ok("signer", "revoke", keyID, "--reason", "laptop stolen")
        try await sandbox.ok("token", "revoke", "ci")
        try await sandbox.ok("access-token", "revoke", "laptop", "--principal", "alice", "--reason", "lost")

        let restored = try await sandbox.ok("restore", "--from", backup, "--json")
        let report = try #require(try restored.json() as? [String: Any])
        let carried = (report["carried"] as? [[String: Any]] ?? []).map { "\($0["kind"] ?? "") \($0["target"] ?? "")" }
        #expect(
            carried == [
                "kill switch \(Self.alpha)", "yank \(Self.alpha)@1.0.0", "signer revocation \(keyID)", "token revocation ci",
                "access token revocation alice/laptop",
            ],
            "\(report)")
        let kept = try #require(report["replaced_board_kept_at"] as? String)
        #expect(FileManager.default.fileExists(atPath: kept))
        try await sandbox.ok("audit", "verify")
        let rows = try await sandbox.ok("audit", "--json").stdout
        #expect(rows.components(separatedBy: "restore.carried-forward").count - 1 == 5, "\(rows)")
        #expect(rows.contains("board.restore"))
        let tokens = try await sandbox.ok("token", "list").stdout
        #expect(tokens.contains("revoked"), "\(tokens)")
        let signers = try await sandbox.ok("signer", "list").stdout
        #expect(signers.contains("laptop stolen"), "\(signers)")

        let host = try await startHost(sandbox)
        #expect(await host.waitForLine(Self.event("skipped")) != nil, "the restored board let alpha load: \(host.output)")
        #expect(!host.output.contains(where: Self.event("loaded")))
        #expect(await host.closeInput() == 0)
    }

    @Test("without carrying forward, the restored board is the backup's, plus the restore's own audit row")
    func restoreWithoutCarryForward() async throws {
        let sandbox = try await makeBoard()
        let backup = sandbox.root.appendingPathComponent("backup.sqlite").path
        try await sandbox.ok("backup", "--to", backup)
        try await sandbox.ok("plugin", "kill", Self.alpha, "--reason", "crashes hosts")
        let restored = try await sandbox.ok("restore", "--from", backup, "--without-carry-forward")
        #expect(restored.stdout.contains("Carried forward: nothing (carrying forward was turned off"), "\(restored.stdout)")
        let show = try await sandbox.ok("plugin", "show", Self.alpha).stdout
        #expect(!show.contains("crashes hosts"), "\(show)")
        try await sandbox.ok("audit", "verify")
    }

    @Test(
        "a backup made by an earlier Plugboard is migrated as part of the restore, and verifies",
        .enabled(if: geteuid() == 0, "the earlier board's admin is root"))
    func restoreOfAnOlderBoardMigratesIt() async throws {
        let sandbox = try await makeBoard()
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PlugboardStoreTests/Fixtures/legacy-board/legacy-board.sqlite")
        let backup = sandbox.root.appendingPathComponent("legacy.sqlite").path
        try FileManager.default.copyItem(atPath: fixture.path, toPath: backup)
        let restored = try await sandbox.ok("restore", "--from", backup)
        #expect(restored.stdout.contains("The backup's schema was older than this binary's: applied"), "\(restored.stdout)")
        try await sandbox.ok("audit", "verify")
        try await sandbox.ok("migrate", "--status")
        let show = try await sandbox.ok("plugin", "show", "com.example.greeter").stdout
        #expect(show.contains("INC-2"), "\(show)")
    }

    @Test("a file that is not a verifying board is refused before anything is touched")
    func badBackupsAreRefused() async throws {
        let sandbox = try await makeBoard()
        let before = try await sandbox.ok("audit", "checkpoint").stdout
        let garbage = try sandbox.write("garbage.sqlite", String(repeating: "not a board ", count: 500))
        for (file, words) in [(garbage, "is not a board this binary can use"), ("/nonexistent/backup.sqlite", "there is no backup at")] {
            let result = try await sandbox.run(["restore", "--from", file])
            #expect(result.status == 1 && result.stderr.contains(words), "\(result)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result)")
        }
        let wrongTarget = try await sandbox.run(["backup", "--to", sandbox.board])
        #expect(wrongTarget.status == 1 && wrongTarget.stderr.contains("is the board itself"), "\(wrongTarget)")
        #expect(try await sandbox.ok("audit", "checkpoint").stdout == before)
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path)
        #expect(!files.contains { $0.contains(".restore-") || $0.contains(".backup-") || $0.contains(".replaced-") }, "\(files)")
    }

    @Test("a board that cannot be read, whose write-ahead log is not empty, is not replaced: both stay as they were")
    func unreadableBoardWithALogIsNotReplaced() async throws {
        let sandbox = try await makeBoard()
        let backup = sandbox.root.appendingPathComponent("backup.sqlite").path
        try await sandbox.ok("backup", "--to", backup)
        let damaged = Data(String(repeating: "damaged ", count: 4096).utf8)
        let log = Data(repeating: 7, count: 8192)
        try damaged.write(to: URL(fileURLWithPath: sandbox.board))
        try log.write(to: URL(fileURLWithPath: sandbox.board + "-wal"))
        let refused = try await sandbox.run(["restore", "--from", backup])
        #expect(refused.status == 1 && refused.stderr.contains("its write-ahead log (\(sandbox.board)-wal, 8192 bytes)"), "\(refused)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.board)) == damaged)
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path)
        #expect(!files.contains { $0.contains(".restore-") || $0.contains(".replaced-") }, "\(files)")

        // Moved aside together, as the refusal says, the board is restored.
        for suffix in ["", "-wal", "-shm"] { rename(sandbox.board + suffix, sandbox.board + ".aside" + suffix) }
        try await sandbox.ok("restore", "--from", backup)
        try await sandbox.ok("audit", "verify")
    }
}
