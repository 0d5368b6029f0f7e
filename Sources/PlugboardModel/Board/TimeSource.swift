public import Foundation

/// Where the board and the server read the time: the system's clocks, or clocks a test moves by hand, so that a test
/// of a rollout's schedule, a token's expiry or a rate window advances time instead of sleeping through it.
public struct TimeSource: Sendable {
    /// The wall-clock time: what the board writes in its timestamps, schedules and expiry times are compared with.
    public var date: @Sendable () -> Date
    /// The monotonic time: what rate limits and windows measure their intervals with.
    public var instant: @Sendable () -> ContinuousClock.Instant

    /// A source that reads `date` and `instant`.
    public init(date: @escaping @Sendable () -> Date, instant: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.date = date
        self.instant = instant
    }

    /// The system's clocks.
    public static let system = TimeSource(date: { Date() }, instant: { ContinuousClock.now })

    /// The current wall-clock time as the board writes it (``Timestamp/format(_:)``).
    public func timestamp() -> String { Timestamp.format(date()) }
}
