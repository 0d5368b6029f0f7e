import PlugboardModel
import PlugboardStore

/// The text `plugboard plugin list`, `plugin show` and `plugin status` print without `--json`: tables whose cells are
/// escaped.
enum PluginText {
    /// One row a plug-in; a sentence when none is registered.
    static func list(_ plugins: [PluginSummary]) -> String {
        var table = Table("ID", "NAME", "ENABLED", "KILLED", "PINNED", "ACTIVE", "LATEST", "VERSIONS")
        for plugin in plugins {
            // ACTIVE is what a host of the environment may run: nothing while the plug-in is killed or disabled (the
            // JSON keeps the board's `active_version`, the version it would pick).
            let active = plugin.killed || !plugin.enabled ? nil : plugin.activeVersion
            table.add(
                plugin.id, plugin.name, plugin.enabled.yesNo, plugin.killed.yesNo, plugin.pinnedVersion.cell, active.cell,
                plugin.latestVersion.cell, String(plugin.versionCount))
        }
        return table.text(empty: "No plug-ins are registered; add one with plugboard plugin register MANIFEST.json.")
    }

    /// Its id, name and description, then its versions, environments, owners and active kill switches.
    static func detail(_ detail: PluginDetail) -> String {
        var lines = ["\(detail.id)  \(Validate.escaped(detail.name))"]
        if let description = detail.description { lines.append(description) }
        lines.append("registered \(detail.createdAt) by \(Validate.escaped(detail.createdBy))")
        lines.append("\nVersions:")
        var versions = Table("VERSION", "HOST", "DEPENDENCIES", "GATE", "ARTIFACT", "SIGNATURE", "REGISTERED", "STATE")
        for version in detail.versions {
            var state: [String] = []
            if version.killed { state.append("killed") }
            if let reason = version.yankReason { state.append("yanked: \(reason)") }
            versions.add(
                version.version, version.hostRange.cell,
                version.dependencies.isEmpty
                    ? "-" : version.dependencies.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                version.gate.cell, version.artifactSHA256.map { String($0.prefix(12)) }.cell, version.signature.cell,
                "\(version.registeredAt) by \(version.registeredBy)", state.isEmpty ? "ok" : state.joined(separator: "; "))
        }
        lines.append(versions.render())
        lines.append("\nEnvironments:")
        var environments = Table("ENVIRONMENT", "ENABLED", "PINNED", "ACTIVE")
        for env in detail.environments {
            environments.add(env.environment, env.enabled.yesNo, env.pinnedVersion.cell, env.activeVersion.cell)
        }
        lines.append(environments.render())
        lines.append("\nOwners:")
        var owners = Table("PRINCIPAL", "ROLE")
        for owner in detail.owners { owners.add(owner.principal, owner.role.rawValue) }
        lines.append(owners.render())
        let active = detail.killSwitches.filter(\.active)
        lines.append("\nActive kill switches:\(active.isEmpty ? " none" : "")")
        if !active.isEmpty {
            var kills = Table("SCOPE", "TARGET", "REASON", "KILLED")
            for kill in active {
                kills.add(
                    kill.scope,
                    kill.scope == "all" ? "all plug-ins" : [kill.pluginID, kill.version].compactMap { $0 }.joined(separator: "@"),
                    kill.reason, "\(kill.killedAt) by \(kill.killedBy)")
            }
            lines.append(kills.render())
        }
        return lines.joined(separator: "\n")
    }

    /// One row a host's report on a plug-in; a sentence, about `id` when given, when no host reported.
    static func status(_ rows: [HostLoadStatus], of id: PluginID?) -> String {
        var table = Table("PLUGIN", "HOST", "ENV", "VERSION", "STATE", "SIGNATURE", "WHY", "REPORTED", "READS")
        for row in rows {
            table.add(
                row.pluginID, row.hostID, row.environment, row.version.cell, row.state.rawValue, row.signature?.rawValue ?? "-",
                (row.reason ?? row.warning.map { "warning: \($0)" } ?? "-") + crashNote(row), row.reportedAt,
                row.source ?? "the board file")
        }
        return table.text(
            empty: id.map { "No host has reported on \($0) yet." }
                ?? "No host has reported yet: hosts write a load report when they start and whenever their plug-ins change.")
    }

    /// ` (2 crashes of this release within the host's window)`, when the row does not say so already.
    static func crashNote(_ row: HostLoadStatus) -> String {
        guard let crashes = row.crashes, row.reasonCode != "crashed" else { return "" }
        return " (\(crashes) crash\(crashes == 1 ? "" : "es") of this release within the host's window)"
    }
}

extension SignatureVerdict {
    /// `valid (key 3f1c…)`, `unsigned`, `revoked (key …)`: a table cell.
    var cell: String {
        keyIDs.isEmpty ? state.rawValue : "\(state.rawValue) (key \(keyIDs.joined(separator: ", ")))"
    }
}
