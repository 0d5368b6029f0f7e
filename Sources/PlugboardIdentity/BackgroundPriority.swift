import Foundation
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
/// The thread itself makes one (``ofCurrentThread(niceness:)``); whoever knows since when work waits for the thread
/// reports it with ``observe(waitingSince:now:)`` every ``patience`` (``watch(_:)``). Linux lets a thread leave `SCHED_IDLE` only with
/// `CAP_SYS_NICE` or when `RLIMIT_NICE` allows its nice value (systemd: `LimitNICE=+10`); where neither holds
/// (``idlePolicyAllowed(niceness:)``), the thread runs at the lower nice value under `SCHED_OTHER` all the time. Elsewhere
/// than on Linux the thread runs at the process's priority and nothing changes.
package final class BackgroundPriority: Sendable {
    /// How long work may wait for the thread before it is given its share of the processor.
    package static let patience: Duration = .milliseconds(100)
    /// How long the thread keeps its share once given it, before it runs on idle processors only again.
    package static let share: Duration = .seconds(1)

    #if os(Linux)
    private let thread: pthread_t
    #endif
    /// Whether the thread runs under `SCHED_IDLE` while not starved.
    package let idles: Bool
    /// Since when the thread has had its share; nil while it runs on idle processors only.
    private let shared = Mutex<ContinuousClock.Instant?>(nil)

    #if os(Linux)
    private init(thread: pthread_t, idles: Bool) {
        self.thread = thread
        self.idles = idles
    }
    #else
    private init() {
        idles = false
    }
    #endif

    /// The calling thread, from now on in the background: `niceness` above the process's priority for the times it
    /// has its share, and under `SCHED_IDLE` otherwise.
    package static func ofCurrentThread(niceness: Int32 = 10) -> BackgroundPriority {
        #if os(Linux)
        // A nice value is a thread's own on Linux (`who` 0 is the calling thread), and outlives a change of policy.
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        let nice = getpriority(which, 0) + niceness
        _ = setpriority(which, 0, nice)
        let priority = BackgroundPriority(thread: pthread_self(), idles: idlePolicyAllowed(nice: nice))
        if priority.idles { priority.schedule(idle: true) }
        return priority
        #else
        return BackgroundPriority()
        #endif
    }

    /// Since when work has waited for the thread (nil when none waits): when longer than ``patience``, the thread is
    /// given its share of the processor (or keeps it); once it has had it for ``share`` without work waiting that
    /// long, it runs on idle processors only again.
    package func observe(waitingSince waiting: ContinuousClock.Instant?, now: ContinuousClock.Instant) {
        guard idles else { return }
        let starved = waiting.map { now - $0 > Self.patience } ?? false
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

    /// Runs `look` every ``patience``, at the process's priority, until the task answered is cancelled: what calls
    /// ``observe(waitingSince:now:)`` for the threads it looks at.
    package static func watch(_ look: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: patience)
                look()
            }
        }
    }

    private func schedule(idle: Bool) {
        #if os(Linux)
        var parameters = sched_param(sched_priority: 0)
        _ = pthread_setschedparam(thread, idle ? Self.idlePolicy : Int32(SCHED_OTHER), &parameters)
        #endif
    }

    /// Whether a thread of this process at `niceness` above its priority may leave `SCHED_IDLE` again, and so runs
    /// under it (Linux; false elsewhere).
    package static func idlePolicyAllowed(niceness: Int32 = 10) -> Bool {
        #if os(Linux)
        return idlePolicyAllowed(nice: getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) + niceness)
        #else
        return false
        #endif
    }

    #if os(Linux)
    /// `SCHED_IDLE` (5), which Glibc's module does not export.
    private static let idlePolicy: Int32 = 5
    /// `RLIMIT_NICE` (13), which Glibc's module does not export.
    private static let niceLimit: UInt32 = 13
    /// `CAP_SYS_NICE`'s bit in a capability set.
    private static let sysNice: UInt64 = 1 << 23

    /// Whether a thread at `nice` may leave `SCHED_IDLE`: with `CAP_SYS_NICE` in the process's effective set, or when
    /// `RLIMIT_NICE` reaches `nice` (its value counts 20 − nice).
    private static func idlePolicyAllowed(nice: Int32) -> Bool {
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(Self.niceLimit), &limit) == 0, limit.rlim_cur >= rlim_t(max(0, 20 - nice)) {
            return true
        }
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
            let effective = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return effective & sysNice != 0
    }
    #endif
}
