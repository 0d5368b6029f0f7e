/// One line of a host's load report: what happened to one plug-in, and why.
public struct LoadReportEntry: Sendable, Hashable, Codable {
    /// What the host did with the plug-in.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
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
    /// How often this release crashed the host within its crash window (from the host's crash journal); nil when
    /// it did not. A rollout's guard counts a host that reports a crash as failing.
    public let crashes: Int?

    /// Creates an entry.
    public init(
        pluginID: String, version: String?, state: State, reasonCode: String? = nil, reason: String? = nil, warning: String? = nil,
        crashes: Int? = nil
    ) {
        self.pluginID = pluginID
        self.version = version
        self.state = state
        self.reasonCode = reasonCode
        self.reason = reason
        self.warning = warning
        self.crashes = crashes.flatMap { $0 > 0 ? $0 : nil }
    }

    /// The entry with `crashes` crashes of its release (nil or 0: none).
    public func withCrashes(_ crashes: Int?) -> LoadReportEntry {
        LoadReportEntry(
            pluginID: pluginID, version: version, state: state, reasonCode: reasonCode, reason: reason, warning: warning, crashes: crashes)
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

    /// A value with each stored property given.
    public init(hostId: String, hostVersion: String, stale: String? = nil, entries: [LoadReportEntry]) {
        self.hostId = hostId
        self.hostVersion = hostVersion
        self.stale = stale
        self.entries = entries
    }
}
