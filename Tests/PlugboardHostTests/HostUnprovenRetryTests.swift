import Foundation
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardTestSupport
import Synchronization
import Testing

/// A read the host refuses as unproven, which the source retries (a served board's source does so for a new host whose
/// first snapshot was not proven fresh): the retry wakes the host and it reads again, however soon the retry comes.
@Suite("host runtime: a refused read the source retries", .timeLimit(.hangGuard))
struct HostUnprovenRetryTests {
    @Test func aRetryNotedWhileTheRefusedReadRanMakesTheHostReadAgain() async throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0")
        var configuration = try await t.configuration(.boardFile)
        let source = RefusesOnceSource(configuration.source)
        configuration.source = source
        let host = PluginHost(configuration: configuration)
        host.register("com.example.a", version: "1.0.0") { _ in TestPlugin(id: "com.example.a") }
        await host.start()
        #expect(host.activePlugins.isEmpty, "the refused read loaded \(host.activePlugins.map(\.pluginID))")
        #expect(host.status.first?.reasonCode == "unproven_state", "\(host.status)")
        // The source waits up to an hour between wakes, as a served board's does before its first snapshot: only the
        // retry's wake brings the host back.
        try await eventually("the host to read again and load com.example.a (\(host.status))") {
            host.activePlugins.map(\.pluginID) == ["com.example.a"]
        }
        #expect(source.reads == 2)
        await host.stop()
    }
}

/// The board file, except that its first read is refused as unproven and, during that read, a retry is noted at once:
/// the version moves and a wake is pending before the host has handled the refusal. Between wakes it waits an hour.
final class RefusesOnceSource: HostSource {
    struct State {
        var reads = 0
        var retries: Int64 = 0
        var wake = false
    }

    let inner: any HostSource
    let state = Mutex(State())

    init(_ inner: any HostSource) { self.inner = inner }

    var reads: Int { state.withLock { $0.reads } }
    var name: String { inner.name }

    func version() throws(BoardError) -> BoardVersion {
        let version = try inner.version()
        return BoardVersion(dataVersion: version.dataVersion, ownChanges: version.ownChanges + 2 * state.withLock { $0.retries })
    }

    func waitForChange(interval: Duration) async {
        let deadline = ContinuousClock.now + .seconds(3600)
        while ContinuousClock.now < deadline, !Task.isCancelled {
            let woken = state.withLock { state in
                defer { state.wake = false }
                return state.wake
            }
            if woken { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    func snapshot(environment: String, relevantTo: Set<String>, anchor: AuditCheckpoint?) async throws(BoardError) -> SourceSnapshot {
        let first = state.withLock { state in
            state.reads += 1
            guard state.reads == 1 else { return false }
            state.retries += 1
            state.wake = true
            return true
        }
        if first { throw BoardError(.integrity, "the first snapshot is not proven fresh") }
        var snapshot = try await inner.snapshot(environment: environment, relevantTo: relevantTo, anchor: anchor)
        snapshot.version = try version()
        return snapshot
    }

    func check(pluginID: String, version: String, in snapshot: SourceSnapshot) throws(BoardError) -> ReleaseCheck {
        try inner.check(pluginID: pluginID, version: version, in: snapshot)
    }

    func localArtifact(sha256: String) -> String? { inner.localArtifact(sha256: sha256) }
    func fetchArtifacts(_ digests: [String]) async -> [String: String] { await inner.fetchArtifacts(digests) }
    func writeLoadReport(_ identity: HostIdentity, entries: [LoadReportEntry], source: String?) async throws(BoardError) {
        try await inner.writeLoadReport(identity, entries: entries, source: source)
    }
    func deliverLoadReport() async { await inner.deliverLoadReport() }
    func finish() async { await inner.finish() }
}
