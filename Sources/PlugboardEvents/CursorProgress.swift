import PlugboardStore
import Synchronization

/// How far each endpoint got, kept in memory between the writes that move the cursors on the board: delivery writes
/// every endpoint's cursor in one transaction every ``WebhookSettings/cursorInterval`` rather than one transaction per
/// endpoint per event, which would queue behind and before the board's own writes.
///
/// An endpoint's progress has an epoch: when its cursor is found moved on the board (a replay, an enable), the progress
/// is dropped, and a pass that started before cannot advance it any more.
final class CursorProgress: Sendable {
    private struct Entry {
        /// The cursor on the board, as last written or read.
        var base: Int64
        /// Every row up to it is sent, or not for this endpoint.
        var through: Int64
        /// The last 2xx answer.
        var status: Int
        var epoch: UInt64
        /// Whether the cursor on the board is behind what was sent: a move waits to be written.
        var waits: Bool { through > base }
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var nextEpoch: UInt64 = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Where a pass of `name` starts, whose cursor on the board is `cursor`: the rows after the answer wait for it.
    func start(_ name: String, cursor: Int64, status: Int) -> (from: Int64, epoch: UInt64) {
        state.withLock { state in
            if let entry = state.entries[name], entry.base == cursor { return (entry.through, entry.epoch) }
            state.nextEpoch += 1
            state.entries[name] = Entry(base: cursor, through: cursor, status: status, epoch: state.nextEpoch)
            return (cursor, state.nextEpoch)
        }
    }

    /// Notes that `name` has every row through `seq`; false when its progress was dropped since the pass began.
    func advance(_ name: String, epoch: UInt64, through seq: Int64, status: Int) -> Bool {
        state.withLock { state in
            guard var entry = state.entries[name], entry.epoch == epoch else { return false }
            entry.through = max(entry.through, seq)
            entry.status = status
            state.entries[name] = entry
            return true
        }
    }

    /// Whether a cursor move waits to be written.
    var hasPending: Bool { state.withLock { $0.entries.values.contains(where: \.waits) } }

    /// The cursor moves not yet written (of `name` only, when given).
    func pending(_ name: String? = nil) -> [WebhookCursorMove] {
        state.withLock { state in
            state.entries.filter { ($0.key == name || name == nil) && $0.value.waits }
                .map { WebhookCursorMove(name: $0.key, from: $0.value.base, through: $0.value.through, status: $0.value.status) }
        }
    }

    /// After `moves` were written: those of `moved` found their cursor moved on the board, and are dropped.
    func written(_ moves: [WebhookCursorMove], moved: Set<String>) {
        state.withLock { state in
            for move in moves {
                if moved.contains(move.name) {
                    state.entries[move.name] = nil
                } else if var entry = state.entries[move.name], entry.base == move.from {
                    entry.base = move.through
                    state.entries[move.name] = entry
                }
            }
        }
    }
}
