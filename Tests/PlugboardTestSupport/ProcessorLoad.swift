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

/// How long `time` of processor work takes, in wall-clock time, on a thread of its own whose nice value is `niceness`
/// above this process's: the yardstick for work a background thread is promised a share for. Measured beside that
/// work, it is slowed as much by whatever else the machine runs (the rest of the test suite), so a deadline drawn
/// from it holds on a machine of any load.
public func wallTimeOfWork(processorTime time: Duration, niceness: Int32) async -> Duration {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            #if os(Linux)
            // `who` 0 is the calling thread: a nice value is a thread's own on Linux.
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            _ = setpriority(which, 0, getpriority(which, 0) + niceness)
            #endif
            let clock = ContinuousClock()
            let start = clock.now
            spin(processorTime: time)
            continuation.resume(returning: clock.now - start)
        }
        thread.start()
    }
}

/// Waits until `done` holds for work of `processorTime` on a background thread that is promised a share at nice
/// `niceness` above the process: for at most 4 times the same work takes on a thread at that nice value, measured now
/// beside it (``wallTimeOfWork(processorTime:niceness:)``), and at least 60 s. Under `SCHED_IDLE` only, without its
/// share, the work gets about a 37th of the yardstick's and the wait fails, at any load.
public func eventuallyAsBackgroundWork(
    _ what: String, processorTime: Duration, niceness: Int32 = 10, _ done: () -> Bool
) async throws {
    let yardstick = await wallTimeOfWork(processorTime: processorTime, niceness: niceness)
    try await eventually(what, timeout: max(.seconds(60), yardstick * 4)) { done() }
}
