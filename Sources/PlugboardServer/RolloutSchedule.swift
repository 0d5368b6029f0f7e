import Logging
import PlugboardModel
import PlugboardStore
import ServiceLifecycle
import Synchronization

/// Runs every rollout's guard and schedule four times a second (`Board.tickRollouts(via:now:)`): aborts a
/// rollout whose new release fails too many hosts, and moves a rollout that is due to its next step. Each action is an
/// audited change of the board, by `plugboard/rollout-guard` or `plugboard/rollout-schedule` via `plugboard serve`.
///
/// A pass that finds no running or paused rollout reads one small table. A board the server may not write is said once,
/// and the server keeps serving (run `plugboard rollout tick` where the board can be written).
package final class RolloutSchedule: Service, Sendable {
    private let board: Board
    private let interval: Duration
    private let logger: Logger

    init(board: Board, interval: Duration, logger: Logger) {
        self.board = board
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        var said: String?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let board = board
            let outcome = Mutex<Result<[RolloutTick], BoardError>>(.success([]))
            await BoardWatcher.offPool {
                do throws(BoardError) {
                    let ticks = try board.tickRollouts(via: "plugboard serve")
                    outcome.withLock { $0 = .success(ticks) }
                } catch {
                    outcome.withLock { $0 = .failure(error) }
                }
            }
            switch outcome.withLock({ $0 }) {
            case .success(let ticks):
                said = nil
                for tick in ticks {
                    let metadata: Logger.Metadata = [
                        "plugin": "\(tick.pluginID)", "environment": "\(tick.environment)", "version": "\(tick.version)",
                    ]
                    if tick.action == .aborted {
                        logger.warning("\(tick.message)", metadata: metadata)
                    } else {
                        logger.notice("\(tick.message)", metadata: metadata)
                    }
                }
            case .failure(let error):
                if said != error.message {
                    said = error.message
                    logger.warning("cannot run the rollouts' guard and schedule: \(error.message)")
                }
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
    }
}
