import PlugboardStore
import ServiceLifecycle

/// Writes the refused attempts the board counts while the admin API serves (`Board.boundRefusals()`): every few
/// seconds the bursts that ended, and at shutdown every count, each burst as one audit row with its count.
final class RefusalWriter: Service, Sendable {
    /// How often ended bursts are written.
    static let interval = Duration.seconds(5)

    private let board: Board

    init(board: Board) {
        self.board = board
        board.boundRefusals()
    }

    func run() async throws {
        let board = board
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: Self.interval) }
            await BoardWatcher.offPool { board.flushRefusals(closedOnly: true) }
        }
        await BoardWatcher.offPool { board.flushRefusals() }
    }
}
