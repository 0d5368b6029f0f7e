import GRDB
import PlugboardModel

@testable import PlugboardStore

/// What a writer of the board file can do who runs Plugboard's own code: write any rows, in one change whose audit
/// row (under any action of the vocabulary) and state proof the store computes, so that the hash chain and the proof stay consistent and
/// `audit verify` holds. Hosts must refuse what such a change enables without the evidence they check themselves.
enum ConsistentRewrite {
    /// Runs `statements` on the board at `path` as `principal`, recorded as one audit row described by `audit`.
    static func apply(
        board path: String, _ statements: [String], as principal: String,
        audit: (action: AuditAction, targetType: String, targetID: String, environment: String?)
    ) throws {
        let board = try Board.open(at: path)
        let entry = AuditEntry(action: audit.action, targetType: audit.targetType, targetID: audit.targetID, environment: audit.environment)
        try board.change(try Principal(osUser: principal), refusal: entry) { change in
            for statement in statements { try change.db.execute(sql: statement) }
            try change.record(entry)
        }
    }
}
