import Foundation
import PlugboardIdentity
import Synchronization

/// One thread of its own, in the background (``BackgroundPriority``), on which delivery's work runs: encoding, signing
/// and reading the board for events takes the processor only when the board's writers, the server's requests and the
/// CLI's commands leave it free, so that sending events never slows a kill switch written meanwhile; and when a job
/// has waited longer than ``BackgroundPriority/patience`` (``watch()``), the thread is given a share of the processor,
/// so that a busy machine delays delivery but never stops it.
final class LowPriorityExecutor: TaskExecutor, @unchecked Sendable {
    /// The one thread every delivery of this process shares.
    static let shared = LowPriorityExecutor()

    private struct Queue {
        var jobs: [UnownedJob] = []
        /// Since when the thread has had work without starting a job: since the job running started, or since the
        /// first job waiting was queued; nil when it has none.
        var busy: ContinuousClock.Instant?
    }

    private let queue = Mutex(Queue())
    private let ready = DispatchSemaphore(value: 0)
    private let priority = Mutex<BackgroundPriority?>(nil)

    private init() {
        let thread = Thread { [self] in
            let background = BackgroundPriority.ofCurrentThread()
            priority.withLock { $0 = background }
            while true {
                ready.wait()
                let job = queue.withLock { queue -> UnownedJob? in
                    guard !queue.jobs.isEmpty else { return nil }
                    queue.busy = .now
                    return queue.jobs.removeFirst()
                }
                guard let job else { continue }
                job.runSynchronously(on: asUnownedTaskExecutor())
                queue.withLock { queue in queue.busy = queue.jobs.isEmpty ? nil : .now }
            }
        }
        thread.name = "plugboard-webhooks"
        thread.start()
    }

    func enqueue(_ job: UnownedJob) {
        queue.withLock { queue in
            if queue.busy == nil { queue.busy = .now }
            queue.jobs.append(job)
        }
        ready.signal()
    }

    /// Called every ``BackgroundPriority/patience``: gives the thread its share of the processor when it has had work
    /// for longer than that without starting a job (a job waits, or the one running is not given the processor).
    func watch() {
        let busy = queue.withLock { $0.busy }
        priority.withLock { $0 }?.observe(waitingSince: busy, now: .now)
    }
}
