import GRDB

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

    /// Creates an entry.
    public init(pluginID: String, version: String?, state: State, reasonCode: String? = nil, reason: String? = nil) {
        self.pluginID = pluginID
        self.version = version
        self.state = state
        self.reasonCode = reasonCode
        self.reason = reason
    }
}

/// A stored load report line with the host that wrote it.
public struct HostLoadStatus: Sendable, Hashable, Codable {
    public let hostID: String
    public let environment: String
    public let hostVersion: String
    public let pluginID: String
    public let version: String?
    public let state: LoadReportEntry.State
    public let reasonCode: String?
    public let reason: String?
    public let reportedAt: String
}

extension Board {
    /// Replaces a host's load report with `entries`, in one transaction. Not audited, and not a change of the
    /// board's ``version()``: it is telemetry.
    public func writeLoadReport(hostID: String, environment: String, hostVersion: String, entries: [LoadReportEntry]) throws(BoardError) {
        let now = Timestamp.now()
        try write(notify: false) { db in
            try db.execute(
                sql: """
                    INSERT INTO hosts (host_id, environment, host_version, os_user, last_report) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (host_id) DO UPDATE SET environment = excluded.environment, host_version = excluded.host_version,
                        os_user = excluded.os_user, last_report = excluded.last_report
                    """, arguments: [hostID, environment, hostVersion, Actor.currentOSUser(), now])
            try db.execute(sql: "DELETE FROM load_reports WHERE host_id = ?", arguments: [hostID])
            for entry in entries {
                try db.execute(
                    sql:
                        "INSERT INTO load_reports (host_id, plugin_id, version, state, reason_code, reason, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    arguments: [hostID, entry.pluginID, entry.version, entry.state.rawValue, entry.reasonCode, entry.reason, now])
            }
        }
    }

    /// The latest load reports of every host, optionally for one plug-in, sorted by plug-in then host.
    public func loadStatus(pluginID: String? = nil) throws(BoardError) -> [HostLoadStatus] {
        if let pluginID { try Validate.pluginID(pluginID) }
        return try read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM plugin_load_status \(pluginID == nil ? "" : "WHERE plugin_id = ?")",
                arguments: pluginID.map { [$0] } ?? []
            ).map { row in
                HostLoadStatus(
                    hostID: row["host_id"], environment: row["environment"], hostVersion: row["host_version"],
                    pluginID: row["plugin_id"], version: row["version"],
                    state: LoadReportEntry.State(rawValue: row["state"]) ?? .skipped,
                    reasonCode: row["reason_code"], reason: row["reason"], reportedAt: row["reported_at"])
            }
        }
    }
}
