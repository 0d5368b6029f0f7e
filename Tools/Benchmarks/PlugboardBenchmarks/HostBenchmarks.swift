import Benchmark
import Foundation
import Logging
import PlugboardFileHost
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardStore

/// A logger that keeps the hosts' info lines ("loaded …") out of the benchmark output.
func quietLogger() -> Logger {
    var logger = Logger(label: "plugboard.bench")
    logger.logLevel = .error
    return logger
}

/// Waits for the first event `match` accepts; false after `timeout` (so a lost event cannot hang the run).
func waitFor(_ events: AsyncStream<HostEvent>, timeout: Duration = .seconds(10), _ match: @escaping @Sendable (HostEvent) -> Bool) async
    -> Bool
{
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            for await event in events where match(event) { return true }
            return false
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}

/// A running host, and the operator's own connection to the same board.
final class KillSwitchFixture: Sendable {
    let scratch: ScratchBoard
    let host: PluginHost
    /// The plug-in the benchmark kills and revives (a leaf: nothing loaded depends on it).
    let pluginID: String
    /// A second connection, as `plugboard plugin kill` from another process would have.
    let operatorBoard: Board

    /// A board with one plug-in, or (`large`) the 200 plug-ins of ``RegistryFixture`` with gates evaluated from the board.
    /// (Synchronous, and started by ``start()``: Swift 6.3's optimizer crashes on this initializer when it is async.)
    init(pollInterval: Duration, large: Bool) throws {
        var compiledIn: [(String, String)]
        if large {
            let registry = try RegistryFixture()
            scratch = registry.scratch
            let resolution = registry.resolver.resolve(try scratch.board.registrySnapshot(environment: RegistryFixture.environment))
            compiledIn = resolution.load.map { ($0.pluginID, $0.version ?? "") }
            pluginID = resolution.load.last!.pluginID
        } else {
            scratch = try ScratchBoard("kill")
            pluginID = "com.bench.killable"
            try scratch.register(pluginID, "1.0.0")
            _ = try scratch.board.setEnabled(pluginID, true, environment: "default", by: Fixtures.admin)
            compiledIn = [(pluginID, "1.0.0")]
        }
        let identity = HostIdentity(hostID: "bench-host", environment: "default", hostVersion: "2.1.0")
        let board = try Board.open(at: scratch.path)
        host = PluginHost(
            configuration: HostConfiguration(
                board: board, identity: identity, pollInterval: pollInterval,
                flags: BoardFlagProvider(board: board, environment: identity.environment, hostname: "bench-host"),
                logger: quietLogger()))
        for (id, version) in compiledIn {
            host.register(id, version: version) { _ in NoopPlugin() }
        }
        expectedCount = compiledIn.count
        operatorBoard = try Board.open(at: scratch.path)
    }

    private let expectedCount: Int

    /// Starts the host; throws unless every plug-in loaded.
    func start() async throws {
        await host.start()
        guard host.plugin(pluginID) != nil, host.activePlugins.count == expectedCount else {
            throw BoardError(.io, "the benchmark plug-ins did not all load (\(host.activePlugins.count) of \(expectedCount))")
        }
    }
}

func hostBenchmarks() {
    // Kill-switch reaction: from the commit of `plugboard plugin kill` on another connection to the host's
    // `.deactivated` event (the plug-in is out of every lookup). One kill per sample; between samples the
    // switch is revived and the plug-in reloaded, outside the measurement.
    for (milliseconds, large) in [(100, false), (10, false), (100, true)] {
        Benchmark(
            "killswitch.reaction.poll-\(milliseconds)ms\(large ? ".200-plugins" : "")",
            configuration: .init(
                metrics: [.wallClock], warmupIterations: 2, maxDuration: .seconds(20), maxIterations: milliseconds == 100 ? 60 : 100)
        ) { benchmark, fixture in
            let id = fixture.pluginID
            // Throw the switch at a random moment of the poll cycle (else every sample would start right after
            // the poll that reloaded the plug-in, and wait a whole interval).
            try? await Task.sleep(for: .microseconds(Int.random(in: 0..<(milliseconds * 1000))))
            let deactivations = fixture.host.events()
            do {
                _ = try fixture.operatorBoard.kill(.plugin(id), reason: "benchmark", by: Fixtures.admin)
            } catch {
                benchmark.error("kill failed: \(error)")
                return
            }
            benchmark.startMeasurement()  // kill() returns right after its COMMIT
            let deactivated = await waitFor(deactivations) { event in
                if case .deactivated(let plugin, _, _) = event { return plugin == id }
                return false
            }
            benchmark.stopMeasurement()
            guard deactivated else {
                benchmark.error("no .deactivated event within 10 s of the kill switch")
                return
            }

            // Back to a loaded plug-in for the next sample (not measured).
            let loads = fixture.host.events()
            do {
                _ = try fixture.operatorBoard.revive(.plugin(id), reason: nil, by: Fixtures.admin)
            } catch {
                benchmark.error("revive failed: \(error)")
                return
            }
            let loaded = await waitFor(loads) { event in
                if case .loaded(let plugin, _) = event { return plugin == id }
                return false
            }
            if !loaded { benchmark.error("the plug-in did not reload within 10 s of the revive") }
        } setup: { () -> KillSwitchFixture in
            let fixture = try KillSwitchFixture(pollInterval: .milliseconds(milliseconds), large: large)
            try await fixture.start()
            return fixture
        } teardown: {
            ScratchBoard.removeAll()
        }
    }
}
