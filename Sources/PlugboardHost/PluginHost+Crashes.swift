import Foundation
import Logging
import PlugboardModel
import PlugboardPluginAPI

/// Crashes: the marker around every call into plug-in code, the crash a previous process left, quarantine and safe mode.
extension PluginHost {
    /// What the host is doing in a plug-in's code, as the marker and the crash journal name it.
    enum PluginCall: String {
        /// `dlopen` of the library and its entry symbol.
        case load
        /// The factory and `activate(context:)`.
        case activate
        /// `deactivate()`.
        case deactivate
        /// A call of a feature through `call(_:as:_:)` or `forEach(_:_:)`.
        case call
    }

    /// Notes durably that the host enters `id@version`'s code (when crash tracking is on); returns the call's token for
    /// ``left(_:)``. A marker that cannot be written is said once; the call goes ahead.
    nonisolated func entering(_ id: String, _ version: String, _ call: PluginCall) -> Int? {
        guard let markers else { return nil }
        let (token, failure) = markers.enter(id, version, call.rawValue)
        if let failure {
            let message = "cannot note which plug-in code the host enters, so a crash in it will go unnoticed: \(failure.message)"
            configuration.logger.warning("\(message)")
            emit(.warning(message))
        }
        return token
    }

    /// Notes that the call of `token` into plug-in code returned.
    nonisolated func left(_ token: Int?) {
        if let token { markers?.leave(token) }
    }

    /// On the first reconciliation: reads the crash journal and records the crash that a marker left by a previous
    /// process means, quarantining the release when it crashed the host often enough.
    func noticeCrashes() {
        guard !crashesNoticed else { return }
        crashesNoticed = true
        if configuration.safeMode, !saidSafeMode {
            saidSafeMode = true
            warn("the host runs in safe mode: it loads no plug-in")
        }
        guard let journal = crashJournal, let policy = configuration.crashQuarantine else { return }
        do throws(BoardError) { try journal.prepareFolder() } catch {
            warn("\(error.message); crashes in plug-in code go unnoticed")
            return
        }
        var contents = journal.contents()
        if contents.unreadable > 0 {
            warn("skipped \(contents.unreadable) unreadable line(s) of the crash journal \(journal.journalPath)")
        }
        defer {
            quarantine = CrashJournal.quarantined(contents.records)
            crashRecords = contents.records
        }
        let found: [CrashJournal.Marker]
        switch journal.leftoverMarkers() {
        case .success(let markers): found = markers
        case .failure(let error):
            warn("\(error.message); removed it")
            journal.leave()
            return
        }
        // One death is one crash of each release it was in, however many calls into a release were in progress.
        var releases = Set<String>()
        let markers = found.filter { releases.insert(ReleaseCheck.key($0.pluginID, $0.version)).inserted }
        guard !markers.isEmpty else { return }
        var said: [(CrashJournal.Marker, Int, Bool)] = []
        for marker in markers {
            let time = min(marker.time, Date())
            contents.records.append(
                .init(kind: .crash, time: time, pluginID: marker.pluginID, version: marker.version, detail: marker.phase))
            let count = CrashJournal.crashes(of: marker.pluginID, marker.version, in: contents.records, within: policy.window, before: time)
            let key = ReleaseCheck.key(marker.pluginID, marker.version)
            let quarantines = count >= policy.threshold && CrashJournal.quarantined(contents.records)[key] == nil
            if quarantines {
                contents.records.append(
                    .init(kind: .quarantine, time: Date(), pluginID: marker.pluginID, version: marker.version, detail: String(count)))
            }
            said.append((marker, count, quarantines))
        }
        do throws(BoardError) {
            try journal.write(contents.records)
            journal.leave()
        } catch {
            warn(
                "cannot record the crash of \(markers.map { "\($0.pluginID)@\($0.version)" }.joined(separator: ", ")) in \(journal.journalPath): \(error.message)"
            )
        }
        let window = Self.describe(policy.window)
        let others = markers.count > 1 ? " (one of \(markers.count) releases whose code was running, each counted)" : ""
        for (marker, count, quarantines) in said {
            let release = "\(marker.pluginID)@\(marker.version)"
            var message =
                "the host's previous process (\(marker.pid)) died in the code of \(release) (\(marker.phase), entered at \(Timestamp.format(marker.time)))\(others): \(count) crash\(count == 1 ? "" : "es") of this release within \(window)"
            if quarantines {
                message +=
                    "; the host quarantines \(release) and does not load it (lift it with plugboard host release-quarantine \(configuration.identity.hostID) \(marker.pluginID) \(marker.version))"
            }
            warn(message)
            // Reported before the host enters plug-in code again (see reportCrashBeforeLoading()).
            setStatus(
                LoadReportEntry(
                    pluginID: marker.pluginID, version: marker.version, state: .failed, reasonCode: SkipReason.Code.crashed.rawValue,
                    reason:
                        "\(release) crashed the host's previous process (\(marker.phase)): \(count) crash\(count == 1 ? "" : "es") of this release within \(window)",
                    crashes: count))
        }
        crashToReport = true
    }

