import Foundation
import Synchronization

/// Runs `body` while every processor of the machine is kept busy by a thread of this process at its priority, each
/// spinning until `body` ends: what a background thread competes with on a machine that is never idle.
public func whileProcessorsAreBusy<T>(_ body: () async throws -> T) async rethrows -> T {
    let done = Atomic<Bool>(false)
    let threads = (0..<ProcessInfo.processInfo.activeProcessorCount).map { _ in
        Thread { while !done.load(ordering: .relaxed) {} }
    }
    for thread in threads { thread.start() }
    defer { done.store(true, ordering: .relaxed) }
    return try await body()
}

/// Keeps the calling thread busy until it has used `time` of processor time (its own, not the wall clock's): work
/// that takes as long as the share of the processor the thread is given allows.
public func spin(processorTime time: Duration) {
    func used() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }
    let start = used()
    while used() - start < time {}
}

/// The calling thread's scheduling: its policy (0 `SCHED_OTHER`, 5 `SCHED_IDLE`) and nice value (Linux; nil
/// elsewhere).
public func currentThreadScheduling() -> (policy: Int, nice: Int)? {
    threadScheduling("/proc/thread-self/stat")
}

/// A thread's scheduling, from its `stat` file under `/proc` (`/proc/PID/task/TID/stat`): its policy and nice value.
public func threadScheduling(_ statPath: String) -> (policy: Int, nice: Int)? {
    guard let stat = try? String(contentsOfFile: statPath, encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
    // The fields after the command's name, which is in parentheses, start at the third (the state).
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 38, let nice = Int(fields[16]), let policy = Int(fields[38]) else { return nil }
    return (policy, nice)
}
