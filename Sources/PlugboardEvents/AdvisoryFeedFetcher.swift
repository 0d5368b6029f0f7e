import Foundation
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
        do { data = try await http.fetch(url, what: "server") } catch {
            throw BoardError(.io, "\(error.description); nothing was changed")
        }
        let verified = try AdvisoryFeed.open(data, trusting: feed.keys, now: board.clock.date())
        return try board.applyAdvisoryFeed(name, verified, by: Board.advisoryFeedActor(feed))
    }

    /// Fetches every subscribed feed once, all at the same time: each feed's name and what came of it, in name order.
    package func fetchAll() async throws(BoardError) -> [(name: String, result: Result<ChangeResult, BoardError>)] {
        let names = try board.advisoryFeeds().map(\.name)
        let results = await withTaskGroup(of: (String, Result<ChangeResult, BoardError>).self) { group in
            for name in names {
                group.addTask {
                    do throws(BoardError) { return (name, .success(try await fetch(name))) } catch { return (name, .failure(error)) }
                }
            }
            var results: [String: Result<ChangeResult, BoardError>] = [:]
            for await (name, result) in group { results[name] = result }
            return results
        }
        return names.compactMap { name in results[name].map { (name, $0) } }
    }

    /// Fetches each subscribed feed at its interval until the task is cancelled, each feed in a task of its own, so a
    /// slow feed delays no other: a new subscription at once, then every interval (as the subscription says at the
    /// time) after its last attempt, by the board's clock. `report` hears each attempt's outcome. Looks for new and
    /// removed subscriptions every `poll`.
    package func run(poll: Duration = .seconds(1), report: @escaping @Sendable (String, Result<ChangeResult, BoardError>) -> Void) async {
        var running: [String: Task<Void, Never>] = [:]
        while !Task.isCancelled {
            let names = Set(((try? board.advisoryFeeds()) ?? []).map(\.name))
            for (name, task) in running where !names.contains(name) {
                task.cancel()
                running[name] = nil
            }
            for name in names.sorted() where running[name] == nil {
                running[name] = Task { await follow(name, poll: poll, report: report) }
            }
            try? await Task.sleep(for: poll)
        }
        // Every feed's task ends before this does: none is left applying a feed to a board being closed.
        for task in running.values { task.cancel() }
        for task in running.values { await task.value }
    }

    /// One subscription's loop: fetched, reported, then fetched again once its interval has passed, until cancelled.
    private func follow(_ name: String, poll: Duration, report: @escaping @Sendable (String, Result<ChangeResult, BoardError>) -> Void)
        async
    {
        while !Task.isCancelled {
            let result: Result<ChangeResult, BoardError>
            do { result = .success(try await fetch(name)) } catch { result = .failure(error) }
            // Unsubscribed while it was fetched: nothing to report.
            if Task.isCancelled { return }
            report(name, result)
            let attempted = board.clock.date()
            while !Task.isCancelled {
                if let feed = try? board.advisoryFeed(name),
                    board.clock.date() >= attempted.addingTimeInterval(TimeInterval(feed.intervalSeconds))
                {
                    break
                }
                try? await Task.sleep(for: poll)
            }
        }
    }
}
