import Foundation
import GRDB
package import PlugboardModel
import PlugboardVersioning

extension Board {
    /// The hosts that reported running a release a standing advisory affects (only the advisory `id`, when given), per
    /// environment (only `environment`, when given) and plug-in, from the fleet's load reports; for each plug-in the fix
    /// (``AdvisoryExposure/fix``) and the command that brings it. Reads only.
    ///
    /// - Throws: ``BoardError`` `.notFound` for an advisory the board does not hold.
    package func advisoryExposure(id: String? = nil, environment: String? = nil) throws(BoardError) -> [AdvisoryExposure] {
        if let environment { try Validate.environment(environment) }
        if let id {
            try OSVDocument.validateID(id)
            let known = try read { db in try AdvisoryQueries.stored(db, id) != nil }
            if !known { throw BoardError.notFound("no advisory \(Validate.printable(id)) is on the board; see plugboard advisory list") }
        }
        let running = try loadStatus().filter {
            $0.state == .loaded && $0.version != nil && (environment ?? $0.environment) == $0.environment
        }
        var exposures: [AdvisoryExposure] = []
        for place in Set(running.map(\.environment)).sorted() {
            let snapshot = try registrySnapshot(environment: place)
            let protection = try read { db in
                try ApproverQueries.hasTables(db) ? try ChangeRecords.protection(db, environment: place).required : 0
            }
            let here = running.filter { $0.environment == place }
            let exposed = Dictionary(
                grouping: here.compactMap { status -> (String, ExposedHost)? in
                    guard let version = status.version else { return nil }
                    let affecting = snapshot.advisories(affecting: status.pluginID, version).filter { id == nil || $0.id == id }
                    guard let strictest = affecting.first else { return nil }
                    return (
                        status.pluginID,
                        ExposedHost(
                            hostID: status.hostID, hostVersion: status.hostVersion, version: version, advisories: affecting.map(\.id),
                            action: strictest.action, reportedAt: status.reportedAt)
                    )
                }, by: \.0)
            for (pluginID, hosts) in exposed.sorted(by: { $0.key < $1.key }) {
                exposures.append(
                    ExposureFix(snapshot: snapshot, running: here, approvals: protection).exposure(
                        pluginID, hosts: hosts.map(\.1).sorted { $0.hostID < $1.hostID }))
            }
        }
        return exposures
    }
}

/// The fix of one plug-in's exposure in one environment: which release, and which command brings it.
struct ExposureFix {
    /// The environment's registry, with its standing advisories and their actions there.
    let snapshot: RegistrySnapshot
    /// What every host of the environment reported running.
    let running: [HostLoadStatus]
    /// The approvals the environment's changes need (0: not protected).
    let approvals: Int

    func exposure(_ pluginID: String, hosts: [ExposedHost]) -> AdvisoryExposure {
        let environment = snapshot.environment
        let highest = hosts.compactMap { SemanticVersion(parsing: $0.version) }.max()
        let (fits, why) = candidates(pluginID)
        let above = fits.filter { version in highest.map { version.parsed > $0 } ?? true }
        let fix = above.min { $0.parsed < $1.parsed } ?? fits.max { $0.parsed < $1.parsed }
        guard let fix, let highest else {
            return AdvisoryExposure(
                environment: environment, pluginID: pluginID, hosts: hosts, fix: nil, fixIsLower: false, command: nil,
                opensChangeRequest: false, note: why)
        }
        let plugin = snapshot.plugins[pluginID]
        let lower = fix.parsed < highest
        let pin = lower || plugin?.pinnedVersion != nil || plugin?.rollout.map { $0.state == .running || $0.state == .paused } == true
        let inEnvironment = " --env \(Self.quoted(environment))"
        let command =
            pin
            ? "plugboard plugin pin \(pluginID) \(fix.text)\(inEnvironment)"
            : "plugboard rollout start \(pluginID) \(fix.text)\(inEnvironment) --steps 10,50,100 --every 10m"
        let note =
            approvals > 0
            ? "\(environment) is protected: the command opens a change request that needs \(approvals) approval\(approvals == 1 ? "" : "s")"
            : nil
        return AdvisoryExposure(
            environment: environment, pluginID: pluginID, hosts: hosts, fix: fix.text, fixIsLower: lower, command: command,
            opensChangeRequest: approvals > 0, note: note)
    }

    /// The releases of `pluginID` that could replace the affected ones here, and, when there is none, why.
    private func candidates(_ pluginID: String) -> (fits: [(text: String, parsed: SemanticVersion)], why: String) {
        guard let plugin = snapshot.plugins[pluginID] else { return ([], "\(pluginID) is not registered") }
        let advisories = snapshot.advisories ?? []
        let hostVersions = Set(running.filter { $0.pluginID == pluginID }.map(\.hostVersion)).compactMap { SemanticVersion(parsing: $0) }
        // Each dependency range on the plug-in of a release a host here runs.
        let dependents: [(String, VersionRange?)] = running.compactMap { status in
            guard let version = status.version,
                let range = snapshot.plugins[status.pluginID]?.versions.first(where: { $0.version == version })?.dependencies[pluginID]
            else { return nil }
            return ("\(status.pluginID)@\(version) needs \(pluginID) \(range)", VersionRange(parsing: range))
        }
        // Why none fits: the reason the highest release free of advisories does not.
        var why: String?
        let fits = plugin.versions.compactMap { release -> (text: String, parsed: SemanticVersion)? in
            guard let parsed = SemanticVersion(parsing: release.version), !parsed.isPrerelease, !release.yanked, !release.killed,
                advisories.affecting(pluginID, release.version).isEmpty
            else { return nil }
            if let text = release.hostRange, let range = VersionRange(parsing: text),
                let host = hostVersions.first(where: { !range.contains($0) })
            {
                why = why ?? "no release of \(pluginID) free of advisories works with host API \(host) (\(release.version) needs \(text))"
                return nil
            }
            if let (dependent, _) = dependents.first(where: { !($0.1?.contains(parsed) ?? false) }) {
                why = why ?? "no release of \(pluginID) free of advisories fits its dependents (\(dependent))"
                return nil
            }
            if let unmet = unmetDependency(of: release, pluginID) {
                why = why ?? "no release of \(pluginID) free of advisories has its own dependencies on the hosts here (\(unmet))"
                return nil
            }
            return (release.version, parsed)
        }
        return (fits, why ?? "no registered release of \(pluginID) is free of advisories, neither yanked nor killed")
    }

    /// The first dependency of `release` that a host here running `pluginID` does not meet (it runs no release of the
    /// dependency, or one out of the range), as a sentence's part; nil when every one is met.
    private func unmetDependency(of release: RegistrySnapshot.Version, _ pluginID: String) -> String? {
        let hosts = Set(running.filter { $0.pluginID == pluginID }.map(\.hostID)).sorted()
        for (dependency, text) in release.dependencies.sorted(by: { $0.key < $1.key }) {
            let range = VersionRange(parsing: text)
            for host in hosts {
                let runs = running.first { $0.hostID == host && $0.pluginID == dependency }?.version
                guard let runs else { return "\(release.version) needs \(dependency) \(text); host \(host) runs none" }
                if !(SemanticVersion(parsing: runs).map { range?.contains($0) ?? false } ?? false) {
                    return "\(release.version) needs \(dependency) \(text); host \(host) runs \(runs)"
                }
            }
        }
        return nil
    }

    /// `text` as one shell word.
    static func quoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0) }
        return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
