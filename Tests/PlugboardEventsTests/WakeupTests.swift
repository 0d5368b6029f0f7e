import Foundation
import Testing

@testable import PlugboardEvents

/// The signal that wakes every endpoint's task when the board changes: a wake ends every wait, a wake that came
/// between a look and the wait is not lost, and a wait ends at its limit or when its task is cancelled.
@Suite("the delivery's wake-up signal", .timeLimit(.minutes(10)))
struct WakeupTests {
    @Test func aWakeEndsEveryWaitInProgress() async {
        let wakeup = Wakeup()
        let generation = wakeup.generation
        let clock = ContinuousClock()
        let started = clock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 { group.addTask { await wakeup.wait(after: generation, upTo: .seconds(600)) } }
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
        #expect(clock.now - started < .seconds(300))
    }

    @Test func aWakeBeforeTheWaitIsNotLost() async {
        let wakeup = Wakeup()
        let generation = wakeup.generation
        wakeup.wake()
        let clock = ContinuousClock()
        let started = clock.now
        await wakeup.wait(after: generation, upTo: .seconds(600))
        #expect(clock.now - started < .seconds(300))
        #expect(wakeup.generation == generation + 1)
    }

    @Test func aWaitEndsAtItsLimitOrWhenItsTaskIsCancelled() async {
        let wakeup = Wakeup()
        let clock = ContinuousClock()
        let started = clock.now
        await wakeup.wait(after: wakeup.generation, upTo: .milliseconds(50))
        #expect(clock.now - started >= .milliseconds(50))
        let waiting = Task { await wakeup.wait(after: wakeup.generation, upTo: .seconds(600)) }
        waiting.cancel()
        await waiting.value
        #expect(clock.now - started < .seconds(300))
    }
}
