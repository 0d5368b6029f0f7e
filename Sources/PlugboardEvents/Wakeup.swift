import Synchronization

/// A signal that tasks wait on: ``wake()`` ends every wait in progress, and a wait that starts after a wake it has
/// not seen ends at once, so a wake between a task's look at the board and its wait is never lost.
package final class Wakeup: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextWaiter: UInt64 = 0
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// The waits in progress and not cancelled.
        var open: Set<UInt64> = []
    }

    private let state = Mutex(State())

    package init() {}

    /// How many wakes there were: what a waiter saw before it looked.
    package var generation: UInt64 { state.withLock { $0.generation } }

    /// Ends every wait in progress.
    package func wake() {
        let waiting = state.withLock { state in
            state.generation &+= 1
            defer { state.waiting = [:] }
            return state.waiting
        }
        for continuation in waiting.values { continuation.resume() }
    }

    /// Waits until a wake after `generation`, for at most `limit`, or until the task is cancelled.
    package func wait(after generation: UInt64, upTo limit: Duration) async {
        let id = state.withLock { state in
            state.nextWaiter &+= 1
            state.open.insert(state.nextWaiter)
            return state.nextWaiter
        }
        defer { _ = state.withLock { $0.open.remove(id) } }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: limit) }
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let now = self.state.withLock { state -> Bool in
                            if state.generation != generation || !state.open.contains(id) { return true }
                            state.waiting[id] = continuation
                            return false
                        }
                        if now { continuation.resume() }
                    }
                } onCancel: {
                    let continuation = self.state.withLock { state in
                        state.open.remove(id)
                        return state.waiting.removeValue(forKey: id)
                    }
                    continuation?.resume()
                }
            }
            await group.next()
            group.cancelAll()
        }
    }
}
