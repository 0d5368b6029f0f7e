import Foundation
import NIOCore
import NIOPosix
import PlugboardTestSupport
import Synchronization
import Testing

@testable import PlugboardIdentity

/// Background threads (webhook delivery's): under `SCHED_IDLE` while nothing waits for them, so that any other thread
/// that wakes takes the processor from them at once; given a share of it, at a lower nice value, when work has waited
/// for them longer than the patience, so that a machine kept busy never starves them.
@Suite("background threads", .timeLimit(.hangGuard))
struct BackgroundPriorityTests {
    #if os(Linux)
    @Test(.enabled(if: BackgroundPriority.idlePolicyAllowed(), "this process may not leave SCHED_IDLE again"))
    func aBackgroundThreadRunsOnIdleProcessorsAndIsGivenItsShareWhenStarved() async throws {
        let loop = await OutboundEventLoop.background()
        defer { Task { await loop.shutdown() } }
        let onLoop = { () async throws -> (policy: Int, nice: Int)? in
            try await loop.group.next().submit { currentThreadScheduling() }.get()
        }
        let process = try #require(currentThreadScheduling())
        #expect(try await onLoop()?.policy == 5)
        #expect(try await onLoop()?.nice == process.nice + 10)

        let priority = try await loop.group.next().submit { BackgroundPriority.ofCurrentThread(niceness: 0) }.get()
        let now = ContinuousClock.now
        // Work waiting for only the patience is no reason yet.
        priority.observe(waitingSince: now - BackgroundPriority.patience, now: now)
        #expect(try await onLoop()?.policy == 5)
        priority.observe(waitingSince: now - BackgroundPriority.patience - .milliseconds(1), now: now)
        #expect(try await onLoop()?.policy == 0)
        // No work waiting, but within its share: it keeps it.
        priority.observe(waitingSince: nil, now: now + .milliseconds(500))
        #expect(try await onLoop()?.policy == 0)
        priority.observe(waitingSince: nil, now: now + BackgroundPriority.share)
        #expect(try await onLoop()?.policy == 5)
    }

    /// Without its share, a thread under `SCHED_IDLE` beside a busy thread on every processor gets about 0.3 % of one:
    /// 300 ms of work would take about 100 s. With it, a few seconds: about as long as on a thread at the nice value
    /// the share is given at, which is measured beside it, under the same load, as the deadline's yardstick (``eventuallyAsBackgroundWork``).
    @Test func workOnABackgroundLoopEndsOnAMachineThatIsNeverIdle() async throws {
        let loop = await OutboundEventLoop.background()
        defer { Task { await loop.shutdown() } }
        try await whileProcessorsAreBusy {
            let watch = BackgroundPriority.watch { loop.watch() }
            defer { watch.cancel() }
            let work = loop.group.next().submit { spin(processorTime: .milliseconds(300)) }
            let done = Atomic<Bool>(false)
            work.whenComplete { _ in done.store(true, ordering: .relaxed) }
            try await eventuallyAsBackgroundWork("300 ms of work on the background loop to end", processorTime: .milliseconds(300)) {
                done.load(ordering: .relaxed)
            }
        }
    }
    #endif
}
