import GRDB
package import PlugboardModel

extension Board {
    /// Replaces a host's load report with `entries`, in one transaction of the telemetry file, as a delta: rows that did
    /// not change are left as they are (their `reported_at` says since when), so a host's unchanged plug-ins cost no
    /// writes. Never the board's write lock, not audited, and not a change of the board's ``version()``: it is
    /// telemetry (see ``TelemetryLimits``: a report keeps at most ``TelemetryLimits/maxEntriesPerReport`` entries).
    ///
    /// - Parameters:
    ///   - source: Where the host read the board (nil: this board file; see ``HostLoadStatus/source``).
    ///   - reporter: Who wrote the report (the OS user by default; `plugboard serve` names the token a remote host used).
    ///   - sameEnvironmentOnly: Refuse, changing nothing, when `hostID` last reported from another environment
    ///     (a remote host's token may only write reports of its own environment).
    package func writeLoadReport(
        hostID: String, environment: String, hostVersion: String, entries: [LoadReportEntry], source: String? = nil,
        reporter: String? = nil, sameEnvironmentOnly: Bool = false
    ) throws(BoardError) {
        let report = LoadReport(
            hostID: hostID, environment: environment, hostVersion: hostVersion, entries: entries, source: source,
            reporter: reporter ?? Principal.currentOSUser())
        var refused: BoardError?
        try writeTelemetry { db in
            refused = try Self.storeReport(db, report, sameEnvironmentOnly: sameEnvironmentOnly, at: clock.timestamp())
        }
        if let refused { throw refused }
    }

    /// Stores a batch of load reports in one transaction of the telemetry file (`plugboard serve`); a report of a host id
    /// that last reported from another environment is dropped and counted. Then bounds the stored reports.
    package func writeLoadReports(_ reports: [LoadReport]) throws(BoardError) {
        guard !reports.isEmpty else { return }
        try writeTelemetry { db in
            let now = clock.timestamp()
            var other = 0
            for report in reports {
                if try Self.storeReport(db, report, sameEnvironmentOnly: true, at: now, bound: false) != nil { other += 1 }
            }
            let removed = try TelemetryQueries.boundReports(db)
            try TelemetryQueries.countDrops(
                db, [TelemetryDrop.Kind.reportOtherEnvironment: other, TelemetryDrop.Kind.storedRowsOverCap: removed], at: now)
        }
    }

    /// The environment `hostID` last reported from (nil: never), as the telemetry file says.
    package func reportingEnvironment(hostID: String) throws(BoardError) -> String? {
        try readTelemetry(empty: nil) { db in try ReportQueries.hostEnvironment(db, hostID: hostID) }
    }

    private static func storeReport(
        _ db: Database, _ report: LoadReport, sameEnvironmentOnly: Bool, at now: String, bound: Bool = true
    ) throws -> BoardError? {
        if sameEnvironmentOnly, let existing = try ReportQueries.hostEnvironment(db, hostID: report.hostID),
            existing != report.environment
        {
            return BoardError(
                .notAllowed,
                "the host id \(report.hostID) already reports from the environment \(existing); give each host an id of its own")
        }
        let kept = report.entries.prefix(TelemetryLimits.maxEntriesPerReport).map { entry in
            LoadReportEntry(
                pluginID: entry.pluginID, version: entry.version, state: entry.state, reasonCode: entry.reasonCode,
                reason: entry.reason.map(Self.bounded), warning: entry.warning.map(Self.bounded),
                crashes: entry.crashes.map { min($0, TelemetryLimits.maxCrashesPerEntry) })
        }
        try ReportQueries.replaceReport(
            db, hostID: report.hostID, environment: report.environment, hostVersion: report.hostVersion, osUser: report.reporter,
            source: report.source, entries: Array(kept), at: now)
        var drops = [TelemetryDrop.Kind.reportEntriesOverCap: report.entries.count - kept.count]
        if bound { drops[TelemetryDrop.Kind.storedRowsOverCap] = try TelemetryQueries.boundReports(db) }
        try TelemetryQueries.countDrops(db, drops, at: now)
        return nil
    }

    private static func bounded(_ sentence: String) -> String {
        guard sentence.utf8.count > TelemetryLimits.maxSentenceBytes else { return sentence }
        var cut = sentence
        while cut.utf8.count > TelemetryLimits.maxSentenceBytes - 3 { cut.removeLast() }
        return cut + "…"
    }

    /// The latest load reports of every host, optionally for one plug-in and for some hosts only, sorted by plug-in then
    /// host: from the telemetry file, and for hosts that have not reported since, the rows boards written before it
    /// still hold.
    package func loadStatus(pluginID: String? = nil, hosts: Set<String>? = nil) throws(BoardError) -> [HostLoadStatus] {
        if let pluginID { try Validate.pluginID(pluginID) }
        let current = try readTelemetry(empty: []) { db in try ReportQueries.rows(db, pluginID: pluginID, legacy: false) }
        let reporting = Set(current.map { $0["host_id"] as String })
        return try read { db in
            let legacy = try ReportQueries.rows(db, pluginID: pluginID, legacy: true).filter { !reporting.contains($0["host_id"]) }
            let all = (current + legacy).filter { hosts?.contains($0["host_id"]) ?? true }.sorted {
                ($0["plugin_id"] as String, $0["host_id"] as String) < ($1["plugin_id"] as String, $1["host_id"] as String)
            }
            return try ReportQueries.loadStatus(db, rows: all)
        }
    }

    /// Every host that reported (optionally one plug-in), with its environment and the time of its latest report
    /// line, sorted by host id: what a fleet's overview counts, without the per-row work of ``loadStatus(pluginID:hosts:)``.
    package func reportingHosts(pluginID: String? = nil) throws(BoardError) -> [(hostID: String, environment: String, reportedAt: String)] {
        if let pluginID { try Validate.pluginID(pluginID) }
        let current = try readTelemetry(empty: []) { db in try ReportQueries.rows(db, pluginID: pluginID, legacy: false) }
        let reporting = Set(current.map { $0["host_id"] as String })
        let legacy = try read { db in
            try ReportQueries.rows(db, pluginID: pluginID, legacy: true).filter { !reporting.contains($0["host_id"]) }
        }
        var latest: [String: (environment: String, reportedAt: String)] = [:]
        for row in current + legacy {
            let (host, at): (String, String) = (row["host_id"], row["reported_at"])
            if let known = latest[host], known.reportedAt >= at { continue }
            latest[host] = (row["environment"], at)
        }
        return latest.map { ($0.key, $0.value.environment, $0.value.reportedAt) }.sorted { $0.hostID < $1.hostID }
    }
}

/// One host's load report, as `plugboard serve` buffers it.
package struct LoadReport: Sendable, Hashable {
    package var hostID: String
    package var environment: String
    package var hostVersion: String
    package var entries: [LoadReportEntry]
    package var source: String?
    /// Who wrote it (the OS user of a local host, `token:NAME` for a remote one).
    package var reporter: String

    /// A value with each stored property given.
    package init(
        hostID: String, environment: String, hostVersion: String, entries: [LoadReportEntry], source: String? = nil, reporter: String
    ) {
        self.hostID = hostID
        self.environment = environment
        self.hostVersion = hostVersion
        self.entries = entries
        self.source = source
        self.reporter = reporter
    }
}
