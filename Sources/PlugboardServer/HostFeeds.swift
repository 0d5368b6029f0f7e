import Foundation
import Logging
import NIOCore
import PlugboardStore
import Synchronization

/// What `plugboard serve` keeps for plug-in hosts on other machines: per environment, a digest of what every host of
/// it sees (the enabled plug-ins and their dependencies, their checks, the flags) and a revision that moves only when
/// that digest does; the hosts' event streams; and host snapshots computed once per board version.
///
/// A load report, a client's usage counts or a change in another environment moves the board's version but not the
/// digest, so no host is woken for it.
final class HostFeeds: Sendable {
    private struct Feed {
        var digest: String
        var revision: Int
        var streams: [UInt64: AsyncStream<ByteBuffer>.Continuation] = [:]
    }

    private struct Cached {
        let version: BoardVersion
        let body: ByteBuffer
        let etag: String
    }

    private struct State {
        var feeds: [String: Feed] = [:]
        var nextStreamID: UInt64 = 0
        var closed = false
    }

    /// How many distinct host snapshots (environment and plug-in list) are kept per board version.
    static let snapshotCacheLimit = 256

    let board: any ServedBoard
    let metrics: ServerMetrics
    let logger: Logger
    private let state = Mutex(State())
    private let snapshots = Mutex<[String: Cached]>([:])
    /// The first revision of this run: milliseconds since 1970, so a host can tell a restarted server from the one it knew.
    private let firstRevision = Int(Date().timeIntervalSince1970 * 1000)

    init(board: any ServedBoard, metrics: ServerMetrics, logger: Logger) {
        self.board = board
        self.metrics = metrics
        self.logger = logger
    }

    /// The host snapshot of `environment` for a host that names `pluginIDs`, as JSON with its ETag: computed at most
    /// once per board version, whatever the number of hosts asking.
    func snapshot(environment: String, pluginIDs: [String]) throws(BoardError) -> (body: ByteBuffer, etag: String) {
        let version = try board.version()
        let key = environment + "\n" + pluginIDs.joined(separator: ",")
        let result: Result<Cached, BoardError> = snapshots.withLock { cache in
            if let cached = cache[key], cached.version == version { return .success(cached) }
            do throws(BoardError) {
                let data = try board.hostView(environment: environment, relevantTo: Set(pluginIDs)).encoded()
                let cached = Cached(version: version, body: ByteBuffer(bytes: data), etag: EnvironmentFeed.etag(data))
                if cache.count >= Self.snapshotCacheLimit { cache = cache.filter { $0.value.version == version } }
                if cache.count < Self.snapshotCacheLimit { cache[key] = cached }
                return .success(cached)
            } catch {
                return .failure(error)
            }
        }
        let cached = try result.get()
        return (cached.body, cached.etag)
    }

    /// Opens a host's event stream: first `connected` with the current revision (a host that knew another one reads a
    /// new snapshot), then `changed` whenever what the environment's hosts see changes. A resuming host's
    /// `Last-Event-ID` needs no answer of its own: the first event carries the current revision, which is all it needs.
    func openStream(_ environment: String) throws(BoardError) -> AsyncStream<ByteBuffer> {
        let digest = try digest(environment)
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(16))
        let id: UInt64? = state.withLock { state in
            guard !state.closed else { return nil }
            if state.feeds[environment] == nil { state.feeds[environment] = Feed(digest: digest, revision: firstRevision) }
            continuation.yield(Self.event("connected", revision: state.feeds[environment]!.revision))
            state.nextStreamID += 1
            state.feeds[environment]!.streams[state.nextStreamID] = continuation
            return state.nextStreamID
        }
        return metrics.openStream(stream, continuation, id: id) { [weak self] id in
            self?.state.withLock { _ = $0.feeds[environment]?.streams.removeValue(forKey: id) }
        }
    }

    /// After a board change: recompute the digest of every environment hosts watch, and tell its hosts when it moved.
    func boardChanged() {
        let environments = state.withLock { Array($0.feeds.keys) }
        for environment in environments {
            let digest: String
            do { digest = try self.digest(environment) } catch {
                logger.warning("cannot read what hosts see", metadata: ["environment": "\(environment)", "error": "\(error.message)"])
                continue
            }
            state.withLock { state in
                guard var feed = state.feeds[environment], feed.digest != digest else { return }
                feed.digest = digest
                feed.revision += 1
                let chunk = Self.event("changed", revision: feed.revision)
                // A stream whose buffer is full keeps only the newest events: each says "read a new snapshot" anyway.
                for continuation in feed.streams.values { continuation.yield(chunk) }
                state.feeds[environment] = feed
            }
        }
    }

    /// Every open host stream (for keep-alive comments).
    func yieldToAll(_ chunk: ByteBuffer) {
        state.withLock { state in
            for feed in state.feeds.values { for continuation in feed.streams.values { continuation.yield(chunk) } }
        }
    }

    /// Closes every stream (shutdown); hosts reconnect to the next server with backoff.
    func close() {
        let all = state.withLock { state in
            state.closed = true
            defer { for key in state.feeds.keys { state.feeds[key]?.streams = [:] } }
            return state.feeds.values.flatMap(\.streams.values)
        }
        for continuation in all { continuation.finish() }
    }

    /// What every host of `environment` sees, as the ETag its snapshot would have.
    private func digest(_ environment: String) throws(BoardError) -> String {
        EnvironmentFeed.etag(try board.hostView(environment: environment, relevantTo: []).encoded())
    }

    static func event(_ name: String, revision: Int) -> ByteBuffer {
        ByteBuffer(string: "event: \(name)\nid: \(revision)\ndata: {\"revision\":\(revision)}\n\n")
    }
}
