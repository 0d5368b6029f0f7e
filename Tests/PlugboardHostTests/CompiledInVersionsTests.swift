import Foundation
import PlugboardFileHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardRemoteHost
import PlugboardStore
import PlugboardTestSupport
import PlugboardVersioning
import Synchronization
import Testing

@testable import PlugboardHost

/// The board file with a rollout of the test's choosing put on a plug-in in each snapshot (the board itself has none),
/// and every load report recorded, with what ran when it was written.
final class RolloutSource: HostSource {
    let inner: BoardFileSource
    let rollouts = Mutex<[String: Rollout]>([:])
    /// Each load report written, in order, and the test's own notes between them (see ``note(_:)``).
    let log = Mutex<[Note]>([])

    enum Note: Sendable {
        case report([LoadReportEntry])
        case activated(String)
    }

    init(board: Board) { inner = BoardFileSource(board: board) }

    func note(_ note: Note) { log.withLock { $0.append(note) } }
    var reports: [[LoadReportEntry]] {
        log.withLock { $0.compactMap { if case .report(let entries) = $0 { entries } else { nil } } }
    }

    var name: String { inner.name }
    func version() throws(BoardError) -> BoardVersion { try inner.version() }
    func waitForChange(interval: Duration) async { await inner.waitForChange(interval: interval) }

    func snapshot(environment: String, relevantTo: Set<String>, anchor: AuditCheckpoint?) async throws(BoardError) -> SourceSnapshot {
        var read = try await inner.snapshot(environment: environment, relevantTo: relevantTo, anchor: anchor)
        for (id, rollout) in rollouts.withLock({ $0 }) {
            guard let plugin = read.registry.plugins[id] else { continue }
            read.registry.plugins[id] = RegistrySnapshot.Plugin(
                id: plugin.id, enabled: plugin.enabled, pinnedVersion: plugin.pinnedVersion, killed: plugin.killed,
                killReason: plugin.killReason, versions: plugin.versions, rollout: rollout)
        }
        return read
    }

    func check(pluginID: String, version: String, in snapshot: SourceSnapshot) throws(BoardError) -> ReleaseCheck {
        try inner.check(pluginID: pluginID, version: version, in: snapshot)
    }
    func localArtifact(sha256: String) -> String? { inner.localArtifact(sha256: sha256) }
    func fetchArtifacts(_ digests: [String]) async -> [String: String] { [:] }
    func writeLoadReport(_ identity: HostIdentity, entries: [LoadReportEntry], source: String?) async throws(BoardError) {
        note(.report(entries))
        try await inner.writeLoadReport(identity, entries: entries, source: source)
    }
}

/// A host with several versions of a plug-in compiled in switches between them in-process as the board's selection
/// moves, and a rollout that no longer allows the running release stops it at once.
@Suite("host runtime: several compiled-in versions and rollouts", .timeLimit(.hangGuard), .serialized)
struct CompiledInVersionsTests {
    static let id = "com.example.a"

    /// A host of `source` (or the board file) with `id` compiled in at 1.0.0 and 1.1.0.
    func host(_ t: TestBoard, hostID: String = "test-host", source: (any HostSource)? = nil) async throws -> PluginHost {
        var configuration = try await t.configuration(.boardFile, hostID: hostID)
        if let source { configuration.source = source }
        let host = PluginHost(configuration: configuration)
        for version in ["1.0.0", "1.1.0"] { host.register(Self.id, version: version) { _ in TestPlugin(id: Self.id) } }
        return host
    }

    /// The next `count` loads and deactivations of `id`, as `loaded 1.1.0` and `deactivated 1.0.0 replaced`.
    static func changes(_ events: AsyncStream<HostEvent>, count: Int) async -> [String] {
        await HostRuntimeTests.collect(events, count: count) { event -> String? in
            switch event {
            case .loaded(id, let version): "loaded \(version)"
            case .deactivated(id, let version, let reason): "deactivated \(version) \(reason.code.rawValue)"
            default: nil
            }
        }
    }

