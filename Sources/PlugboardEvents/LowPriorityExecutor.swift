import Foundation
import PlugboardIdentity
import Synchronization

/// One thread of its own, at a lower scheduling priority (`nice`), on which delivery's work runs: encoding, signing and
/// reading the board for events takes the processor only when the board's writers, the server's requests and the
/// CLI's commands leave it free, so that sending events never slows a kill switch written meanwhile.
final class LowPriorityExecutor: TaskExecutor, @unchecked Sendable {
    /// The one thread every delivery of this process shares.
    static let shared = LowPriorityExecutor()

    private let jobs = Mutex<[UnownedJob]>([])
    private let ready = DispatchSemaphore(value: 0)

    /// A thread at `niceness` above the process's (Linux sets it per thread; elsewhere the thread runs at the
    /// process's priority).
    private init(niceness: Int32 = 10) {
        let thread = Thread { [self] in
            lowerCurrentThreadPriority(by: niceness)
            while true {
                ready.wait()
                guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
        thread.name = "plugboard-webhooks"
        thread.start()
    }

    func enqueue(_ job: UnownedJob) {
        jobs.withLock { $0.append(job) }
        ready.signal()
    }
}
