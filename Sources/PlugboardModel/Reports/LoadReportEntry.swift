/// One line of a host's load report: what happened to one plug-in, and why.
public struct LoadReportEntry: Sendable, Hashable, Codable {
    /// What the host did with the plug-in.
    public enum State: String, Sendable, Hashable, Codable {
        case loaded, skipped, failed, deactivated
    }

    public let pluginID: String
    public let version: String?
    public let state: State
    /// A stable reason code (`disabled`, `killed`, `gate_off`, …); nil when loaded.
    public let reasonCode: String?
    /// One sentence for people; nil when loaded.
    public let reason: String?
    /// A problem the host reports but loaded despite (a signature problem under the `warn` policy).
    public let warning: String?

    /// Creates an entry.
    public init(
        pluginID: String, version: String?, state: State, reasonCode: String? = nil, reason: String? = nil, warning: String? = nil
    ) {
        self.pluginID = pluginID
        self.version = version
        self.state = state
        self.reasonCode = reasonCode
        self.reason = reason
        self.warning = warning
    }
}

/// A host's load report as a host on another machine sends it to `plugboard serve` (`POST /api/host/report`, JSON).
public struct HostReport: Sendable, Hashable, Codable {
    /// The host's id.
    public var hostId: String
    /// The host's API version.
    public var hostVersion: String
    /// Nil when the host read the server; otherwise why its snapshot is not current (for example a cached snapshot).
    public var stale: String?
    /// What happened to each plug-in.
    public var entries: [LoadReportEntry]

    /// Creates a report.
    public init(hostId: String, hostVersion: String, stale: String?, entries: [LoadReportEntry]) {
        self.hostId = hostId
        self.hostVersion = hostVersion
        self.stale = stale
        self.entries = entries
    }
}
