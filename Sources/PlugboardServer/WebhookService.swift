import Logging
import PlugboardBoardSecureStorage
import PlugboardEvents
import PlugboardIdentity
import PlugboardModel
import PlugboardStore
import ServiceLifecycle

/// Delivers the audit log's events to the board's webhook endpoints while the server runs (``WebhookDelivery``): a
/// task per endpoint, so that an endpoint that hangs delays no other, and the board's writer never waits for one.
///
/// Delivery opens the endpoints' secrets with the board's master key; a server that cannot open it says so once and
/// serves on without delivering (run `plugboard webhook deliver` where the key is).
struct WebhookService: Service {
    let board: Board
    let settings: WebhookSettings
    let logger: Logger
    /// The server's board check, rung at every change it sees: delivery looks at the board then.
    let boardChanges: Wakeup

    func run() async throws {
        let delivery: WebhookDelivery
        do {
            // Reads go through a read-only connection of their own, so that delivery and the server's writes never
            // wait for each other (a board in memory has only its own).
            let reader = board.path == ":memory:" ? board : ((try? Board.open(at: board.path, readOnly: true)) ?? board)
            let secrets = try BoardSecureStorage.open(board: reader)
            delivery = try WebhookDelivery(board: board, reader: reader, secrets: secrets, settings: settings, via: "plugboard serve")
        } catch {
            // Said when there is something to deliver: a board without endpoints needs no master key here.
            if let endpoints = try? board.webhooks(), !endpoints.isEmpty {
                logger.warning("webhooks are not delivered: \(error.message)")
            }
            // A service that returns ends the server: this one waits for the server's end instead.
            try? await gracefulShutdown()
            return
        }
        if let endpoints = try? board.webhooks(), !endpoints.isEmpty, !BackgroundPriority.idlePolicyAllowed() {
            logger.notice(
                "webhook delivery runs at niceness 10 rather than under SCHED_IDLE: this process may not leave SCHED_IDLE again when delivery waits too long (give it CAP_SYS_NICE, or an RLIMIT_NICE of 10 or more: systemd's LimitNICE=+10)"
            )
        }
        await cancelWhenGracefulShutdown { await delivery.run(boardChanges: boardChanges) }
    }
}
