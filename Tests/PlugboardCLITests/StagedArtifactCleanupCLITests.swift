import Foundation
import PlugboardTestSupport
import Testing

/// Staged artifacts: what a `plugin register --artifact` killed mid-way staged is removed at the next
/// staging, while a copy that a live process is still writing is kept.
@Suite("staged artifacts a killed registration left are removed", .timeLimit(.hangGuard))
struct StagedArtifactCleanupCLITests {
    @Test func staleStagedArtifactsAreRemovedAtTheNextRegistration() async throws {
        let sandbox = try await Sandbox.withBoard()
        let artifact = try sandbox.write("lib.so", "first")
        try await sandbox.ok("plugin", "register", try sandbox.write("m1.json", manifest()), "--artifact", artifact)
        let tmp = sandbox.board + ".artifacts/tmp/"
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp).isEmpty)
        // A copy whose process is gone, an old copy from before names carried a process id, and a fresh copy of a
        // live process (this test's).
        let dead = tmp + "2147483646-0f0e0d0c-dead"
        let old = tmp + "6a1f2e3d-0000-4000-8000-000000000000"
        let live = tmp + "\(getpid())-0f0e0d0c-live"
        for path in [dead, old, live] { #expect(FileManager.default.createFile(atPath: path, contents: Data("partial".utf8))) }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: old)
        try await sandbox.ok(
            "plugin", "register", try sandbox.write("m2.json", manifest("com.example.calendar", "1.1.0")), "--artifact",
            try sandbox.write("lib2.so", "second"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp) == [live.split(separator: "/").last.map(String.init)!])
    }
}
