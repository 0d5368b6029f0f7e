import Foundation
import PlugboardModel
import Synchronization

/// The calls into plug-in code in progress, as the marker `entering` in the host's state folder names them.
///
/// The host's own calls (loading a library, creating and activating, deactivating) come one at a time; calls into
/// plug-ins' features through `call(_:as:_:)` may come from any thread at once. Each call adds its
/// line to the marker and removes it when it returns (the file is rewritten with the lines still in progress, and
/// removed when none is). A process that dies leaves the lines of every call in progress: each of those releases is
/// counted as having crashed the host, since the host cannot tell which of them did.
final class CallMarkers: Sendable {
    /// The most calls the marker names at once (each line is at most about 370 bytes, well within
    /// ``CrashJournal/maxMarkerBytes``); a call beyond them runs unnoted.
    static let maxCalls = 128

    let journal: CrashJournal
    /// The calls in progress, by token; `closed` once the host stopped (nothing is noted any more).
    private let inFlight = Mutex<(next: Int, lines: [Int: String], closed: Bool)>((0, [:], false))
    /// Set once a marker could not be written (said once by the caller).
    private let failed = Mutex(false)

    init(journal: CrashJournal) {
        self.journal = journal
    }

    /// Notes that a call enters `pluginID@version`'s code for `phase`; returns the call's token, and the error when the
    /// marker could not be written for the first time (the call goes ahead: a crash in it goes unnoticed).
    func enter(_ pluginID: String, _ version: String, _ phase: String) -> (token: Int, firstFailure: BoardError?) {
        let line = CrashJournal.markerLine(pluginID, version, phase)
        let outcome: (Int, BoardError?) = inFlight.withLock { state in
            let token = state.next
            state.next += 1
            guard !state.closed, state.lines.count < Self.maxCalls else { return (token, nil) }
            state.lines[token] = line
            do throws(BoardError) {
                try journal.writeMarker(state.lines.keys.sorted().compactMap { state.lines[$0] }.joined())
                return (token, nil)
            } catch {
                return (token, error)
            }
        }
        guard let error = outcome.1 else { return (outcome.0, nil) }
        let first = failed.withLock { already in
            defer { already = true }
            return !already
        }
        return (outcome.0, first ? error : nil)
    }

    /// Notes that the call of `token` returned.
    func leave(_ token: Int) {
        inFlight.withLock { state in
            guard !state.closed, state.lines.removeValue(forKey: token) != nil else { return }
            if state.lines.isEmpty {
                journal.leave()
            } else {
                try? journal.writeMarker(state.lines.keys.sorted().compactMap { state.lines[$0] }.joined())
            }
        }
    }

    /// Removes the marker and notes nothing more: the host stopped cleanly, so a call still in progress when the
    /// process exits is not a crash.
    func close() {
        inFlight.withLock { state in
            state.closed = true
            state.lines = [:]
            journal.leave()
        }
    }
}
