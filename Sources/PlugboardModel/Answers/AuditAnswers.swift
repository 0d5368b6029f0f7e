import Foundation
import PlugboardFlags
import PlugboardVersioning

/// One row of the audit log as stored (the store's `AuditLog` computes its hash).
public struct AuditRecord: Sendable, Hashable, Codable {
    public let seq: Int64
    public let at: String
    /// Who made the change: the OS user (the log's column `actor`); ``onBehalfOf`` is the principal declared with `--as`.
    public let by: String
    public let onBehalfOf: String?
    public let action: String
    public let outcome: String
    public let targetType: String
    public let targetID: String?
    public let environment: String?
    public let reason: String?
    public let beforeJSON: String?
    public let afterJSON: String?
    public let prevHash: String
    public let hash: String
    /// The digests of the rows the change left behind (`table<TAB>key<TAB>digest` lines; `-` for a removed row), or
    /// nil for a row written before the state proof or a change that touched no row of policy.
    public let stateChanges: String?
    /// The board-wide state root after this row, or nil for rows written before the state proof (migration 0006).
    public let stateRoot: String?
    /// How the change arrived when it came through the operations API (`token NAME from ADDRESS`); nil for changes made on
    /// the board's machine, and for rows written before chain format v3.
    public var via: String? = nil

    /// A value with each stored property given.
    package init(
        seq: Int64, at: String, by: String, onBehalfOf: String?, action: String, outcome: String, targetType: String, targetID: String?,
        environment: String?, reason: String?, beforeJSON: String?, afterJSON: String?, prevHash: String, hash: String,
        stateChanges: String?, stateRoot: String?, via: String? = nil
    ) {
        self.seq = seq
        self.at = at
        self.by = by
        self.onBehalfOf = onBehalfOf
        self.action = action
        self.outcome = outcome
        self.targetType = targetType
        self.targetID = targetID
        self.environment = environment
        self.reason = reason
        self.beforeJSON = beforeJSON
        self.afterJSON = afterJSON
        self.prevHash = prevHash
        self.hash = hash
        self.stateChanges = stateChanges
        self.stateRoot = stateRoot
        self.via = via
    }

    /// JSON keys are the log's column names (`actor` for ``by``).
    enum CodingKeys: String, CodingKey {
        case seq, at
        case by = "actor"
        case onBehalfOf, action, outcome, targetType, targetID, environment, reason, beforeJSON, afterJSON
        case prevHash, hash, stateChanges, stateRoot, via
    }
}

/// The result of recomputing the audit chain.
public struct AuditVerification: Sendable, Hashable, Codable {
    /// True when every row, the chain, the triggers and the checkpoint (if given) check out.
    public let ok: Bool
    /// How many rows were checked.
    public let rowsChecked: Int
    /// The current head of the chain.
    public let head: AuditCheckpoint?
    /// The sequence number of the first bad row, when one is found.
    public let firstBadSeq: Int64?
    /// What is wrong, one sentence per problem (the first names the first bad row).
    public let problems: [String]
    /// How many rows of policy (registry, owners, admins, kill switches, flags, sealed secrets…) were compared with
    /// the digests the log recorded; 0 for a board without the state proof.
    public let stateRowsChecked: Int
    /// The state root of the rows as they are, when the board has the state proof.
    public let stateRoot: String?

    /// A value with each stored property given.
    package init(
        ok: Bool, rowsChecked: Int, head: AuditCheckpoint?, firstBadSeq: Int64?, problems: [String], stateRowsChecked: Int,
        stateRoot: String?
    ) {
        self.ok = ok
        self.rowsChecked = rowsChecked
        self.head = head
        self.firstBadSeq = firstBadSeq
        self.problems = problems
        self.stateRowsChecked = stateRowsChecked
        self.stateRoot = stateRoot
    }
}
