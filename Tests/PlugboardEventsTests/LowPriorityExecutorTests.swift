import Foundation
import PlugboardIdentity
import PlugboardTestSupport
import Synchronization
import Testing

@testable import PlugboardEvents

/// Delivery's own thread: in the background, yet its work ends on a machine whose every processor is kept busy.
@Suite("delivery's thread", .serialized, .timeLimit(.hangGuard))
struct LowPriorityExecutorTests {
    #if os(Linux)
    /// Once it has had no work for a while (a test before may have left it with its share).
    @Test func itRunsInTheBackground() async throws {
        try await eventually("delivery's thread to run under SCHED_IDLE", timeout: .seconds(60), poll: .milliseconds(100)) {
            LowPriorityExecutor.shared.watch()
            let policy = await Task(executorPreference: LowPriorityExecutor.shared) { currentThreadScheduling()?.policy }.value
            // A process that may not leave SCHED_IDLE again never enters it.
            return policy == (BackgroundPriority.idlePolicyAllowed() ? 5 : 0)
        }
    }

    /// Under `SCHED_IDLE` only, 300 ms of work beside a busy thread on every processor would take about 100 s: some
    /// 37 times as long as on a thread at the nice value its share is given at, which is measured beside it, under the
    /// same load, as the deadline's yardstick (``eventuallyAsBackgroundWork``).
    @Test func itsWorkEndsOnAMachineThatIsNeverIdle() async throws {
        try await whileProcessorsAreBusy {
            let watch = BackgroundPriority.watch { LowPriorityExecutor.shared.watch() }
            defer { watch.cancel() }
            let done = Atomic<Bool>(false)
            Task(executorPreference: LowPriorityExecutor.shared) {
                spin(processorTime: .milliseconds(300))
                done.store(true, ordering: .relaxed)
            }
            try await eventuallyAsBackgroundWork("300 ms of work on delivery's thread to end", processorTime: .milliseconds(300)) {
                done.load(ordering: .relaxed)
            }
        }
    }
    #endif
}
