import Foundation
import ServiceLifecycle
import Synchronization

/// What `GET /health` answers: the board's health as checked at most a second ago, so that a health check never
/// queues behind requests that use the board's connection (snapshots being computed, a batch of telemetry).
///
/// A service checks the board every second; when its last answer is older than ``staleAfter`` (the board's
/// connection is stuck), the health check asks the board itself and waits like any other request.
final class HealthCheck: Service, Sendable {
    static let interval = Duration.seconds(1)
    static let staleAfter = Duration.seconds(3)

    private let board: any ServedBoard
    private let last = Mutex<(at: ContinuousClock.Instant, problem: String?)?>(nil)

    init(board: any ServedBoard) {
        self.board = board
    }

    /// Nil when the board is healthy; otherwise one sentence.
    func problem() async -> String? {
        if let last = last.withLock({ $0 }), ContinuousClock.now - last.at < Self.staleAfter { return last.problem }
        return await check()
    }

    private func check() async -> String? {
        await BoardWatcher.offPool {
            let problem = self.board.healthProblem()
            self.last.withLock { $0 = (ContinuousClock.now, problem) }
        }
        return last.withLock { $0?.problem }
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            _ = await check()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.interval) }
        }
    }
}
