package import Foundation

/// How delivery sends: its retry schedule, its bounds, and whether private addresses may be called.
package struct WebhookSettings: Sendable {
    /// The waits after each failed attempt of one event (Standard Webhooks' schedule: 5 s, 5 min, 30 min, 2 h, 5 h,
    /// 10 h, 10 h; about three days); after the last, the last wait repeats and the endpoint shows as failing.
    package var schedule: [Duration] = [
        .seconds(5), .seconds(300), .seconds(1800), .seconds(7200), .seconds(18000), .seconds(36000), .seconds(36000),
    ]
    /// The share of a wait added or taken at random, so that endpoints that failed together do not retry together.
    package var jitter = 0.1
    /// How long one attempt may take, connection included.
    package var attemptTimeout: Duration = .seconds(10)
    /// Whether endpoints on private and loopback addresses are called (link-local and reserved ones never are).
    package var allowPrivate = false
    /// The console's address, for links in events; nil for none.
    package var consoleURL: String?
    /// The most rows read at once for one endpoint.
    package var batch = 200
    /// How often the endpoints' cursors are written, all in one transaction: a process that dies sends again at most
    /// what it sent in this interval, which receivers deduplicate.
    package var cursorInterval: Duration = .milliseconds(200)
    /// The longest wait of running delivery for a ring (a board change its process saw) when no cursor waits to be
    /// written: a backstop, since every change rings.
    package var ringWait: Duration = .seconds(1)
    /// The longest `Retry-After` honoured.
    package var longestRetryAfter: Duration = .seconds(86_400)

    /// The house settings.
    package init() {}

    /// The wait after the `attempts`-th failure in a row (1 for the first), with jitter, or the endpoint's
    /// `Retry-After` when it asks for longer.
    package func wait(afterAttempts attempts: Int, retryAfter: String?, now: Date) -> Duration {
        let base = schedule.isEmpty ? .seconds(5) : schedule[min(max(attempts, 1), schedule.count) - 1]
        let seconds = Self.seconds(base)
        var wait = seconds * (1 + Double.random(in: -jitter...jitter))
        if let retryAfter, let asked = Self.retryAfter(retryAfter, now: now) {
            wait = max(wait, min(asked, Self.seconds(longestRetryAfter)))
        }
        return .milliseconds(Int64(max(wait, 0) * 1000))
    }

    /// A `Retry-After` value in seconds: delta-seconds, or an HTTP date.
    static func retryAfter(_ text: String, now: Date) -> Double? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text), seconds >= 0 { return Double(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text).map { max($0.timeIntervalSince(now), 0) }
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// A schedule written as waits separated by commas: `200ms,1s,5m,2h`.
    package static func schedule(_ text: String) -> [Duration]? {
        let waits = text.split(separator: ",").map { part -> Duration? in
            let part = part.trimmingCharacters(in: .whitespaces)
            for (suffix, scale) in [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)] where part.hasSuffix(suffix) {
                guard let value = Double(part.dropLast(suffix.count)), value >= 0 else { return nil }
                return .milliseconds(Int64(value * scale * 1000))
            }
            return nil
        }
        guard !waits.isEmpty, waits.count <= 20, waits.allSatisfy({ $0 != nil }) else { return nil }
        return waits.compactMap { $0 }
    }
}
