/// The board's word to one host that a release it quarantined for crashing it may load again.
///
/// A host keeps its quarantines in its own state folder. When the registry it reads holds a release for its own host
/// id, of a release it quarantined before ``releasedAt``, it lifts that quarantine and notes it in its crash journal.
/// Crashes after that quarantine the release again, as they did the first time.
public struct QuarantineRelease: Sendable, Hashable, Codable {
    /// The host whose quarantine ends.
    public let hostID: String
    /// The plug-in.
    public let pluginID: String
    /// The version, as registered.
    public let version: String
    /// When the release was made, as the board records times (UTC ISO-8601 with milliseconds).
    public let releasedAt: String
    /// Who made it.
    public let releasedBy: String
    /// Why, if said.
    public let reason: String?

    /// A value with each stored property given.
    package init(hostID: String, pluginID: String, version: String, releasedAt: String, releasedBy: String, reason: String?) {
        self.hostID = hostID
        self.pluginID = pluginID
        self.version = version
        self.releasedAt = releasedAt
        self.releasedBy = releasedBy
        self.reason = reason
    }
}
