public import Foundation
import Synchronization

/// A wall clock and a monotonic clock that move only when a test moves them: given to the code under test in place of
/// the system's, so that a test of a schedule, an expiry or a rate window advances time instead of sleeping through it.
public final class TestClock: Sendable {
    private let state: Mutex<(date: Date, instant: ContinuousClock.Instant)>

    /// A clock that reads `start` (now, by default) until it is moved.
    public init(_ start: Date = Date()) {
        state = Mutex((start, ContinuousClock.now))
    }

    /// The wall-clock time it reads.
    public var now: Date { state.withLock { $0.date } }

    /// Its wall-clock reading, as a closure for a `now:` parameter.
    public var date: @Sendable () -> Date { { self.now } }

    /// Its monotonic reading, as a closure for code that measures intervals.
    public var instant: @Sendable () -> ContinuousClock.Instant { { self.state.withLock { $0.instant } } }

    /// Moves both clocks on by `duration`.
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        state.withLock {
            $0.date += Double(seconds) + Double(attoseconds) / 1e18
            $0.instant += duration
        }
    }
}
