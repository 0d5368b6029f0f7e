import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import Synchronization

/// The event stream: one connection that says when something changed, and carries the board's signed snapshot of
/// the change (a host with an anchor verifies it and acts without a request), reconnected with backoff and jitter.
extension RemoteBoardSource {
    func startStreaming() {
        streaming.withLock { task in
            guard task == nil else { return }
            task = Task.detached { [weak self] in await self?.streamForever() }
        }
    }

    func streamForever() async {
        var failures = 0
        while !Task.isCancelled {
            if await streamOnce() { failures = 0 } else { failures += 1 }
            if Task.isCancelled { return }
            try? await Task.sleep(for: Self.backoff(failures: failures, initial: initialBackoff, maximum: maximumBackoff))
        }
    }

    /// The delay before reconnection attempt `failures` (0 after a connection that worked): a random duration between
    /// zero and `initial × 2^failures`, capped at `maximum` ("full jitter").
    static func backoff(failures: Int, initial: Duration, maximum: Duration) -> Duration {
        jitter(upTo: max(.milliseconds(1), min(maximum, initial * Int(1 << min(failures, 20)))))
    }

    /// A random duration between zero and `ceiling`, in whole milliseconds.
    static func jitter(upTo ceiling: Duration) -> Duration {
        .milliseconds(Int.random(in: 0...Int(ceiling.components.seconds * 1000 + ceiling.components.attoseconds / 1_000_000_000_000_000)))
    }

    /// One connection of the event stream; true when it was established.
    func streamOnce() async -> Bool {
        // A relay's ids are its own (Nchan's time:sequence): the revision is read from the event's data, and none is
        // sent back (the host reads a snapshot from the server on every connection anyway).
        let relayed = relayStream != nil
        var request = relayStream.map { self.request(url: $0.absoluteString) } ?? self.request("/api/host/stream?push=snapshot")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let last = state.withLock { $0.revision }
        if last != 0, !relayed { request.headers.add(name: "Last-Event-ID", value: String(last)) }
        let response: HTTPClientResponse
        do { response = try await client.execute(request, timeout: Self.answerTimeout) } catch { return false }
        guard response.status == .ok else {
            let message = (try? await Self.message(response)) ?? "no message"
            logger.warning("the server refused the event stream (\(response.status.code)): \(message)")
            return false
        }
        state.withLock { $0.rereads += 1 }
        sendReports(after: .zero)  // one the server could not take before, unless its retry already waits
        var parser = EventStreamParser()
        do {
            for try await buffer in response.body {
                for event in try parser.feed(buffer.readableBytesView) {
                    if event.name == "fresh", let data = event.data {
                        fresh(data)
                        continue
                    }
                    guard let id = relayed ? event.data.flatMap(Self.revision) : event.id else { continue }
                    FanoutTrace.note("event", String(id))
                    let pushed = event.name == "changed" ? event.data.flatMap(Self.pushedSnapshot) : nil
                    state.withLock {
                        $0.revision = id
                        if let pushed { $0.pushed = pushed }
                    }
                    changes.signal()
                }
            }
        } catch {}
        changes.signal()  // a disconnection: the host notices nothing until it reconnects, but a waiting host may look
        return true
    }

    /// The revision a `changed` event's data starts with (`{"revision":N`), for events that come through a relay.
    static func revision(_ data: String) -> Int? {
        let prefix = "{\"revision\":"
        guard data.hasPrefix(prefix) else { return nil }
        return Int(data.dropFirst(prefix.count).prefix(while: \.isNumber))
    }

    /// The signed snapshot a `changed` event carries (`{"revision":N,"snapshot":{…}}`, as the server writes it) and its
    /// JSON as sent, not verified yet; nil for a notice alone or data that is not one.
    static func pushedSnapshot(_ data: String) -> (envelope: SignedSnapshot, json: Data)? {
        let utf8 = Array(data.utf8)
        let marker = Array(",\"snapshot\":".utf8)
        guard utf8.last == UInt8(ascii: "}"), let start = utf8.firstRange(of: marker)?.upperBound else { return nil }
        let json = Data(utf8[start..<(utf8.count - 1)])
        guard let envelope = try? SignedSnapshot.decode(json) else { return nil }
        return (envelope, json)
    }
}

/// Wakes the host when the event stream says something changed; at most one wake is kept while nobody waits.
final class ChangeSignal: Sendable {
    struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var next: UInt64 = 0
    }

    let state = Mutex(State())

    func signal() {
        let waiting = state.withLock { state in
            defer { state.waiters = [:] }
            if state.waiters.isEmpty { state.pending = true }
            return Array(state.waiters.values)
        }
        waiting.forEach { $0.resume() }
    }

    /// Returns at the next signal, or after `limit`.
    func wait(atMost limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait() }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns at the next signal (or at once if one is pending), or when the task is cancelled.
    func wait() async {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// Server-sent events, parsed incrementally (a line is at most ``lineLimit`` bytes: a pushed snapshot is one line).
struct EventStreamParser {
    /// The longest line read.
    static let lineLimit = 8 << 20

    struct Event {
        var name: String?
        var id: Int?
        /// The event's data lines, joined with newlines.
        var data: String?
    }

    var line: [UInt8] = []
    var current = Event()

    struct TooLong: Error {}

    mutating func feed(_ bytes: some Sequence<UInt8>) throws -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                if line.isEmpty {
                    if current.id != nil || current.name != nil || current.data != nil { events.append(current) }
                    current = Event()
                } else if line.first != UInt8(ascii: ":") {
                    let text = String(decoding: line, as: UTF8.self)
                    let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                    let value = parts.count > 1 ? parts[1].drop(while: { $0 == " " }) : ""
                    switch parts[0] {
                    case "event": current.name = String(value)
                    case "id": current.id = Int(value)
                    case "data": current.data = current.data.map { $0 + "\n" + value } ?? String(value)
                    default: break
                    }
                }
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
            guard line.count < Self.lineLimit else { throw TooLong() }
        }
        return events
    }
}
