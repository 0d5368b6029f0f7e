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

/// A stored load report line with the host that wrote it.
public struct HostLoadStatus: Sendable, Hashable, Codable {
    public let hostID: String
    public let environment: String
    public let hostVersion: String
    /// Where the host read the board: nil when it opened the board file, otherwise a phrase such as
    /// `served (token NAME)` or `a cached snapshot of TIME (…)`.
    public let source: String?
    public let pluginID: String
    public let version: String?
    public let state: LoadReportEntry.State
    public let reasonCode: String?
    public let reason: String?
    /// A problem the host loaded the plug-in despite (a signature problem under `warn`).
    public let warning: String?
    /// The signature level of the reported version as the board sees it now (nil when no version is reported).
    public let signature: SignatureState?
    public let reportedAt: String
}

extension Board {
    /// Replaces a host's load report with `entries`, in one transaction, as a delta: rows that did not change are
    /// left as they are (their `reported_at` says since when), so a host's unchanged plug-ins cost no writes. Not
    /// audited, and not a change of the board's ``version()``: it is telemetry.
    ///
    /// - Parameters:
    ///   - source: Where the host read the board (nil: this board file; see ``HostLoadStatus/source``).
    ///   - reporter: Who wrote the report (the OS user by default; `plugboard serve` names the token a remote host used).
    ///   - sameEnvironmentOnly: Refuse, changing nothing, when `hostID` last reported from another environment
    ///     (a remote host's token may only write reports of its own environment).
    public func writeLoadReport(
        hostID: String, environment: String, hostVersion: String, entries: [LoadReportEntry], source: String? = nil,
        reporter: String? = nil, sameEnvironmentOnly: Bool = false
    ) throws(BoardError) {
        let now = Timestamp.now()
        do {
            try writeUnaudited(.loadReport) { db in
                if sameEnvironmentOnly, let existing = try ReportQueries.hostEnvironment(db, hostID: hostID), existing != environment {
                    throw BoardError(
                        .notAllowed,
                        "the host id \(hostID) already reports from the environment \(existing); give each host an id of its own")
                }
                try ReportQueries.replaceReport(
                    db, hostID: hostID, environment: environment, hostVersion: hostVersion,
                    osUser: reporter ?? Principal.currentOSUser(), source: source, entries: entries, at: now)
            }
        } catch {
            throw mapError(error)
        }
    }

    /// The latest load reports of every host, optionally for one plug-in, sorted by plug-in then host.
    public func loadStatus(pluginID: String? = nil) throws(BoardError) -> [HostLoadStatus] {
        if let pluginID { try Validate.pluginID(pluginID) }
        return try read { db in try ReportQueries.loadStatus(db, pluginID: pluginID) }
    }
}
