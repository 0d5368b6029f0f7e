import Foundation
import Logging
import PlugboardModel
import PlugboardPluginAPI
import PlugboardVersioning
import Synchronization

/// What the host tells: its load report, its status and its events.
extension PluginHost {
    func record(_ id: String, _ version: String?, _ state: LoadReportEntry.State, _ reason: SkipReason) {
        setStatus(LoadReportEntry(pluginID: id, version: version, state: state, reasonCode: reason.code.rawValue, reason: reason.message))
        emit(
            state == .failed
                ? .failed(pluginID: id, version: version, reason: reason) : .skipped(pluginID: id, version: version, reason: reason))
        configuration.logger.warning("\(state.rawValue) \(id)\(version.map { "@\($0)" } ?? ""): \(reason.message)")
    }

    /// Sets the plug-in's status; an entry of a release that crashed this host within the crash window carries the
    /// count of its crashes.
    func setStatus(_ entry: LoadReportEntry) {
        let window = configuration.crashQuarantine?.window ?? .zero
        let crashes =
            entry.crashes
            ?? entry.version.map { CrashJournal.crashes(of: entry.pluginID, $0, in: crashRecords, within: window, before: Date()) }
        let entry = entry.withCrashes(crashes)
        statuses.withLock { $0[entry.pluginID] = entry }
    }

    func writeReportIfChanged() async {
        let report = status
        guard report != lastReport || stale != lastReportStale, !reportsDisabled else { return }
        do {
            try await source.writeLoadReport(configuration.identity, entries: report, source: stale)
            // A load report does not change the board's version (it is telemetry), and re-reading the version
            // here could swallow a change another process committed meanwhile.
            lastReport = report
            lastReportStale = stale
        } catch  where error.code == .notAllowed {
            // Said once: a read-only host (or one whose token may not report) keeps working without reports.
            reportsDisabled = true
            warn("cannot write load reports to \(source.name) (\(error.message)); the host keeps running without them")
        } catch {
            // Not written now (a board file that is busy): the next reconciliation writes it. A served board's source
            // queues the report and sends it again itself.
            lastReport = nil
        }
    }

    func warn(_ message: String) {
        configuration.logger.warning("\(message)")
        emit(.warning(message))
    }

    nonisolated func emit(_ event: HostEvent) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }
}
