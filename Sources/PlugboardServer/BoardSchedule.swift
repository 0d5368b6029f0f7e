import Logging
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import ServiceLifecycle
import Synchronization

/// Runs the board's schedule four times a second: every rollout's guard and steps (`Board.tickRollouts(via:now:)`),
/// which aborts a rollout whose new release fails too many hosts and moves a rollout that is due to its next step; and,
/// once a second, the change requests whose time came (``ChangeRequests/applyDue(on:by:)``), so that a due, approved
/// request is applied within about a second of its time. Each action is an audited change of the board, by
/// `plugboard/rollout-guard`, `plugboard/rollout-schedule` or `plugboard/change-schedule` via `plugboard serve`.
///
/// A pass that finds no running or paused rollout reads one small table, and until the board changes
/// (`Board.version()`, one pragma) the passes after it read nothing else. A board the server may not write is said once,
/// and the server keeps serving (run `plugboard rollout tick` and `plugboard change apply-due` where the board can be
/// written).
package final class BoardSchedule: Service, Sendable {
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
        // What the last pass said of due change requests: a request left as it is (edited behind the log) is said again
        // at each pass, and logged once.
        var saidOfChanges: Set<String> = []
        let nextChanges = Mutex(ContinuousClock.now)
        // The board's version when a pass found no rollout under way: while it stays, there is no rollout to tick.
        let quiet = Mutex<BoardVersion?>(nil)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let (board, logger) = (board, logger)
            let outcome = Mutex<Result<([RolloutTick], [ChangeRequestResult]?), BoardError>>(.success(([], nil)))
            await BoardWatcher.offPool {
                do throws(BoardError) {
                    // Read before the pass: a rollout started after it moves the version, and the next pass ticks.
                    let version = try board.version()
                    var ticks: [RolloutTick] = []
                    if quiet.withLock({ $0 }) != version {
                        ticks = try board.tickRollouts(via: "plugboard serve")
                        for said in RolloutOperations.Step.requestWaitingSteps(ticks, on: board) { logger.notice("\(said)") }
                        let underWay = try board.rolloutsUnderWay()
                        quiet.withLock { $0 = underWay ? nil : version }
                    }
                    // Nil in the passes between two looks at the due change requests.
                    var changes: [ChangeRequestResult]?
                    if ContinuousClock.now >= nextChanges.withLock({ $0 }) {
                        nextChanges.withLock { $0 = ContinuousClock.now + .seconds(1) }
                        changes = try ChangeRequests.applyDue(on: board, by: try ChangeRequests.schedulePrincipal(via: "plugboard serve"))
                    }
                    outcome.withLock { $0 = .success((ticks, changes)) }
                } catch {
                    outcome.withLock { $0 = .failure(error) }
                }
            }
            switch outcome.withLock({ $0 }) {
            case .success(let (ticks, changes)):
                said = nil
                for change in changes ?? [] where !saidOfChanges.contains(change.message) {
                    logger.notice("\(change.message)", metadata: ["change_request": "\(change.id)", "state": "\(change.state)"])
                }
                if let changes { saidOfChanges = Set(changes.map(\.message)) }
                for tick in ticks where tick.action != .awaitingApproval {
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
                    logger.warning("cannot run the board's schedule (rollouts, due change requests): \(error.message)")
                }
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
    }
}
