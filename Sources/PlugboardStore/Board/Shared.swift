import Synchronization

/// A value behind a lock, held by a board and the boards made from it for a change request (``Board/init(_:hook:)``).
final class Shared<Value>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: sending Value) { mutex = Mutex(value) }

    func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        try mutex.withLock { value in try body(&value) }
    }
}
