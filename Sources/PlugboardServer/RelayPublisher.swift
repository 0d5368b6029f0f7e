import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// Publishes the hosts' events to a pub/sub relay (`plugboard serve --relay-publish URL`, for example Nchan's publisher
/// location behind nginx): each event of an environment that is relayed is POSTed once to URL + environment, through
/// AsyncHTTPClient over a kept-alive HTTP/1.1 connection, whatever the number of hosts reading the relay's stream.
///
/// The relay is not trusted: what it carries is the same signed snapshot (`changed`) and signed freshness notice
/// (`fresh`) a direct stream carries, and every host verifies them. The event's name goes in `X-EventSource-Event`, so
/// that the relay's EventSource subscribers see the same event names.
///
/// A token that the relay checked for a stream and the board refuses since (revoked, expired) has its stream ended by
/// ``drop(_:)``: the environment's channel is deleted on the relay (`DELETE` to URL + environment), which ends every
/// stream subscribed to it; each host subscribes again, and the relay checks its token again. Drops go before events.
///
/// Bounded: at most ``queueLimit`` events wait per environment (a relay that is slow or away loses the oldest, never
/// holds up the server or a direct stream); every request is given ``connectTimeout`` to connect, ``answerTimeout`` for
/// the whole exchange, and reads at most ``answerLimit`` bytes of the answer. An event the relay did not take is tried
/// once more; a channel to delete is tried until the relay takes it.
final class RelayPublisher: Service, Sendable {
    /// The most events waiting per environment; older ones are dropped.
    static let queueLimit = 4
    /// How long a connection to the relay may take to open.
    static let connectTimeout = TimeAmount.seconds(2)
    /// How long one publication may take, from connecting to the answer's last byte.
    static let answerTimeout = TimeAmount.seconds(5)
    /// The most bytes of an answer read: a publisher location answers with a line of channel statistics.
    static let answerLimit = 64 * 1024
    /// How long a kept-alive connection waits for the next event before it is closed (nginx keeps one 75 s).
    static let idleTimeout = TimeAmount.seconds(30)

    struct Event: Sendable {
        let environment: String
        let name: String
        let data: ByteBuffer
        /// Not an event: the environment's channel is deleted (``RelayPublisher/drop(_:)``).
        var deletesChannel = false
        /// Whether the relay failed to take it once already.
        var retried = false
    }

    private struct State {
        var queues: [String: [Event]] = [:]
        var order: [String] = []
        var dropped = 0
        /// Environments whose channel is to be deleted, in order, each once.
        var drops: [String] = []
    }

