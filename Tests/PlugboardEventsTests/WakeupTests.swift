import Foundation
import PlugboardTestSupport
import Testing

@testable import PlugboardEvents

/// The signal that wakes every endpoint's task when the board changes: a wake ends every wait, a wake that came
/// between a look and the wait is not lost, and a wait ends at its limit or when its task is cancelled.
///
/// A wait that should end early is given a limit (``longWait``) beyond the suite's hang guard, and is checked to end
/// well within it: ended by its limit, it would fail the test; ended as it should, it passes however slowly the run goes
/// (every test of a run starts together, so on a slow machine each lasts about as long as the whole run).
@Suite("the delivery's wake-up signal", .timeLimit(.hangGuard))
struct WakeupTests {
    /// Longer than the suite's hang guard.
    static let longWait = Duration.seconds(7_200)
    /// Half the hang guard: what a wait that ended early took, at most.
    static let early = Duration.seconds(900)

    @Test func aWakeEndsEveryWaitInProgress() async {
        let wakeup = Wakeup()
        let generation = wakeup.generation
        let clock = ContinuousClock()
        let started = clock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 { group.addTask { await wakeup.wait(after: generation, upTo: Self.longWait) } }
            // Woken again and again until every waiter has ended: one that starts waiting after a wake sees it at once.
            group.addTask {
                while !Task.isCancelled {
                    wakeup.wake()
                    try? await Task.sleep(for: .milliseconds(10))
                }
            }
            for _ in 0..<5 { await group.next() }
            group.cancelAll()
        }
        #expect(clock.now - started < Self.early)
    }

    @Test func aWakeBeforeTheWaitIsNotLost() async {
        let wakeup = Wakeup()
        let generation = wakeup.generation
        wakeup.wake()
        let clock = ContinuousClock()
        let started = clock.now
        await wakeup.wait(after: generation, upTo: Self.longWait)
        #expect(clock.now - started < Self.early)
        #expect(wakeup.generation == generation + 1)
    }

    @Test func aWaitEndsAtItsLimitOrWhenItsTaskIsCancelled() async {
        let wakeup = Wakeup()
        let clock = ContinuousClock()
        let started = clock.now
        await wakeup.wait(after: wakeup.generation, upTo: .milliseconds(50))
        #expect(clock.now - started >= .milliseconds(50))
        let waiting = Task { await wakeup.wait(after: wakeup.generation, upTo: Self.longWait) }
        waiting.cancel()
        await waiting.value
        #expect(clock.now - started < Self.early)
    }
}
