import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `strace` binary, if the machine has one.
let straceBinary: String? = ["/usr/bin/strace", "/bin/strace"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// A restore that fails or is killed at any step of its swap keeps an acknowledged kill switch whose frames were only in
/// the board's write-ahead log: the real binary under `strace`, each rename, link, unlink and flush failed with EIO or
/// the process killed with SIGKILL as it enters it, in turn.
@Suite(
    "a restore failed or killed at each step", .timeLimit(.hangGuard), .serialized,
    .enabled(if: straceBinary != nil || ProcessInfo.processInfo.environment["CI"] != nil, "needs strace (the CI installs it)"))
struct RestoreCrashTests {
    static let strace = straceBinary
    static let alpha = "com.example.alpha"
    static let files = ["board.sqlite", "board.sqlite-wal", "board.sqlite-shm", "board.sqlite.key", "backup.sqlite"]

    /// A board whose kill switch of alpha is only in its `-wal` (a host that had the board open was killed with
    /// SIGKILL after the kill was acknowledged, so nobody checkpointed it), and a backup from before the kill.
    func boardWithKillInWAL() async throws -> Sandbox {
        _ = try #require(Self.strace, "strace is missing: the CI installs it (.ci/run)")
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        try await sandbox.ok("plugin", "register", sandbox.write("alpha.json", manifest(Self.alpha, "1.0.0")))
        try await sandbox.ok("plugin", "enable", Self.alpha)
        try await sandbox.ok("backup", "--to", sandbox.root.appendingPathComponent("backup.sqlite").path)
        let host = try ChildProcess(
            Sandbox.builtExecutable("plugboard-test-host"), ["--db", sandbox.board, "--plugins", Self.alpha, "--poll-ms", "50"])
        #expect(await host.waitForLine { $0.contains("\"started\"") } != nil, "the host did not start: \(host.errorOutput)")
        try await sandbox.ok("plugin", "kill", Self.alpha, "--reason", "incident")
        #expect(await host.stop(signal: SIGKILL) != nil)
        var info = stat()
        #expect(stat(sandbox.board + "-wal", &info) == 0 && info.st_size > 0, "the kill switch is not only in the write-ahead log")
        return sandbox
    }

    /// The files of `sandbox` as they are now, to start each case from.
    func keep(_ sandbox: Sandbox) throws -> URL {
        let saved = sandbox.root.appendingPathComponent("saved")
        try FileManager.default.createDirectory(at: saved, withIntermediateDirectories: true)
        for name in Self.files {
            try FileManager.default.copyItem(at: sandbox.root.appendingPathComponent(name), to: saved.appendingPathComponent(name))
        }
        return saved
    }

    /// Puts the saved files back and removes whatever an earlier case left beside the board.
    func reset(_ sandbox: Sandbox, from saved: URL) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path)
        where name.hasPrefix("board.sqlite") || name.hasPrefix(".board.sqlite") || name == "backup.sqlite" {
            try FileManager.default.removeItem(at: sandbox.root.appendingPathComponent(name))
        }
        for name in Self.files {
            try FileManager.default.copyItem(at: saved.appendingPathComponent(name), to: sandbox.root.appendingPathComponent(name))
        }
    }

    /// How often an uninterrupted restore makes each system call.
    func calls(_ sandbox: Sandbox, _ names: [String]) async throws -> [String: Int] {
        let trace = sandbox.root.appendingPathComponent("trace.txt").path
        let result = try await sandbox.run(
            ["restore", "--from", "backup.sqlite"],
            prefix: [try #require(Self.strace), "-f", "-o", trace, "-e", "trace=\(names.joined(separator: ","))"])
        #expect(result.status == 0, "\(result)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        return Dictionary(uniqueKeysWithValues: names.map { name in (name, lines.filter { $0.contains(" \(name)(") }.count) })
    }

    /// The board opens, verifies and has the kill switch.
    func expectKilled(_ sandbox: Sandbox, _ label: String) async throws {
        let verified = try await sandbox.run(["audit", "verify"])
        #expect(verified.status == 0, "\(label): the board does not verify: \(verified)")
        let list = try await sandbox.run(["plugin", "list", "--json"])
        let rows = try? list.json() as? [[String: Any]]
        let killed = rows?.first { $0["id"] as? String == Self.alpha }?["killed"] as? Bool
        #expect(killed == true, "\(label): the acknowledged kill switch is gone: \(list)")
    }

    @Test("each rename, link, unlink and flush failed with EIO, or the restore killed as it enters it: the kill switch stays")
    func failedAndKilledAtEachStep() async throws {
        let sandbox = try await boardWithKillInWAL()
        let saved = try keep(sandbox)
        let counts = try await calls(sandbox, ["rename", "link", "unlink", "fsync", "fdatasync"])
        #expect(counts["rename"] ?? 0 >= 1 && counts["link"] ?? 0 >= 1 && counts["fsync"] ?? 0 >= 3, "\(counts)")
        var cases: [(String, String, Int)] = []
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) where count > 0 {
            for when in 1...count {
                if name != "unlink" { cases.append((name, "error=EIO", when)) }
                cases.append((name, "signal=SIGKILL", when))
            }
        }
        for (name, how, when) in cases {
            try reset(sandbox, from: saved)
            let label = "\(name) #\(when) \(how)"
            let attempt = try await sandbox.run(
                ["restore", "--from", "backup.sqlite"],
                prefix: [
                    try #require(Self.strace), "-f", "-o", "/dev/null", "-e", "trace=\(name)", "-e", "inject=\(name):\(how):when=\(when)",
                ])
            if how.hasPrefix("error") {
                #expect(attempt.status == 0 || attempt.status == 1, "\(label): \(attempt)")
                #expect(!attempt.stderr.contains("Fatal error"), "\(label): \(attempt)")
                if attempt.status == 1 {
                    #expect(attempt.stderr.split(separator: "\n").count == 1, "\(label): not one sentence: \(attempt)")
                }
            }
            try await expectKilled(sandbox, "after \(label)")
            let again = try await sandbox.run(["restore", "--from", "backup.sqlite"])
            #expect(again.status == 0, "\(label): the restore run again failed: \(again)")
            try await expectKilled(sandbox, "after \(label) and the restore run again")
        }
    }

    @Test("a kill switch made while the restore copies the backup makes the restore refuse, and stays")
    func aChangeDuringTheRestoreRefusesIt() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        try await sandbox.ok("backup", "--to", sandbox.root.appendingPathComponent("backup.sqlite").path)
        // The restore's first fsync flushes its copy of the backup, after it read the board: it waits 8 s there.
        let strace = try #require(Self.strace)
        let restore = Task {
            try await sandbox.run(
                ["restore", "--from", "backup.sqlite"],
                prefix: [strace, "-f", "-o", "/dev/null", "-e", "trace=fsync", "-e", "inject=fsync:delay_enter=8000000:when=1"])
        }
        try await eventually("the restore to copy the backup beside the board") {
            try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).contains { $0.contains(".restore-") }
        }
        try await sandbox.ok("plugin", "kill", Self.alpha, "--reason", "during the restore")
        let result = try await restore.value
        #expect(result.status == 1 && result.stderr.contains("it changed while the restore read it"), "\(result)")
        try await expectKilled(sandbox, "after a refused restore")
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path)
        #expect(!files.contains { $0.contains(".restore-") || $0.contains(".replaced-") }, "\(files)")
    }

    @Test("a kill switch committed after the restore read the board, before it closed it, makes the restore refuse, and stays")
    func aChangeAfterTheBoardWasReadRefusesIt() async throws {
        let sandbox = try await Sandbox.withBoard([manifest(Self.alpha)])
        try await sandbox.ok("plugin", "enable", Self.alpha)
        try await sandbox.ok("backup", "--to", sandbox.root.appendingPathComponent("backup.sqlite").path)
        let pause = sandbox.root.appendingPathComponent("pause")
        try FileManager.default.createDirectory(at: pause, withIntermediateDirectories: true)
        // The restore stops once it has read the old board's records, with the board still open.
        let restore = Task {
            try await sandbox.run(["restore", "--from", "backup.sqlite"], environment: ["PLUGBOARD_TEST_RESTORE_PAUSE": pause.path])
        }
        try await eventually("the restore to read the board") { access(pause.appendingPathComponent("read").path, F_OK) == 0 }
        try await sandbox.ok("plugin", "kill", Self.alpha, "--reason", "while the restore read the board")
        #expect(FileManager.default.createFile(atPath: pause.appendingPathComponent("resume").path, contents: nil))
        let result = try await restore.value
        #expect(result.status == 1 && result.stderr.contains("it changed while the restore read it"), "\(result)")
        try await expectKilled(sandbox, "after a refused restore")
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path)
        #expect(!files.contains { $0.contains(".restore-") || $0.contains(".replaced-") }, "\(files)")
    }
}
