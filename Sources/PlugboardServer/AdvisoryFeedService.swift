import Logging
import PlugboardEvents
import PlugboardModel
import PlugboardStore
import ServiceLifecycle

/// Fetches the board's subscribed advisory feeds while the server runs (``AdvisoryFeedFetcher``): each at its interval,
/// verified with its trusted keys and applied as the feed. A refused feed is logged as a warning and changes nothing.
struct AdvisoryFeedService: Service {
    let board: Board
    let settings: AdvisoryFeedSettings
    let logger: Logger

    func run() async throws {
        let fetcher = AdvisoryFeedFetcher(board: board, settings: settings)
        let logger = self.logger
        await cancelWhenGracefulShutdown {
            await fetcher.run { name, result in
                switch result {
                case .success(let change) where change.changed:
                    logger.notice("advisory feed applied", metadata: ["feed": "\(name)", "result": "\(change.message)"])
                    for note in change.notes { logger.warning("advisory feed", metadata: ["feed": "\(name)", "note": "\(note)"]) }
                case .success: break
                case .failure(let error):
                    logger.warning("advisory feed refused", metadata: ["feed": "\(name)", "error": "\(error.message)"])
                }
            }
        }
    }
}
