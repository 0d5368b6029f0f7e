public import Foundation
public import PlugboardFlags
import PlugboardMacros
public import PlugboardVersioning

/// One row of the audit log as stored (the store's `AuditLog` computes its hash).
@MemberwiseInit(.package)
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

    /// JSON keys are the log's column names (`actor` for ``by``).
    enum CodingKeys: String, CodingKey {
        case seq, at
        case by = "actor"
        case onBehalfOf, action, outcome, targetType, targetID, environment, reason, beforeJSON, afterJSON
        case prevHash, hash, stateChanges, stateRoot, via
    }
}

/// The result of recomputing the audit chain.
@MemberwiseInit(.package)
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
}
