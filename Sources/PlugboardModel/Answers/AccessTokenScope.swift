/// What an access token may do with its principal's rights.
///
/// ``all`` is every right of its principal (or every read, for a read-only token); ``stop`` is only stopping: killing a
/// plug-in or a version its principal could kill, through `plugboard serve`'s alerting trigger
/// (`POST /api/triggers/alertmanager`). Every other route of the operations API and the console refuse a stop token,
/// and a stop token makes no tokens, so a leaked one can only stop what its principal could stop.
public enum AccessTokenScope: String, Sendable, Hashable, Codable, CaseIterable {
    /// Every right of the token's principal.
    case all
    /// Only stopping: a kill switch over a plug-in or a version, through the alerting trigger.
    case stop
}

extension AccessToken {
    /// Whether the token may only stop (``AccessTokenScope/stop``).
    public var stopsOnly: Bool { scope == .stop }
}
