import GRDB
import PlugboardModel

/// The SQL of the hosts' load reports (telemetry, not audited).
enum ReportQueries {
    static func replaceReport(
        _ db: Database, hostID: String, environment: String, hostVersion: String, osUser: String, source: String?,
        entries: [LoadReportEntry], at now: String
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO hosts (host_id, environment, host_version, os_user, last_report, source) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (host_id) DO UPDATE SET environment = excluded.environment, host_version = excluded.host_version,
                    os_user = excluded.os_user, last_report = excluded.last_report, source = excluded.source
                """
        ).execute(arguments: [hostID, environment, hostVersion, osUser, now, source])
        // A delta: rows of plug-ins no longer reported go, rows whose content changed are rewritten, and the others
        // stay as they are (with the time they were first reported so).
        var stored: [String: LoadReportEntry] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT plugin_id, version, state, reason_code, reason, warning, crashes FROM load_reports WHERE host_id = ?"),
            arguments: [hostID])
        {
            stored[row[0]] = LoadReportEntry(
                pluginID: row[0], version: row[1], state: LoadReportEntry.State(rawValue: row[2]) ?? .skipped, reasonCode: row[3],
                reason: row[4], warning: row[5], crashes: row[6])
        }
        let reported = Set(entries.map(\.pluginID))
        for pluginID in stored.keys where !reported.contains(pluginID) {
            try db.cachedStatement(sql: "DELETE FROM load_reports WHERE host_id = ? AND plugin_id = ?").execute(arguments: [
                hostID, pluginID,
            ])
        }
        for entry in entries where stored[entry.pluginID] != entry {
            try db.cachedStatement(
                sql: """
                    INSERT INTO load_reports (host_id, plugin_id, version, state, reason_code, reason, warning, reported_at, crashes)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (host_id, plugin_id) DO UPDATE SET version = excluded.version, state = excluded.state,
                        reason_code = excluded.reason_code, reason = excluded.reason, warning = excluded.warning,
                        reported_at = excluded.reported_at, crashes = excluded.crashes
                    """
            ).execute(arguments: [
                hostID, entry.pluginID, entry.version, entry.state.rawValue, entry.reasonCode, entry.reason, entry.warning, now,
                entry.crashes ?? 0,
            ])
        }
    }

    /// The environment a host last reported from; nil for a host that never reported.
    static func hostEnvironment(_ db: Database, hostID: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT environment FROM hosts WHERE host_id = ?"), arguments: [hostID])
    }

    /// The rows of every host's last report, from the telemetry file or (`legacy`) from the board's own tables, which
    /// boards written before the telemetry file still hold and nothing writes any more.
    static func rows(_ db: Database, pluginID: String?, legacy: Bool) throws -> [Row] {
        let filter = pluginID == nil ? "" : "WHERE r.plugin_id = ?"
        let sql =
            legacy
            ? "SELECT * FROM plugin_load_status \(pluginID == nil ? "" : "WHERE plugin_id = ?")"
            : """
            SELECT r.plugin_id, r.host_id, h.environment, h.host_version, h.source, r.version, r.state, r.reason_code, r.reason,
                   r.warning, r.reported_at, r.crashes
            FROM load_reports r JOIN hosts h ON h.host_id = r.host_id \(filter)
            ORDER BY r.plugin_id, r.host_id
            """
        return try Row.fetchAll(db, sql: sql, arguments: pluginID.map { [$0] } ?? [])
    }

    /// The load status of `rows`, with the signature level of each reported version as the board sees it now.
    static func loadStatus(_ db: Database, rows: [Row]) throws -> [HostLoadStatus] {
        let trust = try SignatureQueries.trust(db)
        var verdicts: [String: SignatureState?] = [:]
        func signature(_ pluginID: String, _ version: String?) throws -> SignatureState? {
            guard let version else { return nil }
            let key = "\(pluginID)@\(version)"
            if let known = verdicts[key] { return known }
            let state = try SignatureQueries.release(db, pluginID, version).map {
                SignatureCheck.verdict(for: $0, signatures: try SignatureQueries.signatures(db, pluginID, version), trust: trust).state
            }
            verdicts[key] = state
            return state
        }
        return try rows.map { row in
            HostLoadStatus(
                hostID: row["host_id"], environment: row["environment"], hostVersion: row["host_version"], source: row["source"],
                pluginID: row["plugin_id"], version: row["version"], state: LoadReportEntry.State(rawValue: row["state"]) ?? .skipped,
                reasonCode: row["reason_code"], reason: row["reason"], warning: row["warning"],
                signature: try signature(row["plugin_id"], row["version"]), reportedAt: row["reported_at"],
                crashes: (row["crashes"] as Int?).flatMap { $0 > 0 ? $0 : nil })
        }
    }
}
