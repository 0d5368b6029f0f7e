import Foundation
import Hummingbird
import Logging
import PlugboardFileHost
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardRemoteHost
import PlugboardServer
import PlugboardStore
import PlugboardTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// Where a test host reads the board: the host tests run against both, with the same expectations.
enum HostSourceKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The board file, opened by the host.
    case boardFile
    /// The same board served by `plugboard serve` (in this process, on a loopback port) through `RemoteBoardSource`.
    case servedBoard

    var testDescription: String { rawValue }
}

/// `plugboard serve` over a test board, on a free loopback port, until ``stop()``.
///
/// Stopped the way `plugboard serve` stops on SIGTERM, by a graceful shutdown of its service group: cancelling the
/// task that runs the application instead drops connections the server accepted but had not yet handled, and NIO
/// traps on that in debug builds ("Deinited NIOAsyncWriter without calling finish()"), which ended a whole test run.
final class ServedTestBoard: Sendable {
    let url: URL
    let token: String
    let cacheFolder: String
    /// The board key the server signs host snapshots with.
    let boardKeys: BoardKeyring
    private let group: ServiceGroup

    init(board: Board, folder: URL) async throws {
        token = try board.createAPIToken(
            name: "hosts-\(UUID().uuidString.prefix(6))", environment: "default", kind: .hosts, by: TestBoard.admin
        )
        .secret
        var logger = Logger(label: "test.serve")
        logger.logLevel = .error
        let keys = BoardKeyring.generate()
        boardKeys = keys
        var configuration = ServerConfiguration(port: 0, pollInterval: .milliseconds(10), logger: logger)
        configuration.boardKeys = keys
        let server = PlugboardServer(board: board, configuration: configuration)
        let (group, port) = try await serveOnLoopback(logger: logger) { listening in try server.makeApplication(onListening: listening) }
        self.group = group
        url = URL(string: "http://127.0.0.1:\(port)")!
        cacheFolder = folder.appendingPathComponent("host-cache-\(UUID().uuidString.prefix(6))").path
    }

    func stop() { Task { [group] in await group.triggerGracefulShutdown() } }

    deinit { stop() }
}

/// Runs the application `make` builds in a service group of its own, until the group's graceful shutdown, and returns
/// the group and the port the application listens on. `make` gets the callback that reports the port.
func serveOnLoopback(
    logger: Logger, _ make: (@escaping @Sendable (Int) async -> Void) throws -> some Service
) async rethrows -> (group: ServiceGroup, port: Int) {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let group = ServiceGroup(configuration: .init(services: [try make { port in continuation.yield(port) }], logger: logger))
    Task { try await group.run() }
    for await port in ports { return (group, port) }
    return (group, 0)
}

extension TestBoard {
    /// The host configuration for `kind`: the board file, or the board served over HTTP.
    func configuration(_ kind: HostSourceKind, hostID: String = "test-host", environment: String = "default", flags: Bool = false)
        async throws -> HostConfiguration
    {
        let identity = HostIdentity(hostID: hostID, environment: environment, hostVersion: "2.1.0")
        switch kind {
        case .boardFile:
            return HostConfiguration(
                board: board, identity: identity, pollInterval: .milliseconds(20),
                flags: flags ? BoardFlagProvider(board: board, environment: environment) : NoFlags())
        case .servedBoard:
            let served = try await ServedTestBoard(board: board, folder: folder)
            servers.withLock { $0.append(served) }
            var configuration = try HostConfiguration(
                server: served.url, token: served.token, cacheFolder: served.cacheFolder, identity: identity,
                boardKeys: served.boardKeys.publicKeys)
            if let source = configuration.source as? RemoteBoardSource { configuration.source = PatientSource(source) }
            return configuration
        }
    }

    /// A host reading the board through `kind`, with a ``TestPlugin`` compiled in for each of `ids` at version 1.0.0.
    func host(_ kind: HostSourceKind, compiledIn ids: [String] = [], flags: Bool = false) async throws -> PluginHost {
        let host = PluginHost(configuration: try await configuration(kind, flags: flags))
        for id in ids {
            host.register(id, version: "1.0.0") { _ in TestPlugin(id: id) }
        }
        return host
    }
}

extension TestBoard {
    /// The board's load reports once `ready` accepts them (a host reading a served board sends its report a moment
    /// after it acted).
    func loadStatus(pluginID: String? = nil, until ready: ([HostLoadStatus]) -> Bool) async throws -> [HostLoadStatus] {
        try await eventually("load reports\(pluginID.map { " of \($0)" } ?? "") the test waits for") {
            let rows = try board.loadStatus(pluginID: pluginID)
            return ready(rows) ? rows : nil
        }
    }
}

/// A served board as these tests need it: the server and the host share one test process with the rest of the suite,
/// and on a busy 2-core machine a read can miss the source's deadline, leaving the host on no snapshot or a
/// cached one. This source reads again until it gets the server's current snapshot (a 10-minute guard against
/// hanging), so that what a test checks is what a host reading a responsive server does; the reads that fail are the
/// subject of `RemoteSourceRetryTests` and the process tests, which use the source as it is.
final class PatientSource: HostSource {
    let served: RemoteBoardSource

    init(_ served: RemoteBoardSource) { self.served = served }

    var name: String { served.name }
    func version() throws(BoardError) -> BoardVersion { try served.version() }
    func waitForChange(interval: Duration) async { await served.waitForChange(interval: interval) }

    func snapshot(environment: String, relevantTo: Set<String>, anchor: AuditCheckpoint?) async throws(BoardError) -> SourceSnapshot {
        let deadline = ContinuousClock.now + .eventDeadline
        while true {
            do {
                let read = try await served.snapshot(environment: environment, relevantTo: relevantTo, anchor: anchor)
                if read.stale == nil || ContinuousClock.now > deadline { return read }
            } catch  where error.code == .io && !Task.isCancelled && ContinuousClock.now < deadline {
                // No snapshot yet (the server did not answer in time): read again.
            }
            try? await Task.sleep(for: .milliseconds(50))
            if Task.isCancelled { return try await served.snapshot(environment: environment, relevantTo: relevantTo, anchor: anchor) }
        }
    }

    func check(pluginID: String, version: String, in snapshot: SourceSnapshot) throws(BoardError) -> ReleaseCheck {
        try served.check(pluginID: pluginID, version: version, in: snapshot)
    }
    func localArtifact(sha256: String) -> String? { served.localArtifact(sha256: sha256) }
    func fetchArtifacts(_ digests: [String]) async -> [String: String] { await served.fetchArtifacts(digests) }
    func writeLoadReport(_ identity: HostIdentity, entries: [LoadReportEntry], source: String?) async throws(BoardError) {
        try await served.writeLoadReport(identity, entries: entries, source: source)
    }
    func deliverLoadReport() async { await served.deliverLoadReport() }
    func finish() async { await served.finish() }
}
