import Foundation
import GRDB

/// Everything a host needs to decide what to load in one environment, read in one transaction.
///
/// Hosts read only: building a snapshot never writes, so a host with read-only access to the board works.
public struct RegistrySnapshot: Sendable, Hashable {
    /// One registered version as a host sees it.
    public struct Version: Sendable, Hashable {
        public let version: String
        public let hostRange: String?
        public let dependencies: [String: String]
        public let gate: String?
        public let entry: String?
        public let capabilities: [String]
        public let artifactSHA256: String?
        public let yanked: Bool
        /// True when a version-scoped kill switch covers it.
        public let killed: Bool
    }

    /// One plug-in as a host sees it in the snapshot's environment.
    public struct Plugin: Sendable, Hashable {
        public let id: String
        public let enabled: Bool
        public let pinnedVersion: String?
        /// True when a plug-in-scoped kill switch covers it.
        public let killed: Bool
        /// The reason of the kill switch, when killed.
        public let killReason: String?
        /// Every registered version, highest precedence first.
        public let versions: [Version]
    }

    /// The environment the snapshot describes.
    public let environment: String
    /// True when a kill switch covers all plug-ins.
    public let allKilled: Bool
    /// The reason of the all-plug-ins kill switch.
    public let allKilledReason: String?
    /// Every registered plug-in, by id.
    public let plugins: [String: Plugin]
    /// The board's version when the snapshot was read (see ``Board/version()``), to notice later changes cheaply.
    public let version: BoardVersion
}

extension Board {
    /// Reads a ``RegistrySnapshot`` of `environment` in one read transaction. An environment the board does
    /// not know yet simply has nothing enabled.
    public func registrySnapshot(environment: String) throws(BoardError) -> RegistrySnapshot {
        try Validate.environment(environment)
        let own = ownChangeCount
        return try read { db in
            let boardVersion = try version(db, ownChangesBefore: own)
            let kills = try Row.fetchAll(db, sql: "SELECT scope, plugin_id, version, reason FROM kill_switches WHERE revived_at IS NULL")
            let allKill = kills.first { $0["scope"] == "all" }
            var pluginKills: [String: String] = [:]
            var versionKills: Set<String> = []
            for kill in kills {
                switch kill["scope"] as String {
                case "plugin": pluginKills[kill["plugin_id"]] = kill["reason"]
                case "version": versionKills.insert("\(kill["plugin_id"] as String)@\(kill["version"] as String)")
                default: break
                }
            }
            var dependencies: [String: [String: String]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT plugin_id, version, dependency_id, version_range FROM plugin_dependencies") {
                dependencies["\(row["plugin_id"] as String)@\(row["version"] as String)", default: [:]][row["dependency_id"]] =
                    row["version_range"]
            }
            var versions: [String: [RegistrySnapshot.Version]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM plugin_versions ORDER BY plugin_id, sort_key DESC") {
                let id: String = row["plugin_id"]
                let version: String = row["version"]
                let key = "\(id)@\(version)"
                let capabilities = (try? JSONDecoder().decode([String].self, from: Data((row["capabilities"] as String).utf8))) ?? []
                versions[id, default: []].append(
                    RegistrySnapshot.Version(
                        version: version, hostRange: row["host_range"], dependencies: dependencies[key] ?? [:], gate: row["gate_flag"],
                        entry: row["entry_symbol"], capabilities: capabilities, artifactSHA256: row["artifact_sha256"],
                        yanked: (row["yanked_at"] as String?) != nil, killed: versionKills.contains(key)))
            }
            var plugins: [String: RegistrySnapshot.Plugin] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT p.id, ifnull(pe.enabled, 0) AS enabled, pe.pinned_version
                    FROM plugins p LEFT JOIN plugin_environments pe ON pe.plugin_id = p.id AND pe.environment = ?
                    """, arguments: [environment])
            {
                let id: String = row["id"]
                plugins[id] = RegistrySnapshot.Plugin(
                    id: id, enabled: row["enabled"], pinnedVersion: row["pinned_version"],
                    killed: pluginKills[id] != nil, killReason: pluginKills[id], versions: versions[id] ?? [])
            }
            return RegistrySnapshot(
                environment: environment, allKilled: allKill != nil, allKilledReason: allKill?["reason"],
                plugins: plugins, version: boardVersion)
        }
    }
}
