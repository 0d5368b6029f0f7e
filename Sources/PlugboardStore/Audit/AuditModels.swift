/// What a change writes to the audit log (the board fills in sequence, time, actor and hashes).
package import PlugboardModel

package struct AuditEntry: Sendable, Hashable {
    /// Whether the change was made or refused.
    package enum Outcome: String, Sendable, Hashable, Codable {
        /// The change was made.
        case ok
        /// The attempt was refused (not allowed, not found); nothing else changed.
        case refused
    }

    /// A dotted verb such as `plugin.enable`, `plugin.kill`, `owner.add`.
    package var action: String
    /// Made or refused.
    package var outcome: Outcome
    /// The kind of thing changed: `plugin`, `plugin_version`, `kill_switch`, `owner`, `admin`, `environment`, …
    package var targetType: String
    /// The id of the thing changed.
    package var targetID: String?
    /// The environment the change applies to, when it applies to one.
    package var environment: String?
    /// The reason given (kill, yank, revive), or the refusal message.
    package var reason: String?
    /// The state before the change.
    package var before: AuditJSON?
    /// The state after the change.
    package var after: AuditJSON?

    /// Creates an entry.
    package init(
        action: String, outcome: Outcome = .ok, targetType: String, targetID: String? = nil,
        environment: String? = nil, reason: String? = nil, before: AuditJSON? = nil, after: AuditJSON? = nil
    ) {
        self.action = action
        self.outcome = outcome
        self.targetType = targetType
        self.targetID = targetID
        self.environment = environment
        self.reason = reason
        self.before = before
        self.after = after
    }
}

/// One row of the audit log as stored (see ``AuditLog`` for how its hash is computed).
package struct AuditRecord: Sendable, Hashable, Codable {
    package let seq: Int64
    package let at: String
    /// Who made the change: the OS user (the log's column `actor`); ``onBehalfOf`` is the principal declared with `--as`.
    package let by: String
    package let onBehalfOf: String?
    package let action: String
    package let outcome: String
    package let targetType: String
    package let targetID: String?
    package let environment: String?
    package let reason: String?
    package let beforeJSON: String?
    package let afterJSON: String?
    package let prevHash: String
    package let hash: String
    /// The digests of the rows the change left behind (`table<TAB>key<TAB>digest` lines; `-` for a removed row), or
    /// nil for a row written before the state proof or a change that touched no row of policy.
    package let stateChanges: String?
    /// The board-wide state root after this row, or nil for rows written before the state proof (migration 0006).
    package let stateRoot: String?
    /// How the change arrived when it came through the operations API (`token NAME from ADDRESS`); nil for changes made on
    /// the board's machine, and for rows written before chain format v3.
    package var via: String? = nil

    /// JSON keys are the log's column names (`actor` for ``by``).
    enum CodingKeys: String, CodingKey {
        case seq, at
        case by = "actor"
        case onBehalfOf, action, outcome, targetType, targetID, environment, reason, beforeJSON, afterJSON
        case prevHash, hash, stateChanges, stateRoot, via
    }
}

/// The result of recomputing the audit chain.
package struct AuditVerification: Sendable, Hashable, Codable {
    /// True when every row, the chain, the triggers and the checkpoint (if given) check out.
    package let ok: Bool
    /// How many rows were checked.
    package let rowsChecked: Int
    /// The current head of the chain.
    package let head: AuditCheckpoint?
    /// The sequence number of the first bad row, when one is found.
    package let firstBadSeq: Int64?
    /// What is wrong, one sentence per problem (the first names the first bad row).
    package let problems: [String]
    /// How many rows of policy (registry, owners, admins, kill switches, flags, sealed secrets…) were compared with
    /// the digests the log recorded; 0 for a board without the state proof.
    package let stateRowsChecked: Int
    /// The state root of the rows as they are, when the board has the state proof.
    package let stateRoot: String?
}

/// Filters for reading the audit log.
package struct AuditQuery: Sendable, Hashable {
    /// Only rows at or after this time (ISO-8601 text compares in time order).
    package var since: String?
    /// Only rows made by this name: the OS user or the declared principal.
    package var by: String?
    /// Only rows whose target id is this; a plug-in id also matches its versions (`id@version`).
    package var target: String?
    /// At most this many rows, the newest.
    package var limit: Int?
    /// Only rows after this sequence number (pages of a listing); not with a limit.
    package var after: Int64?

    /// Creates a query.
    package init(since: String? = nil, by: String? = nil, target: String? = nil, limit: Int? = nil) {
        self.since = since
        self.by = by
        self.target = target
        self.limit = limit
    }
}

/// The append-only, hash-chained audit log.
///
/// Each row's `hash` is `SHA-256(prev_hash ‖ "\n" ‖ canonical encoding of the row)`, hex, where the canonical
/// encoding is the line `plugboard-audit-v1` followed by the fields `seq, at, actor, on_behalf_of, action,
/// outcome, target_type, target_id, environment, reason, before_json, after_json`, each written as
/// `-\n` when NULL and `<UTF-8 byte length>:<bytes>\n` otherwise. The first row's `prev_hash` is 64 zeros.
/// The guide "Reading the board" (the store's documentation) shows how to recompute it with a few lines of Python.
