import Dispatch
import Foundation
import Logging
import NIOCore
import PlugboardEvents
import PlugboardFlags
import PlugboardModel
import PlugboardStore
import ServiceLifecycle
import Synchronization

/// Watches the board and keeps every served environment's feed current.
///
/// A thread of its own polls the board's change counter (`PRAGMA data_version`, a pragma on an open connection) every
/// ``ServerConfiguration/pollInterval``; on a change it reloads the tokens and each environment that a client asked
/// for, computes the delta once, and hands the encoded event to every connected stream of that environment.
///
/// Every stream, an SDK's or a host's, knows its token: when a board change revokes the token, or every
/// ``tokenCheckInterval`` once it has expired, the stream gets a comment that says why and ends.
final class BoardWatcher: Service, Sendable {
    /// An open event stream and the digest of the token that opened it.
    struct Stream: Sendable {
        let continuation: AsyncStream<ByteBuffer>.Continuation
        let token: [UInt8]
        /// A host stream that takes `changed` events carrying the signed snapshot.
        var push = false
    }

    private struct State {
        var feeds: [String: EnvironmentFeed] = [:]
        var streams: [String: [UInt64: Stream]] = [:]
        var nextStreamID: UInt64 = 0
        var closed = false
    }

    let board: any ServedBoard
    let tokens: TokenCheck
    let metrics: ServerMetrics
    /// The plug-in hosts' feeds (registry changes), kept current by the same board check.
    let hosts: HostFeeds
    /// How often open streams are checked for tokens that expired (a revocation is a board change: it is noticed
    /// within ``ServerConfiguration/pollInterval``).
    static let tokenCheckInterval = Duration.milliseconds(250)
    private let configuration: ServerConfiguration
    private let state = Mutex(State())
    /// The first event id of this run: the start time in seconds, so that ids from an earlier run are older and a
    /// resuming client gets a hydration rather than a wrong "nothing new".
    private let firstRevision: Int
    private let lastVersion = Mutex<BoardVersion?>(nil)
    /// Rung at every change the board check sees: what else in the server follows the board (webhook delivery) looks
    /// then, rather than polling the board on its own.
    let changes = Wakeup()

    init(board: any ServedBoard, tokens: TokenCheck, metrics: ServerMetrics, configuration: ServerConfiguration) {
        self.board = board
        self.tokens = tokens
        self.metrics = metrics
        self.configuration = configuration
        self.hosts = HostFeeds(
            board: board, metrics: metrics, logger: configuration.logger, keyring: configuration.boardKeys,
            lifetime: configuration.snapshotLifetime,
            relay: configuration.relayPublish.flatMap { URL(string: $0) }.flatMap { RelayPublisher(url: $0, logger: configuration.logger) })
        self.firstRevision = Int(Date().timeIntervalSince1970)
    }

    /// Loads the tokens; call before serving.
    func start() throws(BoardError) {
        let version = try board.version()
        let credentials = try board.apiTokenCredentials()
        tokens.reload(credentials)
        // A restarted server publishes at once for the environments whose hosts may still be subscribed to the relay,
        // and takes every hosts token of them for one the relay may have checked before the restart: one revoked
        // meanwhile ends the environment's relayed streams at the first check of the tokens.
        let hostTokens = credentials.filter { $0.kind != .sdk }
        for environment in Set(hostTokens.filter { !$0.revoked }.map(\.environment)) {
            guard try hosts.relayEnvironment(environment) else { continue }
            for token in hostTokens where token.environment == environment { hosts.noteRelayed(token) }
        }
        lastVersion.withLock { $0 = version }
        metrics.boardChanges.withLock { $0 = 0 }
    }

    /// The environment's feed, loaded from the board the first time it is asked for.
    func feed(_ environment: String) throws(BoardError) -> EnvironmentFeed {
        if let feed = state.withLock({ $0.feeds[environment] }) { return feed }
        let features = try board.featureSet(environment: environment)
        return state.withLock { state in
            if let feed = state.feeds[environment] { return feed }
            let feed = EnvironmentFeed(features: features, revision: firstRevision)
            state.feeds[environment] = feed
            return feed
        }
    }

