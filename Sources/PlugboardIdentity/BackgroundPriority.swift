import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How a thread that does background work is scheduled: on Linux under `SCHED_IDLE`, so that it runs only on a
/// processor nothing else wants, and a thread of any process that wakes (a `plugboard plugin kill`, a request) takes
/// the processor from it at once; at a lower `nice` under `SCHED_OTHER` for a while when work has waited for it
/// longer than ``patience``, so that a machine kept busy never starves it.
///
/// The thread itself makes one (``ofCurrentThread(niceness:)``); whoever knows whether work waits for the thread
/// reports it with ``observe(starved:now:)`` every ``patience``. Elsewhere than on Linux the thread runs at the
/// process's priority and nothing changes.
package final class BackgroundPriority: Sendable {
    /// How long work may wait for the thread before it is given its share of the processor.
    package static let patience: Duration = .milliseconds(100)
    /// How long the thread keeps its share once given it, before it runs on idle processors only again.
    package static let share: Duration = .seconds(1)

    #if os(Linux)
    private let thread: pthread_t
    #endif
    /// Since when the thread has had its share; nil while it runs on idle processors only.
    private let shared = Mutex<ContinuousClock.Instant?>(nil)

    #if os(Linux)
    private init(thread: pthread_t) {
        self.thread = thread
    }
    #else
    private init() {}
    #endif

    /// The calling thread, from now on in the background: `niceness` above the process's priority for the times it
    /// has its share, and under `SCHED_IDLE` otherwise.
    package static func ofCurrentThread(niceness: Int32 = 10) -> BackgroundPriority {
        #if os(Linux)
        // A nice value is a thread's own on Linux (`who` 0 is the calling thread), and outlives a change of policy.
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        _ = setpriority(which, 0, getpriority(which, 0) + niceness)
        let priority = BackgroundPriority(thread: pthread_self())
        priority.schedule(idle: true)
        return priority
        #else
        return BackgroundPriority()
        #endif
    }

    /// Whether work has waited for the thread longer than ``patience``: then it is given its share of the processor
    /// (or keeps it); once it has had it for ``share`` without work waiting that long, it runs on idle processors
    /// only again.
    package func observe(starved: Bool, now: ContinuousClock.Instant) {
        shared.withLock { since in
            if starved {
                if since == nil { schedule(idle: false) }
                since = now
            } else if let start = since, now - start >= Self.share {
                schedule(idle: true)
                since = nil
            }
        }
    }

    private func schedule(idle: Bool) {
        #if os(Linux)
        var parameters = sched_param(sched_priority: 0)
        _ = pthread_setschedparam(thread, idle ? Self.idlePolicy : Int32(SCHED_OTHER), &parameters)
        #endif
    }

    #if os(Linux)
    /// `SCHED_IDLE` (5), which Glibc's module does not export.
    private static let idlePolicy: Int32 = 5
    #endif
}
