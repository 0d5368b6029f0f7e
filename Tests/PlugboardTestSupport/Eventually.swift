extension Duration {
    /// How long a test waits for something that will happen (an event, a line, a report, a process's end): a guard
    /// against hanging, not a measurement, so it is reached only when the code under test fails.
    ///
    /// Swift Testing starts the tests of a run together: where the machine is slow and busy, a step that takes
    /// milliseconds alone waits minutes for the processor. Ten minutes is beyond the slowest wait seen in a whole run
    /// on a 2-core VM, and within the suites' hang guard.
    public static var eventDeadline: Duration { .seconds(600) }
}

/// What ``eventually(_:timeout:poll:_:)`` throws when what it waited for did not happen in time.
public struct NotEventually: Error, CustomStringConvertible {
    /// What was awaited, in the caller's words.
    public let awaited: String
    /// How long it was waited for.
    public let waited: Duration

    public var description: String { "waited \(waited) for \(awaited), in vain" }
}

/// Checks `condition` every `poll` until it holds, and throws ``NotEventually`` (naming `what`) once `timeout` passed
/// without it: the one way a test waits for something another task, thread or process does.
///
/// The timeout is a guard against hanging, not a measurement: generous, so that a test passes on a busy machine, and
/// never reached when the code under test works. Looks are spaced by sleeps, so no thread of the shared pool blocks;
/// after ten seconds they are at least half a second apart.
public func eventually(
    _ what: @autoclosure () -> String, timeout: Duration = .eventDeadline, poll: Duration = .milliseconds(20),
    _ condition: () async throws -> Bool
) async throws {
    _ = try await eventually(what(), timeout: timeout, poll: poll) { try await condition() ? true : nil }
}

/// Reads `value` every `poll` until it gives a value, and returns it; throws ``NotEventually`` (naming `what`) once
/// `timeout` passed without one. See ``eventually(_:timeout:poll:_:)``.
///
/// Name the value's type where the result goes to an optional (`let row: Row = try await eventually(…)`): otherwise
/// `T` is inferred as the optional itself, and the first nil is returned as a value.
public func eventually<T>(
    _ what: @autoclosure () -> String, timeout: Duration = .eventDeadline, poll: Duration = .milliseconds(20),
    _ value: () async throws -> T?
) async throws -> T {
    let clock = ContinuousClock()
    let started = clock.now
    while true {
        if let found = try await value() { return found }
        let waited = clock.now - started
        if waited > timeout { break }
        // After ten seconds, at most two looks a second: a look may start a process, and a wait that fails lasts
        // until its deadline, beside the run's other tests.
        try await Task.sleep(for: waited < .seconds(10) ? poll : max(poll, .milliseconds(500)))
    }
    // One last look, so that a value that came during the final sleep is not reported missing.
    if let found = try await value() { return found }
    throw NotEventually(awaited: what(), waited: clock.now - started)
}

/// Runs `work` and returns what it returns, or nil once `timeout` passed first (`work` is then cancelled): the guard of
/// ``eventually(_:timeout:poll:_:)`` for a wait that is one call to await rather than a condition to look at.
public func within<T: Sendable>(_ timeout: Duration, _ work: @escaping @Sendable () async -> T) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await work() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
