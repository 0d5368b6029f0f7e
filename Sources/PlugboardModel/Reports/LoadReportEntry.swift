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
