import Foundation
import PlugboardTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Webhook delivery's threads run under `SCHED_IDLE` only where they may leave it again when delivery waits too long:
/// Linux lets an unprivileged user do that only with `CAP_SYS_NICE` or an `RLIMIT_NICE` that reaches niceness 10.
@Suite("webhook delivery's priority (processes)", .timeLimit(.hangGuard))
struct WebhookPriorityProcessTests {
    @Test(.enabled(if: canSwitchUser, "needs root and setpriv, to run serve as another OS user"))
    func aServerThatMayNotLeaveTheIdlePolicyDeliversAtNicenessTenAndSaysSo() async throws {
        let sandbox = try Sandbox()
        try await sandbox.ok("init")
        try await sandbox.ok("webhook", "add", "ops", "https://example.com/hook")
        // The OS user who runs the server owns the board and its keys, without capabilities, RLIMIT_NICE 0.
        let uid: UInt32 = 64_873
        for file in try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path) {
            chown(sandbox.root.appendingPathComponent(file).path, uid, uid)
        }
        chown(sandbox.root.path, uid, uid)
        let server = try ChildProcess(
            "/usr/bin/setpriv",
            Sandbox.asUser(uid).dropFirst() + [
                "--inh-caps=-all", Sandbox.binary, "serve", "--db", sandbox.board, "--listen", "127.0.0.1:0", "--log-level",
                "notice",
            ])
        #expect(await server.waitForLine { $0.hasPrefix("Serving the board at") } != nil, "\(server.errorOutput)")
        try await eventually("serve's notice that delivery runs at niceness 10") {
            server.errorOutput.contains("webhook delivery runs at niceness 10 rather than under SCHED_IDLE")
        }
        // Its threads: some at niceness 10 (delivery's two), none under SCHED_IDLE.
        let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.pid)/task").compactMap { task in
            threadScheduling("/proc/\(server.pid)/task/\(task)/stat")
        }
        #expect(await server.stop() == 0, "\(server.errorOutput)")
        #expect(threads.contains { $0.nice == 10 }, "\(threads)")
        #expect(!threads.contains { $0.policy == 5 }, "\(threads)")
    }
}
