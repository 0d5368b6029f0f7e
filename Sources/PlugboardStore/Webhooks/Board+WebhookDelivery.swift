package import Foundation
import GRDB
package import PlugboardModel

// What delivery reads and writes. The events are the audit log's rows; how far an endpoint got is runtime data written
// without an audit row (`webhook_deliveries`), like a token's last use.
extension Board {
    /// Up to `limit` audit rows after `seq`, in seq order.
    package func auditRows(after seq: Int64, limit: Int) throws(BoardError) -> [AuditRecord] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(AuditQueries.recordColumns(db)) FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?",
                arguments: [seq, limit]
            ).map(AuditRecord.init(row:))
        }
    }

    /// The log's last seq (0 for an empty log).
    package func auditHead() throws(BoardError) -> Int64 {
        try read { db in try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(seq), 0) FROM audit_log")) ?? 0 }
    }

    /// Notes that `name` acknowledged the events after `cursor` up to `seq`: its cursor moves there and its attempts
    /// end, unless the cursor is no longer `cursor` (a replay or an enable moved it meanwhile): then nothing changes and
    /// the answer is false, and delivery starts again from where the cursor is.
    @discardableResult
    package func recordWebhookDelivered(_ name: String, from cursor: Int64, through seq: Int64, status: Int) throws(BoardError) -> Bool {
        try recordWebhooksDelivered([WebhookCursorMove(name: name, from: cursor, through: seq, status: status)]).isEmpty
    }

    /// Moves several endpoints' cursors in one transaction (see ``recordWebhookDelivered(_:from:through:status:)``);
    /// answers the names of those whose cursor had moved meanwhile, which are left as they are.
    package func recordWebhooksDelivered(_ moves: [WebhookCursorMove]) throws(BoardError) -> Set<String> {
        guard !moves.isEmpty else { return [] }
        let now = clock.timestamp()
        do {
            return try writeUnaudited(.webhookDelivery) { db in
                var moved = Set<String>()
                for move in moves {
                    try db.cachedStatement(
                        sql: """
                            UPDATE webhook_deliveries SET cursor = ?, attempts = 0, next_attempt_at = NULL,
                                failing_since = NULL, last_status = ?, last_error = NULL, last_attempt_at = ?
                            WHERE name = ? AND cursor = ?
                            """
                    ).execute(arguments: [move.through, move.status, now, move.name, move.from])
                    if db.changesCount == 0 { moved.insert(move.name) }
                }
                return moved
            }
        } catch {
            throw mapError(error)
        }
    }

    /// Notes that an attempt to send `name` its next event failed: one more attempt, the next at `nextAttempt`, and
    /// failing since the first failure after the last success.
    package func recordWebhookFailed(_ name: String, status: Int?, error message: String, nextAttempt: Date) throws(BoardError) {
        let now = Milliseconds.format(clock.date()) ?? clock.timestamp()
        let next = Milliseconds.format(nextAttempt) ?? now
        do {
            try writeUnaudited(.webhookDelivery) { db in
                try db.cachedStatement(
                    sql: """
                        UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = ?,
                            failing_since = coalesce(failing_since, ?), last_status = ?, last_error = ?, last_attempt_at = ?
                        WHERE name = ?
                        """
                ).execute(arguments: [next, now, status, String(message.prefix(512)), now, name])
            }
        } catch {
            throw mapError(error)
        }
    }
}

/// One endpoint's cursor move: from `from` (what the board should still hold) through `through`, the last answer
/// `status`.
package struct WebhookCursorMove: Sendable, Equatable {
    package let name: String
    package let from: Int64
    package let through: Int64
    package let status: Int

    /// A value with each stored property given.
    package init(name: String, from: Int64, through: Int64, status: Int) {
        self.name = name
        self.from = from
        self.through = through
        self.status = status
    }
}
