import Logging
import PlugboardModel
import PlugboardStore
import ServiceLifecycle

/// Writes the refused attempts the board counts while the operations API serves (`Board.boundRefusals()`): every few
/// seconds the bursts that ended, and at shutdown every count, each burst as one audit row with its count. Rows that
/// could not be written are kept for the next pass, and each failure is logged; at shutdown a failed write is tried
/// once more, and what is still unwritten is logged as lost.
final class RefusalWriter: Service, Sendable {
    /// How often ended bursts are written.
    static let interval = Duration.seconds(5)

    private let board: Board
    private let logger: Logger

    init(board: Board, logger: Logger) {
        self.board = board
        self.logger = logger
        board.boundRefusals()
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.interval) }
            if let error = await flush(closedOnly: true) {
                logger.warning("cannot write refused attempts; trying again", metadata: ["error": "\(error.message)"])
            }
        }
        guard await flush(closedOnly: false) != nil, let error = await flush(closedOnly: false) else { return }
        logger.error("cannot write refused attempts at shutdown; they are lost", metadata: ["error": "\(error.message)"])
    }

    /// Writes the counted refusals off the concurrency pool; nil when they were written, otherwise why not.
    private func flush(closedOnly: Bool) async -> BoardError? {
        let board = board
        do throws(BoardError) {
            try await BoardWatcher.offPool { () throws(BoardError) in
                if let error = board.flushRefusals(closedOnly: closedOnly) { throw error }
            }
            return nil
        } catch {
            return error
        }
    }
}
