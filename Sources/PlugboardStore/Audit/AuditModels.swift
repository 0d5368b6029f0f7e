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

    /// What was done (`plugin.enable`, `plugin.kill`, `owner.add`): a word of the audit vocabulary.
    package var action: AuditAction
    /// Made or refused.
    package var outcome: Outcome = .ok
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

    /// A value with each stored property given.
    package init(
        action: AuditAction, outcome: Outcome = .ok, targetType: String, targetID: String? = nil, environment: String? = nil,
        reason: String? = nil, before: AuditJSON? = nil, after: AuditJSON? = nil
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

/// Filters for reading the audit log.
package struct AuditQuery: Sendable, Hashable {
    /// Only rows at or after this time (ISO-8601 text compares in time order).
    package var since: String?
    /// Only rows made by this name: the OS user or the declared principal.
    package var by: String?
    /// Only rows whose target id is this; a plug-in id also matches its versions (`id@version`).
    package var target: String?
    /// Only rows of this action (`plugin.kill`).
    package var action: String?
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
