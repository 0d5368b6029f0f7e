import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The tests' own way of starting processes: every child is waited for, whatever else starts and ends at once; a stuck
/// child ends with its test; and nothing it opens stays open.
@Suite("the tests' child processes", .timeLimit(.hangGuard))
struct ChildProcessHygieneTests {
    /// Set in the process that ``everyDescriptorAChildOpensIsClosedAfterIt()`` starts, to run the count alone.
    static let countingAlone = ProcessInfo.processInfo.environment["PLUGBOARD_TEST_COUNT_DESCRIPTORS"] == "1"

    /// The descriptors of this process that are pipes.
    static func openPipes() -> Int {
        let folder = "/proc/self/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).count { entry in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(entry)"))?.hasPrefix("pipe:") == true
        }
    }

    /// The count itself, in a test process of its own where no other test opens anything: every kind of child the tests
    /// start (CLI runs, commands, long-running children closed, stopped, killed and dropped, a child that outlives its
    /// timeout), forty of them at once, and afterwards this process holds exactly the pipes it held before.
    @Test(.enabled(if: countingAlone))
    func descriptorsBeforeAndAfterManyChildren() async throws {
        let sandbox = try await Sandbox.withBoard()
        let before = Self.openPipes()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    switch index % 5 {
                    case 0: try await sandbox.ok("plugin", "list")
                    case 1: _ = try await Spawned.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], input: Data("x".utf8))
                    case 2:
                        let child = try ChildProcess("/bin/cat", [])
                        #expect(await child.closeInput() == 0)
                    case 3:
                        let child = try ChildProcess("/bin/sh", ["-c", "echo started; exec sleep 600"])
                        #expect(await child.waitForLine { $0 == "started" } != nil)
                        #expect(await child.stop() == SIGTERM)
                    default:
                        // Dropped while it runs: killed and reaped all the same.
                        _ = try ChildProcess("/bin/sh", ["-c", "exec sleep 600"])
                    }
                }
            }
            try await group.waitForAll()
        }
        // A command that outlives its timeout is killed, and the run says so.
        await #expect(throws: Spawned.Failure.self) {
            try await Spawned.run("/bin/sh", ["-c", "exec sleep 600"], timeout: .seconds(1))
        }
        _ = try await sandbox.boardFile.strings("SELECT action FROM audit_log")
        // Readers close their ends once a child's output ends, a moment after it exits.
        try await eventually("every pipe closed (\(before) before)") { Self.openPipes() == before }
    }

    /// Runs ``descriptorsBeforeAndAfterManyChildren()`` in a test process of its own (this test bundle, filtered to it).
    @Test(.disabled(if: countingAlone))
    func everyDescriptorAChildOpensIsClosedAfterIt() async throws {
        let bundle = CommandLine.arguments[0]
        let result = try await Spawned.run(
            bundle, ["--testing-library", "swift-testing", "--filter", "descriptorsBeforeAndAfterManyChildren"],
            environment: ProcessInfo.processInfo.environment.merging(["PLUGBOARD_TEST_COUNT_DESCRIPTORS": "1"]) { $1 },
            timeout: .seconds(540)
        ).text
        #expect(result.status == 0, "\(result)")
        // Swift Testing reports on standard error.
        let report = result.stdout + result.stderr
        #expect(report.contains("Test descriptorsBeforeAndAfterManyChildren() passed"), "\(result)")
    }

    /// An exit is seen however many children start and end at once, from many threads: two hundred short commands, fifty
    /// at a time, each waited for and its output read whole.
    @Test func everyExitIsSeenWhenManyChildrenEndAtOnce() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                if index >= 50 { try await group.next() }
                group.addTask {
                    let result = try await Spawned.run("/bin/sh", ["-c", "echo \(index); exit \(index % 7)"]).text
                    #expect(result.status == Int32(index % 7) && result.stdout == "\(index)\n", "\(result)")
                }
            }
            try await group.waitForAll()
        }
    }
}