    /// Writes the load report that carries the crash a previous process left, and has the source deliver it, before the
    /// host loads anything: a host that crashes on every activation still gets each crash to the board.
    func reportCrashBeforeLoading() async {
        guard crashToReport else { return }
        crashToReport = false
        await writeReportIfChanged()
        await source.deliverLoadReport()
    }

    /// Lifts the quarantines that the board released for this host: a release in `registry` of this host's id, made
    /// after the host quarantined the release. Each lifting is noted in the crash journal, so that it holds whatever
    /// the board says later; crashes after it count afresh and may quarantine the release again. The registry is
    /// proven (every row of the releases' table, with the board's head) before the host acts on it.
    func applyQuarantineReleases(_ registry: RegistrySnapshot) {
        guard let journal = crashJournal, !quarantine.isEmpty else { return }
        var lifted: [(record: CrashJournal.Record, release: QuarantineRelease)] = []
        for release in registry.quarantineReleases(forHost: configuration.identity.hostID) {
            guard let record = quarantine[ReleaseCheck.key(release.pluginID, release.version)],
                let releasedAt = Timestamp.parse(release.releasedAt), record.time < releasedAt
            else { continue }
            lifted.append(
                (
                    CrashJournal.Record(
                        kind: .release, time: Date(), pluginID: release.pluginID, version: release.version,
                        detail: Timestamp.format(releasedAt)),
                    release
                ))
        }
        guard !lifted.isEmpty else { return }
        var contents = journal.contents()
        contents.records += lifted.map(\.record)
        do throws(BoardError) { try journal.write(contents.records) } catch {
            warn("cannot note the end of a quarantine in \(journal.journalPath): \(error.message); the board's release still applies")
        }
        for (record, _) in lifted { quarantine[ReleaseCheck.key(record.pluginID, record.version)] = nil }
        crashRecords = contents.records
        for (_, release) in lifted {
            let why = release.reason.map { ": \(Validate.escaped($0))" } ?? ""
            configuration.logger.notice(
                "the board released this host's quarantine of \(release.pluginID)@\(release.version) (\(Validate.escaped(release.releasedBy)) at \(release.releasedAt)\(why)): the host loads it again"
            )
        }
    }

    /// Why `id@version` is quarantined on this host, or nil.
    static func quarantineReason(
        _ id: String, _ version: String, _ record: CrashJournal.Record?, window: String, hostID: String
    ) -> SkipReason? {
        guard let record else { return nil }
        return SkipReason(
            .quarantined,
            "\(id)@\(version) crashed this host \(record.detail) times within \(window) and is quarantined on it since \(Timestamp.format(record.time)); release another version, or lift the quarantine with plugboard host release-quarantine \(hostID) \(id) \(version)"
        )
    }

    /// The decisions of safe mode: nothing loads, and what would have is reported as skipped with the reason `safe_mode`.
    static func safeMode(_ resolution: Resolution) -> Resolution {
        let reason = SkipReason(.safeMode, "the host runs in safe mode: it loads no plug-in")
        return Resolution(
            load: [],
            skipped: resolution.skipped + resolution.load.map { LoadDecision(pluginID: $0.pluginID, version: $0.version, skip: reason) })
    }

    /// `10 minutes`, `90 seconds`.
    static func describe(_ window: Duration) -> String {
        let seconds = window.components.seconds
        if seconds % 60 == 0, seconds >= 60 { return "\(seconds / 60) minute\(seconds == 60 ? "" : "s")" }
        return "\(seconds) second\(seconds == 1 ? "" : "s")"
    }
}
