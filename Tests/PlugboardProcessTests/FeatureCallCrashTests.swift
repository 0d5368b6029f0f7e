import Foundation
import PlugboardTestSupport
import Testing

/// A plug-in that crashes its host in a call of its feature, made through the host (`PluginHost.forEach`), is noticed
/// as a crash of its release, as one in activation is. Real processes: a crash cannot be tested in the test's own.
@Suite("hosts notice crashes in feature calls (processes)", .timeLimit(.hangGuard), .serialized)
struct FeatureCallCrashTests {
    @Test func aCrashInAFeatureCallIsACrashOfThatRelease() async throws {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        let alpha = CrashQuarantineTests.alpha
        let beta = CrashQuarantineTests.beta
        try await sandbox.ok("plugin", "register", sandbox.write("alpha.json", manifest(alpha)), sandbox.write("beta.json", manifest(beta)))
        try await sandbox.ok("plugin", "enable", alpha)
        try await sandbox.ok("plugin", "enable", beta)
        let state = sandbox.root.appendingPathComponent("state").path
        let arguments = [
            "--db", sandbox.board, "--plugins", "\(alpha),\(beta)", "--state", state, "--call-features", "--crash-in-call", "\(beta)@1.0.0",
        ]
        // Both activate; then the call of beta's feature kills the process.
        let first = try ChildProcess(CrashQuarantineTests.hostBinary, arguments, environment: CrashQuarantineTests.environment)
        #expect(await first.waitForExit(timeout: .eventDeadline) != nil, "the host did not crash: \(first.output)")
        #expect(first.output.contains { $0.contains(#""event":"started""#) }, "\(first.output)")
        #expect(!first.output.contains { $0.contains(#""event":"called""#) }, "\(first.output)")
        #expect(first.errorOutput.contains("crashes in a call of its feature"), "\(first.errorOutput)")

        // The next start names beta's release and the call, not alpha's, and reports it before loading.
        let second = try ChildProcess(
            CrashQuarantineTests.hostBinary, ["--db", sandbox.board, "--plugins", "\(alpha),\(beta)", "--state", state, "--call-features"],
            environment: CrashQuarantineTests.environment)
        #expect(
            await second.waitForLine {
                $0.contains(#""event":"warning""#) && $0.contains("died in the code of \(beta)@1.0.0 (call") && $0.contains("1 crash")
            } != nil, "\(second.output)")
        #expect(await second.waitForLine { $0.contains(#""event":"called""#) && $0.contains(#""plugins":"2""#) } != nil, "\(second.output)")
        #expect(!second.output.contains { $0.contains("died in the code of \(alpha)") }, "\(second.output)")
        #expect(await second.closeInput() == 0, "\(second.errorOutput)")
        let rows = try await sandbox.ok("plugin", "status", beta, "--json").json() as? [[String: Any]] ?? []
        #expect(rows.first?["crashes"] as? Int == 1, "\(rows)")
    }
}