    let host: String
    let port: Int
    /// The URL's path, ending with "/": the environment is appended.
    let path: String
    let logger: Logger
    private let state = Mutex(State())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    /// A publisher to `url` (http:// only: the publisher location is on the relay's loopback); nil when it is not one.
    init?(url: URL, logger: Logger) {
        guard url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else { return nil }
        self.host = host
        self.port = url.port ?? 80
        let path = url.path.isEmpty ? "/" : url.path
        self.path = path.hasSuffix("/") ? path : path + "/"
        self.logger = logger
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues `data` as event `name` for the relay's channel of `environment`; never blocks.
    func publish(_ environment: String, name: String, data: ByteBuffer) {
        state.withLock { state in
            if state.queues[environment] == nil { state.order.append(environment) }
            state.queues[environment, default: []].append(Event(environment: environment, name: name, data: data))
            if state.queues[environment]!.count > Self.queueLimit {
                state.queues[environment]!.removeFirst()
                state.dropped += 1
            }
        }
        wake.yield()
    }

    /// Ends every stream the relay holds for `environment` (its channel deleted), before any event waiting; never blocks.
    func drop(_ environment: String) {
        state.withLock { state in
            if !state.drops.contains(environment) { state.drops.append(environment) }
        }
        wake.yield()
    }

    /// The environments whose channel waits to be deleted.
    var waitingDrops: [String] { state.withLock { $0.drops } }

    /// The events waiting for `environment`, oldest first.
    func waiting(_ environment: String) -> [Event] {
        state.withLock { $0.queues[environment] ?? [] }
    }

    /// The next event to send, taking environments in turn, after the channels to delete.
    private func next() -> Event? {
        state.withLock { state in
            if !state.drops.isEmpty {
                return Event(environment: state.drops.removeFirst(), name: "", data: ByteBuffer(), deletesChannel: true)
            }
            guard !state.order.isEmpty else { return nil }
            let environment = state.order.removeFirst()
            var queue = state.queues.removeValue(forKey: environment) ?? []
            let event = queue.isEmpty ? nil : queue.removeFirst()
            if !queue.isEmpty {
                state.queues[environment] = queue
                state.order.append(environment)
            }
            return event
        }
    }

    /// Puts back an event the relay did not take, ahead of its environment's others.
    private func putBack(_ event: Event) {
        state.withLock { state in
            if event.deletesChannel {
                if !state.drops.contains(event.environment) { state.drops.insert(event.environment, at: 0) }
                return
            }
            if state.queues[event.environment] == nil { state.order.insert(event.environment, at: 0) }
            state.queues[event.environment, default: []].insert(event, at: 0)
        }
    }

    func run() async throws {
        var configuration = HTTPClient.Configuration(
            timeout: .init(connect: Self.connectTimeout, read: Self.answerTimeout),
            connectionPool: .init(idleTimeout: Self.idleTimeout))
        configuration.redirectConfiguration = .disallow
        configuration.httpVersion = .http1Only
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 1
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        await cancelWhenGracefulShutdown { await self.publishUntilCancelled(client) }
        try? await client.shutdown()
    }

    /// The relay's URL for `environment`'s channel.
    var channelURL: (String) -> String {
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let path = self.path
        return { environment in "http://\(authority)\(path)\(Self.pathSegment(environment))" }
    }

    private func publishUntilCancelled(_ client: HTTPClient) async {
        var wakes = self.wakes.makeAsyncIterator()
        let url = channelURL
        var failures = 0
        while !Task.isCancelled {
            guard let event = next() else {
                if await wakes.next() == nil { return }
                continue
            }
            do {
                try await send(event, to: url(event.environment), client: client)
                failures = 0
            } catch {
                // A channel to delete is tried until the relay takes it (it ends a refused token's stream); an event once
                // more (the relay may have closed a kept-alive connection as it was used).
                if event.deletesChannel || !event.retried {
                    var again = event
                    again.retried = true
                    putBack(again)
                }
                failures += 1
                if failures == 1 || failures % 100 == 0 {
                    logger.warning(
                        "cannot publish to the relay at \(url("")): \(error); events wait (at most \(Self.queueLimit) an environment)")
                }
                try? await Task.sleep(for: .milliseconds(min(2000, 50 << min(failures, 6))))
            }
        }
    }

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends `event` to `url` and reads the relay's answer (at most ``answerLimit`` bytes, within ``answerTimeout``).
    private func send(_ event: Event, to url: String, client: HTTPClient) async throws {
        var request = HTTPClientRequest(url: url)
        request.method = event.deletesChannel ? .DELETE : .POST
        if !event.deletesChannel {
            request.headers.add(name: "Content-Type", value: "text/plain")
            request.headers.add(name: "X-EventSource-Event", value: event.name)
            request.body = .bytes(event.data)
        }
        let response = try await client.execute(request, deadline: .now() + Self.answerTimeout)
        _ = try await response.body.collect(upTo: Self.answerLimit)
        // A channel to delete that the relay does not have (no stream, no message) is as good as deleted.
        guard (200..<300).contains(response.status.code) || (event.deletesChannel && response.status == .notFound) else {
            throw Refused(description: "the relay answered \(response.status.code) to a publication")
        }
    }

    /// An environment's name as one path segment.
    static func pathSegment(_ environment: String) -> String {
        environment.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? environment
    }
}
