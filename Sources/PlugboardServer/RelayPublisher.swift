import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Publishes the hosts' events to a pub/sub relay (`plugboard serve --relay-publish URL`, for example Nchan's publisher
/// location behind nginx): each event of an environment that is relayed is POSTed once to URL + environment, over one
/// kept-alive HTTP/1.1 connection, whatever the number of hosts reading the relay's stream.
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
/// holds up the server or a direct stream), a connection is given ``connectTimeout``, an answer ``answerTimeout``.
final class RelayPublisher: Service, Sendable {
    /// The most events waiting per environment; older ones are dropped.
    static let queueLimit = 4
    static let connectTimeout = TimeAmount.seconds(2)
    static let answerTimeout = Duration.seconds(5)
    /// How long a kept-alive connection waits for the next event before it is closed (nginx keeps one 75 s).
    static let idleTimeout = Duration.seconds(30)

    struct Event: Sendable {
        let environment: String
        let name: String
        let data: ByteBuffer
        /// Not an event: the environment's channel is deleted (``RelayPublisher/drop(_:)``).
        var deletesChannel = false
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

    /// Puts back an event that a closed kept-alive connection did not take, ahead of its environment's others.
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
        await cancelWhenGracefulShutdown { await self.publishUntilCancelled() }
    }

    private func publishUntilCancelled() async {
        var wakes = self.wakes.makeAsyncIterator()
        var failures = 0
        while !Task.isCancelled {
            guard let first = next() else {
                if await wakes.next() == nil { return }
                continue
            }
            do {
                try await connection(first: first, wakes: &wakes)
                failures = 0
            } catch {
                failures += 1
                if failures == 1 || failures % 100 == 0 {
                    logger.warning(
                        "cannot publish to the relay at http://\(host):\(port)\(path): \(error); events wait (at most \(Self.queueLimit) an environment)"
                    )
                }
                try? await Task.sleep(for: .milliseconds(min(2000, 50 << min(failures, 6))))
            }
        }
    }

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// One kept-alive connection: sends `first` and every event queued after it, until the queue stays empty for
    /// ``idleTimeout``. An event the connection could not deliver is put back once when the connection had already
    /// delivered one (the relay may have closed it while idle); else it is dropped with the error. A channel to delete is
    /// always put back.
    private func connection(first: Event, wakes: inout AsyncStream<Void>.Iterator) async throws {
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(Self.connectTimeout)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            // A channel to delete is tried again until the relay takes it: it ends a refused token's stream.
            if first.deletesChannel { putBack(first) }
            throw error
        }
        try await channel.executeThenClose { inbound, outbound in
            var answers = inbound.makeAsyncIterator()
            var event: Event? = first
            var delivered = 0
            while let current = event {
                do {
                    try await self.send(current, channel: channel.channel, outbound: outbound, answers: &answers)
                    delivered += 1
                } catch {
                    if delivered > 0 || current.deletesChannel { self.putBack(current) }
                    throw error
                }
                event = self.next()
                if event == nil {
                    // A wake left from an event already sent is not the end of the wait: only the timer's is.
                    let deadline = ContinuousClock.now + Self.idleTimeout
                    let idle = Task {
                        try await Task.sleep(for: Self.idleTimeout)
                        self.wake.yield()
                    }
                    while event == nil, ContinuousClock.now < deadline, await wakes.next() != nil { event = self.next() }
                    idle.cancel()
                }
            }
        }
    }

    private func send(
        _ event: Event, channel: any Channel, outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>,
        answers: inout NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    ) async throws {
        let method: HTTPMethod = event.deletesChannel ? .DELETE : .POST
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path + Self.pathSegment(event.environment))
        head.headers.add(name: "Host", value: "\(host):\(port)")
        head.headers.add(name: "Content-Length", value: String(event.data.readableBytes))
        if !event.deletesChannel {
            head.headers.add(name: "Content-Type", value: "text/plain")
            head.headers.add(name: "X-EventSource-Event", value: event.name)
        }
        let timer = Task {
            try await Task.sleep(for: Self.answerTimeout)
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        try await outbound.write(contentsOf: [.head(head), .body(.byteBuffer(event.data)), .end(nil)])
        var status: HTTPResponseStatus?
        while let part = try await answers.next() {
            switch part {
            case .head(let answer): status = answer.status
            case .body: break
            case .end:
                // A channel to delete that the relay does not have (no stream, no message) is as good as deleted.
                guard let status, (200..<300).contains(status.code) || (event.deletesChannel && status == .notFound) else {
                    throw Refused(description: "the relay answered \(status.map { String($0.code) } ?? "nothing") to a publication")
                }
                return
            }
        }
        throw Refused(description: "the relay closed the connection before answering")
    }

    /// An environment's name as one path segment.
    static func pathSegment(_ environment: String) -> String {
        environment.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? environment
    }
}
