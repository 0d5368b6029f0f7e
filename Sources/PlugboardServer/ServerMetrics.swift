import Foundation
import NIOCore
import Synchronization

/// The server's own counters, exposed at `GET /metrics` in the Prometheus text format (written by hand: a few
/// counters and one histogram do not need a metrics library).
final class ServerMetrics: Sendable {
    /// A gauge that goes up and down.
    final class Gauge: Sendable {
        private let value = Mutex(0)
        func add(_ delta: Int) { value.withLock { $0 += delta } }
        var current: Int { value.withLock { $0 } }
    }

    private struct RouteStats {
        var byStatus: [Int: Int] = [:]
        var buckets: [Int]
        var sum: Double = 0
        var count = 0
    }

    /// Latency bucket bounds, in seconds.
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

    private let routes = Mutex<[String: RouteStats]>([:])
    /// Connected event streams.
    let streams = Gauge()
    /// Environments whose hosts' events are published to the relay (`--relay-publish`): one upstream stream each.
    let relayChannels = Gauge()
    /// Board changes the server noticed since it started.
    let boardChanges = Mutex(0)
    /// Client usage entries dropped because the buffer was full.
    let droppedUsage = Gauge()

    func record(route: String, status: Int, seconds: Double) {
        routes.withLock { routes in
            var stats = routes[route] ?? RouteStats(buckets: Array(repeating: 0, count: Self.bounds.count))
            stats.byStatus[status, default: 0] += 1
            for (index, bound) in Self.bounds.enumerated() where seconds <= bound { stats.buckets[index] += 1 }
            stats.sum += seconds
            stats.count += 1
            routes[route] = stats
        }
    }

    /// The Prometheus text exposition (format 0.0.4).
    func exposition() -> String {
        let routes = self.routes.withLock { $0 }
        var text = "# HELP plugboard_http_requests_total HTTP requests by route and status.\n# TYPE plugboard_http_requests_total counter\n"
        for (route, stats) in routes.sorted(by: { $0.key < $1.key }) {
            for (status, count) in stats.byStatus.sorted(by: { $0.key < $1.key }) {
                text += "plugboard_http_requests_total{route=\"\(route)\",status=\"\(status)\"} \(count)\n"
            }
        }
        text +=
            "# HELP plugboard_http_request_duration_seconds Time to the response head, by route.\n# TYPE plugboard_http_request_duration_seconds histogram\n"
        for (route, stats) in routes.sorted(by: { $0.key < $1.key }) {
            for (index, bound) in Self.bounds.enumerated() {
                text += "plugboard_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"\(bound)\"} \(stats.buckets[index])\n"
            }
            text += "plugboard_http_request_duration_seconds_bucket{route=\"\(route)\",le=\"+Inf\"} \(stats.count)\n"
            text += "plugboard_http_request_duration_seconds_sum{route=\"\(route)\"} \(stats.sum)\n"
            text += "plugboard_http_request_duration_seconds_count{route=\"\(route)\"} \(stats.count)\n"
        }
        text += Self.metric("plugboard_streams_connected", "gauge", "Connected event streams.", streams.current)
        text += Self.metric(
            "plugboard_relay_channels", "gauge", "Environments whose host events are published to the relay, one stream each.",
            relayChannels.current)
        text += Self.metric(
            "plugboard_board_changes_total", "counter", "Board changes noticed since the server started.", boardChanges.withLock { $0 })
        text += Self.metric(
            "plugboard_usage_dropped_total", "counter", "Client usage entries dropped because the buffer was full.", droppedUsage.current)
        return text
    }

    /// A metric without labels in the text exposition: its `HELP` and `TYPE` lines, then its value.
    private static func metric(_ name: String, _ type: String, _ help: String, _ value: some CustomStringConvertible) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
    }
}

extension ServerMetrics {
    /// Hands out an event stream registered by `register` (nil: the server is closing): counted in
    /// `plugboard_streams_connected` while it is open, and removed by `unregister` when the client goes.
    func openStream(
        _ stream: AsyncStream<ByteBuffer>, _ continuation: AsyncStream<ByteBuffer>.Continuation, id: UInt64?,
        unregister: @escaping @Sendable (UInt64) -> Void
    ) -> AsyncStream<ByteBuffer> {
        guard let id else {
            continuation.finish()
            return stream
        }
        streams.add(1)
        continuation.onTermination = { [streams] _ in
            streams.add(-1)
            unregister(id)
        }
        return stream
    }
}
