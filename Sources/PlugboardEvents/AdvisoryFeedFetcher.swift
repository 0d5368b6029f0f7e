package import Foundation
import PlugboardIdentity
package import PlugboardModel
package import PlugboardStore

/// How subscribed advisory feeds are fetched: the bounds of one fetch and whether private addresses may be called.
package struct AdvisoryFeedSettings: Sendable {
    /// Whether feeds on private and loopback addresses are fetched (link-local and reserved ones never are).
    package var allowPrivate = false
    /// How long opening the connection may take.
    package var connectTimeout: Duration = .seconds(5)
    /// How long one whole fetch may take, the body read included.
    package var timeout: Duration = .seconds(30)
    /// The largest feed read, in bytes.
    package var sizeLimit = AdvisoryFeed.maximumSize

    /// The house settings: 5 s to connect, 30 s in all, 16 MiB, public addresses only.
    package init() {}
}

/// Fetches subscribed feeds, verifies them with their trusted keys and applies them to the board as the feed
/// (``Board/advisoryFeedPrincipal``). A refusal of any kind (unreachable, slow, too large, unsigned, replayed) changes
/// nothing: what a feed stopped stays stopped.
package struct AdvisoryFeedFetcher: Sendable {
    package let board: Board
    package let settings: AdvisoryFeedSettings

    package init(board: Board, settings: AdvisoryFeedSettings) {
        self.board = board
        self.settings = settings
    }

    /// Fetches the feed `name` once and applies it.
    ///
    /// - Throws: ``BoardError``, one sentence: `io` when the feed could not be fetched within the bounds, `invalidInput`
    ///   when it was fetched and refused.
    package func fetch(_ name: String) async throws(BoardError) -> ChangeResult {
        let feed = try board.advisoryFeed(name)
        guard let url = URL(string: feed.url) else { throw BoardError.invalid("the feed \(name)'s URL cannot be read") }
        var http = OutboundHTTP(
            connectTimeout: settings.connectTimeout, requestTimeout: settings.timeout, bodyLimit: settings.sizeLimit,
            allowPrivateNetwork: settings.allowPrivate)
        http.allowPlainHTTP = settings.allowPrivate
        http.party = "the advisory feed \(name)"
        let data: Data
        do { data = try await http.fetch(url, what: "answer") } catch {
            throw BoardError(.io, "\(error.description); nothing was changed")
        }
        let verified = try AdvisoryFeed.open(data, trusting: feed.keys, now: board.clock.date())
        return try board.applyAdvisoryFeed(name, verified, by: Board.advisoryFeedActor(feed))
    }

    /// Fetches every subscribed feed once, one after the other: each feed's name and what came of it.
    package func fetchAll() async throws(BoardError) -> [(name: String, result: Result<ChangeResult, BoardError>)] {
        var results: [(name: String, result: Result<ChangeResult, BoardError>)] = []
        for feed in try board.advisoryFeeds() {
            do { results.append((feed.name, .success(try await fetch(feed.name)))) } catch { results.append((feed.name, .failure(error))) }
        }
        return results
    }

    /// Fetches each subscribed feed at its interval until the task is cancelled: a new subscription at once, then every
    /// interval after its last attempt. `report` hears each attempt's outcome. Looks for new subscriptions every `poll`.
    package func run(poll: Duration = .seconds(1), report: @escaping @Sendable (String, Result<ChangeResult, BoardError>) -> Void) async {
        var due: [String: Date] = [:]
        while !Task.isCancelled {
            let feeds = (try? board.advisoryFeeds()) ?? []
            due = due.filter { name, _ in feeds.contains { $0.name == name } }
            let now = Date()
            for feed in feeds where due[feed.name].map({ $0 <= now }) ?? true {
                let result: Result<ChangeResult, BoardError>
                do { result = .success(try await fetch(feed.name)) } catch { result = .failure(error) }
                report(feed.name, result)
                due[feed.name] = Date().addingTimeInterval(TimeInterval(feed.intervalSeconds))
            }
            try? await Task.sleep(for: poll)
        }
    }
}
