import Synchronization

/// At most ``width`` callers at a time, and at most ``queueLimit`` waiting: past that, ``enter()`` answers nil at once
/// (the caller refuses the request) instead of queueing without bound.
final class ConcurrencyLimit: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Bool, Never>] = []
    }

    /// A place taken; give it back with ``leave()``.
    struct Slot: Sendable {
        let limit: ConcurrencyLimit
        func leave() { limit.leave() }
    }

    let width: Int
    let queueLimit: Int
    private let state = Mutex(State())

    init(width: Int, queueLimit: Int) {
        self.width = max(1, width)
        self.queueLimit = max(0, queueLimit)
    }

    /// Waits for a place; nil when too many already wait.
    func enter() async -> Slot? {
        enum Decision { case run, wait, refuse }
        let decision = state.withLock { state -> Decision in
            if state.running < width {
                state.running += 1
                return .run
            }
            return state.waiting.count < queueLimit ? .wait : .refuse
        }
        switch decision {
        case .run: return Slot(limit: self)
        case .refuse: return nil
        case .wait:
            let admitted = await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool? in
                    // A place may have been given back meanwhile, or the queue filled up.
                    if state.running < width {
                        state.running += 1
                        return true
                    }
                    if state.waiting.count >= queueLimit { return false }
                    state.waiting.append(continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
            return admitted ? Slot(limit: self) : nil
        }
    }

    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            // The place passes to the next waiter: running stays the same.
            return state.waiting.removeFirst()
        }
        next?.resume(returning: true)
    }
}
