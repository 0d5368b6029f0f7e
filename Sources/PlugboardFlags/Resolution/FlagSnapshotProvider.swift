public import Foundation
import Synchronization

/// Holds the current ``FlagSnapshot`` and lets a writer swap in a new one atomically.
///
/// Readers take the current snapshot under a mutex held only for a reference copy, then evaluate without any
/// lock; a writer compiles the new snapshot *before* taking the lock, so readers never wait on compilation.
/// Evaluations that started on the old snapshot finish on it.
///
/// ```swift
/// let provider = FlagSnapshotProvider()
/// try provider.update(json: data)                 // e.g. from a board reloader
/// provider.bool("checkout.new-flow", default: false, context: ctx).value
/// ```
public final class FlagSnapshotProvider: FlagResolver {
    private struct State: Sendable {
        var snapshot: FlagSnapshot
        var generation: UInt64
        var loaded: Bool
    }

    private let state: Mutex<State>

    /// Creates a holder; without a snapshot it starts empty and typed evaluations report
    /// `ResolutionErrorCode.providerNotReady` until the first ``replace(with:)`` or ``update(json:mode:environment:)``.
    public init(_ snapshot: FlagSnapshot? = nil) {
        state = Mutex(State(snapshot: snapshot ?? .empty, generation: snapshot == nil ? 0 : 1, loaded: snapshot != nil))
    }

    /// The snapshot in use now.
    public var currentSnapshot: FlagSnapshot { state.withLock { $0.snapshot } }

    /// How many snapshots have been installed (0 before the first).
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// Whether a snapshot has been installed.
    public var isReady: Bool { state.withLock { $0.loaded } }

    /// Installs `snapshot` for all later evaluations and returns the one it replaces.
    @discardableResult
    public func replace(with snapshot: FlagSnapshot) -> FlagSnapshot {
        state.withLock { state in
            let previous = state.snapshot
            state.snapshot = snapshot
            state.generation += 1
            state.loaded = true
            return previous
        }
    }

    /// Compiles the features JSON and installs it; on error the current snapshot stays in place.
    ///
    /// - Throws: ``FlagsError`` when the JSON is malformed or refused by validation.
    @discardableResult
    public func update(json: Data, mode: ValidationMode = .strict, environment: EvaluationEnvironment = .init()) throws(FlagsError)
        -> FlagSnapshot
    {
        let snapshot = try FlagSnapshot(json: json, mode: mode, environment: environment)
        replace(with: snapshot)
        return snapshot
    }
}