    /// Opens an event stream of an environment for `token`: the first chunk is what the client lacks (a hydration, or
    /// the events after `lastEventID` when the log still holds them), then every change as it is committed, until the
    /// token is no longer accepted.
    func openStream(
        _ environment: String, token: APITokenCredential, lastEventID: Int?
    ) throws(BoardError) -> AsyncStream<ByteBuffer> {
        _ = try feed(environment)
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(256))
        let id: UInt64? = state.withLock { state in
            guard !state.closed, let feed = state.feeds[environment] else { return nil }
            if let lastEventID, let missed = feed.events(after: lastEventID) {
                if !missed.isEmpty { continuation.yield(Self.sse("unleash-updated", missed)) }
            } else {
                continuation.yield(Self.sse("unleash-connected", id: feed.revision, events: [feed.hydration()]))
            }
            state.nextStreamID += 1
            state.streams[environment, default: [:]][state.nextStreamID] = Stream(continuation: continuation, token: token.digest)
            return state.nextStreamID
        }
        return metrics.openStream(stream, continuation, id: id) { [weak self] id in
            self?.state.withLock { _ = $0.streams[environment]?.removeValue(forKey: id) }
        }
    }

    func run() async throws {
        // The looks run on a thread of their own that sleeps between them: one wake-up a look, where a task sleeping on
        // the shared pool and handing each look to a thread that may block took several.
        let stopping = DispatchSemaphore(value: 0)
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
                    let thread = Thread { [self] in
                        look(until: stopping)
                        ended.resume()
                    }
                    thread.name = "plugboard-board-watch"
                    thread.start()
                }
            } onGracefulShutdown: {
                stopping.signal()
                self.closeStreams()
            }
        } onCancel: {
            stopping.signal()
        }
        closeStreams()
    }

    /// Looks at the board every ``ServerConfiguration/pollInterval`` until `stopping` is signalled; checks the open
    /// streams' tokens every ``tokenCheckInterval``, and sends keep-alives and the hosts' freshness notices in their
    /// intervals. Blocks its thread.
    private func look(until stopping: DispatchSemaphore) {
        let interval = configuration.pollInterval
        let pause = DispatchTimeInterval.nanoseconds(
            Int(clamping: interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000))
        var sinceKeepAlive = Duration.zero
        var sinceFreshness = Duration.zero
        let clock = ContinuousClock()
        var lastTokenCheck = clock.now
        while stopping.wait(timeout: .now() + pause) == .timedOut {
            check()
            if clock.now - lastTokenCheck >= Self.tokenCheckInterval {
                lastTokenCheck = clock.now
                endStreamsOfRefusedTokens()
            }
            sinceKeepAlive += interval
            sinceFreshness += interval
            if sinceKeepAlive >= configuration.streamKeepAlive {
                sinceKeepAlive = .zero
                broadcastKeepAlive()
            }
            if sinceFreshness >= configuration.snapshotLifetime / 4 {
                sinceFreshness = .zero
                hosts.broadcastFreshness()
            }
        }
    }

    /// One look at the board: on a change, reload tokens and feeds and fan the deltas out. Looks run one at a time: a
    /// look that finds the version another is still acting on waits for it, so that when it returns the feeds are
    /// those of the version it saw (a caller that changed the board and then looks, as tests and the operations API do,
    /// must not read the feed of before its change).
    func check() {
        checking.withLock { _ in checkOnce() }
    }

    /// Serialises ``check()``.
    private let checking = Mutex<Void>(())

    private func checkOnce() {
        let version: BoardVersion
        do { version = try board.version() } catch {
            configuration.logger.warning("cannot read the board's change counter", metadata: ["error": "\(error.message)"])
            return
        }
        guard lastVersion.withLock({ $0 }) != version else { return }
        lastVersion.withLock { $0 = version }
        changes.wake()
        metrics.boardChanges.withLock { $0 += 1 }
        do {
            // A revoked token's streams end now, before any change of this version reaches them.
            if tokens.reload(try board.apiTokenCredentials()) { endStreamsOfRefusedTokens() }
        } catch {
            configuration.logger.warning("cannot reload the API tokens", metadata: ["error": "\(error.message)"])
        }
        hosts.boardChanged()
        let environments = state.withLock { Array($0.feeds.keys) }
        for environment in environments {
            let next: FeatureSet
            do { next = try board.featureSet(environment: environment) } catch {
                configuration.logger.warning(
                    "cannot reload flags", metadata: ["environment": "\(environment)", "error": "\(error.message)"])
                continue
            }
            let slow = state.withLock { state -> [AsyncStream<ByteBuffer>.Continuation] in
                guard var feed = state.feeds[environment] else { return [] }
                let added = feed.advance(to: next)
                state.feeds[environment] = feed
                guard !added.isEmpty, let streams = state.streams[environment] else { return [] }
                let chunk = Self.sse("unleash-updated", added)
                var slow: [AsyncStream<ByteBuffer>.Continuation] = []
                for (id, stream) in streams {
                    if case .dropped = stream.continuation.yield(chunk) {
                        slow.append(stream.continuation)
                        state.streams[environment]?.removeValue(forKey: id)
                    }
                }
                return slow
            }
            // A client that cannot keep up is disconnected; it resumes with Last-Event-ID. Finished outside the lock:
            // finishing runs the stream's termination handler, which takes the lock.
            for continuation in slow { continuation.finish() }
        }
    }

    /// Ends every stream, an SDK's or a host's, whose token is no longer accepted (revoked, expired or gone), with a
    /// comment that says why; the client's next request gets 401 with the same reason.
    func endStreamsOfRefusedTokens() {
        let now = configuration.clock.date()
        let ended = state.withLock { state -> [(AsyncStream<ByteBuffer>.Continuation, String)] in
            var ended: [(AsyncStream<ByteBuffer>.Continuation, String)] = []
            for (environment, streams) in state.streams {
                for (id, stream) in streams {
                    guard let reason = tokens.refusal(digest: stream.token, at: now) else { continue }
                    ended.append((stream.continuation, reason))
                    state.streams[environment]?.removeValue(forKey: id)
                }
            }
            return ended
        }
        for (continuation, reason) in ended { Self.end(continuation, because: reason) }
        hosts.endStreams { token in tokens.refusal(digest: token, at: now) }
    }

    /// Sends `reason` as an SSE comment and ends the stream.
    static func end(_ continuation: AsyncStream<ByteBuffer>.Continuation, because reason: String) {
        continuation.yield(ByteBuffer(string: ": stream closed: \(reason)\n\n"))
        continuation.finish()
    }

    private func broadcastKeepAlive() {
        let chunk = ByteBuffer(string: ": keep-alive\n\n")
        state.withLock { state in
            for streams in state.streams.values { for stream in streams.values { stream.continuation.yield(chunk) } }
        }
        hosts.yieldToAll(chunk)
    }

    private func closeStreams() {
        let all = state.withLock { state in
            state.closed = true
            defer { state.streams = [:] }
            return state.streams.values.flatMap(\.values)
        }
        for stream in all { stream.continuation.finish() }
        hosts.close()
    }

    /// Runs blocking board work on a thread of its own: a board busy with another process's write (up to its busy
    /// timeout) must not hold one of the few threads that serve requests. Its error, if any, is rethrown here.
    static func offPool<Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> Void) async throws(Failure) {
        let result: Result<Void, Failure> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(Failure) {
                    try body()
                    continuation.resume(returning: .success(()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        try result.get()
    }

    /// Delta events as one SSE message whose data is `{"events":[…]}` (the shape Unleash streams).
    static func sse(_ event: String, _ events: [(id: Int, json: String)]) -> ByteBuffer {
        sse(event, id: events.last?.id ?? 0, events: events.map(\.json))
    }

    static func sse(_ event: String, id: Int, events: [String]) -> ByteBuffer {
        ServerSentEvent.frame(event, id: id, data: "{\"events\":[\(events.joined(separator: ","))]}")
    }
}
