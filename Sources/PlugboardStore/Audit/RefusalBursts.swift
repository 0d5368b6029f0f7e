import Foundation
import PlugboardModel
import Synchronization

/// Refused attempts counted in memory, so that a flood of them cannot grow the append-only audit log without bound.
///
/// A burst is what one principal (the actor's OS user or token principal) attempts with one action within ``window``
/// of its first refused attempt. The first refusal of a burst is written at once, as a row of its own; the rest are
/// counted here and written as one row with their count, their first and last time and the targets they named, when
/// the burst ends (at the next refusal of any burst, or ``Board/flushRefusals(closedOnly:)`` on a server's timer) or
/// sooner: before the rows of any change, before the log is read or verified, and at shutdown. A flood therefore
/// costs at most two rows a window per principal and action, however many actions it rotates through. No row is ever
/// updated. Rows taken to be written are forgotten only once written: rows whose transaction failed are put back
/// (``putBack(_:)``) and come first in the next rows taken. A process killed in a burst loses that burst's count, never
/// its first row. Only a long-running process counts (``Board/boundRefusals()``): until then every refusal is written.
final class RefusalBursts: Sendable {
    /// How long a burst lasts from its first refusal.
    static let window = Duration.seconds(60)
    /// At most this many bursts are kept open; past it every count is written and the bursts close.
    static let capacity = 10_000
    /// A summary names at most this many distinct targets, and counts the refusals that named others.
    static let targetLimit = 10

    /// The refusals of one burst that are not written yet.
    struct Burst {
        let opened: ContinuousClock.Instant
        /// The last refused actor and attempt, whose action, target type and sentence the summary row keeps.
        var actor: Principal
        var entry: AuditEntry
        var count = 0
        var firstAt = ""
        var lastAt = ""
        var targets: [String] = []
        var otherTargets = 0

        /// The row that records the counted refusals.
        var summary: (actor: Principal, entry: AuditEntry) {
            var row = AuditEntry(
                action: entry.action, outcome: .refused, targetType: entry.targetType,
                targetID: targets.count == 1 && otherTargets == 0 ? targets[0] : nil, environment: entry.environment,
                reason: entry.reason)
            row.after = .object([
                "count": .int(count), "first_at": .string(firstAt), "last_at": .string(lastAt),
                "targets": .array(targets.map { .string($0) }), "other_targets": .int(otherTargets),
            ])
            return (actor, row)
        }
    }

    /// The open bursts, and the rows taken whose write failed (``putBack(_:)``), oldest first.
    private struct State {
        var open: [String: Burst] = [:]
        var unwritten: [Row] = []
    }

    private let state = Mutex(State())
    /// Off until ``Board/boundRefusals()``: a command-line process writes each refusal it meets, and ends.
    private let counting = Atomic<Bool>(false)

    /// Counts refusals from now on.
    func startCounting() { counting.store(true, ordering: .relaxed) }

    /// A row to write: who and what.
    typealias Row = (actor: Principal, entry: AuditEntry)

    /// Takes a refusal: nil when it was counted in an open burst; otherwise it opens a burst and must be written as its
    /// own row, after the returned rows of the bursts that ended (its own earlier one included).
    func admit(_ entry: AuditEntry, by actor: Principal, at time: String, now: ContinuousClock.Instant = .now) -> [Row]? {
        guard counting.load(ordering: .relaxed) else { return [] }
        let key = actor.osUser + "\u{0}" + entry.action.name
        return state.withLock { state -> [Row]? in
            if var burst = state.open[key], now - burst.opened < Self.window {
                burst.actor = actor
                burst.entry = entry
                if burst.count == 0 { burst.firstAt = time }
                burst.count += 1
                burst.lastAt = time
                if let target = entry.targetID, !burst.targets.contains(target) {
                    if burst.targets.count < Self.targetLimit { burst.targets.append(target) } else { burst.otherTargets += 1 }
                }
                state.open[key] = burst
                return nil
            }
            let rows = Self.take(&state, closedOnly: true, now: now)
            state.open[key] = Burst(opened: now, actor: actor, entry: entry)
            return rows
        }
    }

    /// Takes the rows of counted refusals to write, oldest burst first, after any rows put back: every count (the
    /// bursts still open go on counting from zero), or, with `closedOnly`, only those of ended bursts. The caller writes
    /// them, or puts them back (``putBack(_:)``) if it could not.
    func take(closedOnly: Bool = false, now: ContinuousClock.Instant = .now) -> [Row] {
        state.withLock { state in Self.take(&state, closedOnly: closedOnly, now: now) }
    }

    /// Keeps `rows`, taken but not written (their transaction failed), to come first in the next rows taken: at most
    /// ``capacity`` rows are kept, the oldest.
    func putBack(_ rows: [Row]) {
        guard !rows.isEmpty else { return }
        state.withLock { state in state.unwritten = Array((rows + state.unwritten).prefix(Self.capacity)) }
    }

    /// ``take(closedOnly:now:)`` inside the lock. Ended bursts, and every burst once ``capacity`` is reached, are
    /// forgotten.
    private static func take(_ state: inout State, closedOnly: Bool, now: ContinuousClock.Instant) -> [Row] {
        var rows: [(opened: ContinuousClock.Instant, row: Row)] = []
        let full = state.open.count >= capacity
        for (key, burst) in state.open {
            let ended = now - burst.opened >= window || full
            if burst.count > 0, ended || !closedOnly {
                rows.append((burst.opened, burst.summary))
                state.open[key]?.count = 0
                state.open[key]?.targets = []
                state.open[key]?.otherTargets = 0
            }
            if ended { state.open[key] = nil }
        }
        defer { state.unwritten = [] }
        return state.unwritten + rows.sorted { $0.opened < $1.opened }.map(\.row)
    }
}
