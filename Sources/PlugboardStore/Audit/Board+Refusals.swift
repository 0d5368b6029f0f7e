import GRDB
package import PlugboardModel

extension Board {
    /// Records a refused attempt: an attempt refused as not allowed or not found leaves an audit row with `refusal`'s
    /// action and target, `outcome` refused and the error's sentence as its reason, in a transaction of its own that
    /// changes nothing else. Other errors (invalid input) leave nothing.
    ///
    /// Once ``boundRefusals()`` was called, refusals are bounded per principal and action (``RefusalBursts``): the
    /// first of a burst is written at once, the rest of it are counted and written as one row with `count`,
    /// `first_at`, `last_at` and the `targets` they named (in its after-JSON) when the burst ends, before any later
    /// change's rows, or at ``flushRefusals(closedOnly:)``. Rows that could not be written are kept to be written with
    /// the next ones (``flushRefusals(closedOnly:)`` reports a failure); the caller reports the refusal whatever happens
    /// here.
    package func recordRefusal(_ refusal: AuditEntry, by actor: Principal, because error: BoardError) {
        guard !isReadOnly, error.code == .notAllowed || error.code == .notFound else { return }
        var entry = refusal
        entry.outcome = .refused
        entry.reason = error.message
        guard let earlier = refusals.admit(entry, by: actor, at: clock.timestamp(), now: clock.instant()) else { return }
        _ = appendRefusals(earlier + [(actor, entry)])
    }

    /// Bounds this process's refusals from now on (``recordRefusal(_:by:because:)``): for a process that serves many
    /// requests, such as `plugboard serve`, which must call ``flushRefusals(closedOnly:)`` on a timer and before it ends.
    package func boundRefusals() { refusals.startCounting() }

    /// Writes the counted refusals now, one row per burst: all of them, or with `closedOnly` those of bursts that ended.
    /// `plugboard serve` calls it every few seconds (`closedOnly`) and at shutdown; reading or verifying the audit log
    /// calls it first, and a change that writes rows writes the counts before its own rows (in its transaction), so
    /// that the log is complete and in order whenever it is read.
    ///
    /// - Returns: Nil when every row was written; otherwise why not, saying how many rows are kept in memory to be
    ///   written at the next call (a process that ends now loses them: its caller logs the sentence).
    @discardableResult
    package func flushRefusals(closedOnly: Bool = false) -> BoardError? {
        guard !isReadOnly else { return nil }
        return appendRefusals(refusals.take(closedOnly: closedOnly, now: clock.instant()))
    }

    /// Appends refusal rows, which change nothing else, in one transaction of their own: with the state proof, each
    /// carries the current state root and no state digests. Rows that could not be written are put back
    /// (``RefusalBursts/putBack(_:)``), and the error returned.
    private func appendRefusals(_ rows: [RefusalBursts.Row]) -> BoardError? {
        guard !rows.isEmpty else { return nil }
        do {
            try transaction { db in try Self.appendRefusals(db, rows) }
            return nil
        } catch {
            refusals.putBack(rows)
            let cause = mapError(error)
            return BoardError(
                cause.code,
                "\(rows.count) audit \(rows.count == 1 ? "row" : "rows") of refused attempts could not be written, and \(rows.count == 1 ? "is" : "are") kept in memory to be written next: \(cause.message)"
            )
        }
    }

    /// Appends refusal rows in the caller's transaction, before anything of it is committed to the state proof.
    static func appendRefusals(_ db: Database, _ rows: [RefusalBursts.Row]) throws {
        guard !rows.isEmpty else { return }
        let state = try StateQueries.isTracked(db) ? (changes: String?.none, root: try StateLedger.currentRoot(db)) : nil
        for row in rows { try AuditLog.append(db, by: row.actor, entry: row.entry, state: state) }
    }
}