    @Test func aCompiledInPluginMovesToTheVersionTheBoardSelectsAndBackWhenThatOneIsKilled() async throws {
        let t = try TestBoard()
        try t.register(Self.id, "1.0.0")
        let host = try await host(t)
        let events = host.events()
        await host.start()
        #expect(host.activePlugins.map(\.version) == ["1.0.0"])

        // A higher release on the board: the host switches to it without a restart.
        let other = try Board.open(at: t.board.path)
        _ = try other.register(
            PluginManifest.parse(Data(#"{"id":"\#(Self.id)","name":"a","version":"1.1.0"}"#.utf8)), artifactPath: nil, by: TestBoard.admin)
        #expect(await Self.changes(events, count: 3) == ["loaded 1.0.0", "deactivated 1.0.0 replaced", "loaded 1.1.0"])
        #expect(host.activePlugins.map(\.version) == ["1.1.0"])
        #expect(host.status.first?.state == .loaded && host.status.first?.version == "1.1.0")

        // Killed: back to 1.0.0, in the same reconciliation.
        _ = try other.kill(.version(Self.id, SemanticVersion("1.1.0")), reason: "INC-7", by: TestBoard.admin)
        #expect(await Self.changes(events, count: 2) == ["deactivated 1.1.0 killed", "loaded 1.0.0"])
        #expect(host.activePlugins.map(\.version) == ["1.0.0"])

        // A selected version the host lacks is reported with the versions it has.
        _ = try other.register(
            PluginManifest.parse(Data(#"{"id":"\#(Self.id)","name":"a","version":"1.2.0"}"#.utf8)), artifactPath: nil, by: TestBoard.admin)
        #expect(await Self.changes(events, count: 1) == ["deactivated 1.0.0 no_implementation"])
        #expect(host.status.first?.reason?.contains("this host has 1.0.0, 1.1.0 compiled in") == true, "\(host.status)")
        await host.stop()
    }

    @Test func aRunningReleaseTheRolloutNoLongerAllowsStopsAtOnceAndThePreviousOneLoads() async throws {
        let t = try TestBoard()
        try t.register(Self.id, "1.0.0").register(Self.id, "1.1.0")
        let source = RolloutSource(board: t.board)
        let rollout = { (state: Rollout.State) in
            Rollout(pluginID: Self.id, environment: "default", version: "1.1.0", previous: "1.0.0", steps: [1, 100], step: 0, state: state)
        }
        let outside = (0..<100).map { "host-\($0)" }.first { RolloutCohort.bucket(hostID: $0, pluginID: Self.id) >= 100 }!
        source.rollouts.withLock { $0[Self.id] = rollout(.completed) }
        let host = try await host(t, hostID: outside, source: source)
        let events = host.events()
        await host.start()
        #expect(host.activePlugins.map(\.version) == ["1.1.0"])

        // Back to the first step (1%), which does not hold this host: it leaves the cohort and returns to 1.0.0.
        source.rollouts.withLock { $0[Self.id] = rollout(.running) }
        await host.reconcile()
        #expect(await Self.changes(events, count: 3) == ["loaded 1.1.0", "deactivated 1.1.0 rollout", "loaded 1.0.0"])
        #expect(host.activePlugins.map(\.version) == ["1.0.0"])
        #expect(source.reports.last?.first?.version == "1.0.0" && source.reports.last?.first?.state == .loaded)

        // Completed again, then aborted: every host returns to 1.0.0.
        source.rollouts.withLock { $0[Self.id] = rollout(.completed) }
        await host.reconcile()
        source.rollouts.withLock { $0[Self.id] = rollout(.aborted) }
        await host.reconcile()
        #expect(
            await Self.changes(events, count: 4) == [
                "deactivated 1.0.0 replaced", "loaded 1.1.0", "deactivated 1.1.0 rollout", "loaded 1.0.0",
            ])
        #expect(host.activePlugins.map(\.version) == ["1.0.0"])
        await host.stop()
    }

    @Test func theCrashOfAPreviousProcessIsReportedBeforeAnyPluginLoadsAndEveryEntryOfTheReleaseCarriesItsCount() async throws {
        let t = try TestBoard()
        try t.register(Self.id, "1.0.0").register("com.example.b", "1.0.0")
        let state = t.folder.appendingPathComponent("state").path
        let journal = CrashJournal(folder: state)
        try journal.prepareFolder()
        for run in 1...2 {
            // A process that died in a's activation left its marker.
            try journal.writeMarker(CrashJournal.markerLine(Self.id, "1.0.0", "activate"))
            let source = RolloutSource(board: t.board)
            var configuration = try await t.configuration(.boardFile)
            configuration.source = source
            configuration.stateFolder = state
            configuration.crashQuarantine = CrashQuarantine(threshold: 3, window: .seconds(3600))
            let host = PluginHost(configuration: configuration)
            for id in [Self.id, "com.example.b"] {
                host.register(id, version: "1.0.0") { _ in
                    source.note(.activated(id))
                    return TestPlugin(id: id)
                }
            }
            await host.start()

            // The first report, written before any plug-in was activated, says that a@1.0.0 crashed the host.
            let log = source.log.withLock { $0 }
            guard case .report(let first) = log.first else {
                Issue.record("run \(run): no report before the first activation: \(log)")
                continue
            }
            let crashed = first.first { $0.pluginID == Self.id }
            #expect(crashed?.state == .failed && crashed?.reasonCode == "crashed" && crashed?.crashes == run, "\(first)")
            #expect(crashed?.version == "1.0.0" && crashed?.reason?.contains("com.example.a@1.0.0 crashed") == true)
            // Once a loads, its entry still carries the count; b's carries none.
            let status = Dictionary(uniqueKeysWithValues: host.status.map { ($0.pluginID, $0) })
            #expect(status[Self.id]?.state == .loaded && status[Self.id]?.crashes == run, "\(status)")
            #expect(status["com.example.b"]?.crashes == nil)
            await host.stop()
            #expect(source.reports.last?.first { $0.pluginID == Self.id }?.crashes == run)
        }
    }

    @Test(arguments: HostSourceKind.allCases) func theCrashReachesTheBoardBeforeThePluginsCodeIsEnteredAgain(kind: HostSourceKind)
        async throws
    {
        let t = try TestBoard()
        try t.register(Self.id, "1.0.0")
        var configuration = try await t.configuration(kind)
        if kind == .boardFile { configuration.stateFolder = t.folder.appendingPathComponent("state").path }
        if kind == .servedBoard, let served = t.servers.withLock({ $0.last }) {
            // Reports wait up to 10 minutes before they are sent: only a delivery made at once reaches the server in time.
            configuration.source = PatientSource(
                try RemoteBoardSource(
                    server: served.url, token: served.token, cacheFolder: served.cacheFolder, boardKeys: served.boardKeys.publicKeys,
                    reportDelay: .seconds(600)))
        }
        let journal = CrashJournal(folder: try #require(configuration.stateFolder))
        try journal.prepareFolder()
        try journal.writeMarker(CrashJournal.markerLine(Self.id, "1.0.0", "activate"))
        let host = PluginHost(configuration: configuration)
        // What the board says of a when the host enters a's code again (a served board stores the reports it took
        // every second: waited for here, while the host waits for the plug-in; a factory is synchronous, so this one
        // wait cannot use `eventually`).
        let seen = Mutex<[HostLoadStatus]?>(nil)
        host.register(Self.id, version: "1.0.0") { _ in
            let deadline = ContinuousClock.now + .eventDeadline
            while true {
                let rows = try? t.board.loadStatus(pluginID: Self.id)
                seen.withLock { $0 = rows }
                if rows?.isEmpty == false || ContinuousClock.now > deadline { break }
                usleep(20_000)
            }
            return TestPlugin(id: Self.id)
        }
        await host.start()
        let row = try #require(seen.withLock { $0 }?.first, "no report reached the board before a's code ran")
        #expect(row.state == .failed && row.reasonCode == "crashed" && row.version == "1.0.0", "\(row)")
        #expect(host.status.first?.crashes == 1)
        await host.stop()
    }
}
