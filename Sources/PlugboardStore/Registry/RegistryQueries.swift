import Foundation
import GRDB
import PlugboardModel
import PlugboardVersioning

/// The SQL of the registry: plug-ins, versions, dependencies, environments, pins, yanks and kill switches.
enum RegistryQueries {
    // MARK: Plug-ins and versions

    static func pluginExists(_ db: Database, _ pluginID: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM plugins WHERE id = ?"), arguments: [pluginID]) ?? false
    }

    static func requirePlugin(_ db: Database, _ pluginID: String) throws {
        guard try pluginExists(db, pluginID) else {
            throw BoardError.notFound("plug-in \(pluginID) is not registered; see plugboard plugin list")
        }
    }

    static func insertPlugin(_ db: Database, _ manifest: PluginManifest, by actor: Principal, at now: String) throws {
        try db.cachedStatement(sql: "INSERT INTO plugins (id, name, description, created_at, created_by) VALUES (?, ?, ?, ?, ?)").execute(
            arguments: [manifest.id, manifest.name, manifest.description, now, actor.osUser])
    }

    static func updatePluginNaming(_ db: Database, _ manifest: PluginManifest) throws {
        try db.cachedStatement(sql: "UPDATE plugins SET name = ?, description = ? WHERE id = ?").execute(arguments: [
            manifest.name, manifest.description, manifest.id,
        ])
    }

    /// Who registered a version and when, if it is registered.
    static func registration(_ db: Database, _ pluginID: String, _ version: String) throws -> (at: String, by: String)? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT registered_at, registered_by FROM plugin_versions WHERE plugin_id = ? AND version = ?"),
            arguments: [pluginID, version]
        ).map { ($0["registered_at"], $0["registered_by"]) }
    }

    /// The registered versions of a plug-in with this SemVer precedence (`sort_key`), which ignores build metadata.
    static func versions(_ db: Database, _ pluginID: String, precedenceKey: String) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(sql: "SELECT version FROM plugin_versions WHERE plugin_id = ? AND sort_key = ? ORDER BY version"),
            arguments: [pluginID, precedenceKey])
    }

    /// The yank of a version: nil when the version is not registered.
    static func yankState(_ db: Database, _ pluginID: String, _ version: String) throws -> (yanked: Bool, reason: String?)? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT yanked_at, yank_reason FROM plugin_versions WHERE plugin_id = ? AND version = ?"),
            arguments: [pluginID, version]
        )
        .map { (($0["yanked_at"] as String?) != nil, $0["yank_reason"]) }
    }

    static func setYank(_ db: Database, _ pluginID: String, _ version: String, reason: String?, by actor: Principal, at now: String) throws
    {
        if let reason {
            try db.cachedStatement(
                sql: "UPDATE plugin_versions SET yanked_at = ?, yanked_by = ?, yank_reason = ? WHERE plugin_id = ? AND version = ?"
            ).execute(arguments: [now, actor.osUser, reason, pluginID, version])
        } else {
            try db.cachedStatement(
                sql: "UPDATE plugin_versions SET yanked_at = NULL, yanked_by = NULL, yank_reason = NULL WHERE plugin_id = ? AND version = ?"
            ).execute(arguments: [pluginID, version])
        }
    }

    static func insertVersion(
        _ db: Database, _ manifest: PluginManifest, capabilities: String, artifact: String?, by actor: Principal, at now: String
    )
        throws
    {
        try db.cachedStatement(
            sql: """
                INSERT INTO plugin_versions (plugin_id, version, sort_key, is_prerelease, name, description, host_range, gate_flag,
                    entry_symbol, capabilities, manifest_json, artifact_sha256, registered_at, registered_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            manifest.id, manifest.version.description, manifest.version.precedenceKey, manifest.version.isPrerelease,
            manifest.name, manifest.description, manifest.host?.description, manifest.gate, manifest.entry,
            capabilities, manifest.source, artifact, now, actor.osUser,
        ])
        for (dependency, range) in manifest.dependencies.sorted(by: { $0.key < $1.key }) {
            try db.cachedStatement(
                sql: "INSERT INTO plugin_dependencies (plugin_id, version, dependency_id, version_range) VALUES (?, ?, ?, ?)"
            ).execute(arguments: [manifest.id, manifest.version.description, dependency, range.description])
        }
    }

    static func highestVersion(_ db: Database, _ pluginID: String) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT version FROM plugin_versions WHERE plugin_id = ? ORDER BY sort_key DESC LIMIT 1"),
            arguments: [pluginID])
    }

    static func insertArtifact(_ db: Database, _ staged: ArtifactStore.Staged, by actor: Principal, at now: String) throws {
        try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO artifacts (sha256, size_bytes, file_name, stored_at, stored_by) VALUES (?, ?, ?, ?, ?)"
        ).execute(arguments: [staged.sha256, staged.size, staged.fileName, now, actor.osUser])
    }

    // MARK: Environments, enablement and pins

    static func environmentExists(_ db: Database, _ environment: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM environments WHERE name = ?"), arguments: [environment]) ?? false
    }

    static func environments(_ db: Database) throws -> [String] {
        try String.fetchAll(db.cachedStatement(sql: "SELECT name FROM environments ORDER BY name"))
    }

    static func requireEnvironment(_ db: Database, _ environment: String) throws {
        guard try environmentExists(db, environment) else {
            let known = try environments(db).joined(separator: ", ")
            throw BoardError.notFound(
                "environment '\(environment)' does not exist (known: \(known)); it is created the first time a plug-in is enabled, disabled or pinned in it"
            )
        }
    }

    static func insertEnvironment(_ db: Database, _ environment: String, by actor: Principal, at now: String) throws {
        try db.cachedStatement(sql: "INSERT INTO environments (name, created_at, created_by) VALUES (?, ?, ?)").execute(arguments: [
            environment, now, actor.osUser,
        ])
    }

    static func environmentRow(_ db: Database, _ pluginID: String, _ environment: String) throws -> EnvironmentRow {
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT enabled, pinned_version, approved_version FROM plugin_environments WHERE plugin_id = ? AND environment = ?"),
            arguments: [pluginID, environment])
        return EnvironmentRow(enabled: row?["enabled"] ?? false, pinned: row?["pinned_version"], approved: row?["approved_version"])
    }

    static func saveEnvironmentRow(
        _ db: Database, _ pluginID: String, _ environment: String, _ state: EnvironmentRow, by actor: Principal, at now: String
    )
        throws
    {
        try db.cachedStatement(
            sql: """
                INSERT INTO plugin_environments (plugin_id, environment, enabled, pinned_version, approved_version, updated_at, updated_by)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (plugin_id, environment) DO UPDATE SET enabled = excluded.enabled, pinned_version = excluded.pinned_version,
                    approved_version = excluded.approved_version, updated_at = excluded.updated_at, updated_by = excluded.updated_by
                """
        ).execute(arguments: [pluginID, environment, state.enabled, state.pinned, state.approved, now, actor.osUser])
        // Signed approvals enable once: however a plug-in is disabled (a disable, a restore's narrowing), enabling it again
        // needs new ones.
        if !state.enabled, try ApproverQueries.hasTables(db) {
            try db.cachedStatement(sql: "DELETE FROM enablement_approvals WHERE plugin_id = ? AND environment = ?").execute(arguments: [
                pluginID, environment,
            ])
        }
    }

    /// The environments where a version is pinned, by name.
    static func environmentsPinning(_ db: Database, _ pluginID: String, _ version: String) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(
                sql: "SELECT environment FROM plugin_environments WHERE plugin_id = ? AND pinned_version = ? ORDER BY environment"),
            arguments: [pluginID, version])
    }

    // MARK: Kill switches

    static func activeKillSwitch(_ db: Database, _ target: KillTarget) throws -> KillSwitch? {
        try Row.fetchOne(
            db.cachedStatement(
                sql:
                    "SELECT * FROM kill_switches WHERE revived_at IS NULL AND scope = ? AND ifnull(plugin_id, '') = ? AND ifnull(version, '') = ?"
            ),
            arguments: [target.scope, target.pluginID ?? "", target.versionText ?? ""]
        ).map(killSwitch)
    }

    /// Inserts an active kill switch and returns its id.
    static func insertKillSwitch(_ db: Database, _ target: KillTarget, reason: String, by actor: Principal, at now: String) throws -> Int64
    {
        try db.cachedStatement(
            sql: "INSERT INTO kill_switches (scope, plugin_id, version, reason, killed_at, killed_by) VALUES (?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [target.scope, target.pluginID, target.versionText, reason, now, actor.osUser])
        return db.lastInsertedRowID
    }

    static func reviveKillSwitch(_ db: Database, id: Int64, reason: String?, by actor: Principal, at now: String) throws {
        try db.cachedStatement(sql: "UPDATE kill_switches SET revived_at = ?, revived_by = ?, revive_reason = ? WHERE id = ?").execute(
            arguments: [now, actor.osUser, reason, id])
    }

    static func killSwitches(_ db: Database, includeRevived: Bool) throws -> [KillSwitch] {
        try Row.fetchAll(db, sql: "SELECT * FROM kill_switches \(includeRevived ? "" : "WHERE revived_at IS NULL") ORDER BY id DESC")
            .map(killSwitch)
    }

    static func killSwitches(_ db: Database, coveringPlugin pluginID: String) throws -> [KillSwitch] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM kill_switches WHERE plugin_id = ? OR scope = 'all' ORDER BY id DESC"),
            arguments: [pluginID]
        )
        .map(killSwitch)
    }

    static func killSwitch(_ row: Row) -> KillSwitch {
        KillSwitch(
            id: row["id"], scope: row["scope"], pluginID: row["plugin_id"], version: row["version"], reason: row["reason"],
            killedAt: row["killed_at"], killedBy: row["killed_by"], revivedAt: row["revived_at"], revivedBy: row["revived_by"],
            reviveReason: row["revive_reason"])
    }

    // MARK: Reads for people

    static func pluginRow(_ db: Database, _ pluginID: String) throws -> (
        name: String, description: String?, createdAt: String, createdBy: String
    )? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM plugins WHERE id = ?"), arguments: [pluginID])
            .map { ($0["name"], $0["description"], $0["created_at"], $0["created_by"]) }
    }

    static func versionInfos(_ db: Database, _ pluginID: String) throws -> [PluginVersionInfo] {
        let dependencies = Dictionary(
            grouping: try Row.fetchAll(
                db.cachedStatement(sql: "SELECT version, dependency_id, version_range FROM plugin_dependencies WHERE plugin_id = ?"),
                arguments: [pluginID])
        ) { $0["version"] as String }
        let killedVersions = Set(
            try String.fetchAll(
                db.cachedStatement(
                    sql: "SELECT version FROM kill_switches WHERE scope = 'version' AND plugin_id = ? AND revived_at IS NULL"),
                arguments: [pluginID]))
        let signatures = try SignatureQueries.allSignatures(db, pluginID: pluginID)
        let trust = try SignatureQueries.trust(db)
        return try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM plugin_versions WHERE plugin_id = ? ORDER BY sort_key DESC"), arguments: [pluginID]
        )
        .map {
            row in
            let version: String = row["version"]
            return PluginVersionInfo(
                version: version, name: row["name"], description: row["description"], hostRange: row["host_range"],
                gate: row["gate_flag"], entry: row["entry_symbol"], capabilities: capabilities(row["capabilities"]),
                dependencies: Dictionary(
                    uniqueKeysWithValues: (dependencies[version] ?? []).map {
                        ($0["dependency_id"] as String, $0["version_range"] as String)
                    }),
                artifactSHA256: row["artifact_sha256"], registeredAt: row["registered_at"], registeredBy: row["registered_by"],
                yankedAt: row["yanked_at"], yankedBy: row["yanked_by"], yankReason: row["yank_reason"],
                killed: killedVersions.contains(version), manifest: row["manifest_json"],
                signature: SignatureCheck.verdict(
                    for: ReleaseStatement(
                        pluginID: pluginID, version: version, manifestSHA256: ReleaseStatement.manifestSHA256(row["manifest_json"]),
                        artifactSHA256: row["artifact_sha256"]),
                    signatures: signatures["\(pluginID)@\(version)"] ?? [], trust: trust))
        }
    }

    static func environmentStates(_ db: Database, _ pluginID: String) throws -> [EnvironmentState] {
        try Row.fetchAll(
            db.cachedStatement(
                sql:
                    "SELECT environment, enabled, pinned_version, active_version FROM plugin_state WHERE plugin_id = ? ORDER BY environment"
            ),
            arguments: [pluginID]
        ).map {
            EnvironmentState(
                environment: $0["environment"], enabled: $0["enabled"], pinnedVersion: $0["pinned_version"],
                activeVersion: $0["active_version"])
        }
    }

    // MARK: What hosts read

    /// Every registered version with its dependencies and version-scoped kills, highest precedence first per plug-in.
    static func snapshotVersions(_ db: Database, ids: [String]? = nil) throws -> [String: [RegistrySnapshot.Version]] {
        // With `ids`, only those plug-ins' rows: a JSON array bound once, expanded by json_each.
        let only = ids.map { _ in "plugin_id IN (SELECT value FROM json_each(?))" }
        let arguments: StatementArguments = ids.map { [idList($0)] } ?? []
        let versionKills = try activeVersionKills(db)
        var dependencies: [String: [String: String]] = [:]
        for row in try Row.fetchAll(
            db,
            sql: "SELECT plugin_id, version, dependency_id, version_range FROM plugin_dependencies" + (only.map { " WHERE \($0)" } ?? ""),
            arguments: arguments)
        {
            dependencies["\(row["plugin_id"] as String)@\(row["version"] as String)", default: [:]][row["dependency_id"]] =
                row["version_range"]
        }
        var versions: [String: [RegistrySnapshot.Version]] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT * FROM plugin_versions" + (only.map { " WHERE \($0)" } ?? "") + " ORDER BY plugin_id, sort_key DESC",
            arguments: arguments)
        {
            let id: String = row["plugin_id"]
            let version: String = row["version"]
            let key = "\(id)@\(version)"
            versions[id, default: []].append(
                RegistrySnapshot.Version(
                    version: version, hostRange: row["host_range"], dependencies: dependencies[key] ?? [:], gate: row["gate_flag"],
                    entry: row["entry_symbol"], capabilities: capabilities(row["capabilities"]), artifactSHA256: row["artifact_sha256"],
                    yanked: (row["yanked_at"] as String?) != nil, killed: versionKills.contains(key)))
        }
        return versions
    }

    /// Every plug-in's enablement and pin in `environment` (with `ids`, only those plug-ins').
    static func snapshotEnablement(_ db: Database, environment: String, ids: [String]? = nil) throws -> [(
        id: String, enabled: Bool, pinned: String?, approved: String?
    )] {
        var arguments: StatementArguments = [environment]
        if let ids { arguments += [idList(ids)] }
        return try Row.fetchAll(
            db,
            sql: """
                SELECT p.id, ifnull(pe.enabled, 0) AS enabled, pe.pinned_version,
                    \(try hasApprovedVersions(db) ? "pe.approved_version" : "NULL") AS approved_version
                FROM plugins p LEFT JOIN plugin_environments pe ON pe.plugin_id = p.id AND pe.environment = ?
                """ + (ids == nil ? "" : " WHERE p.id IN (SELECT value FROM json_each(?))"), arguments: arguments
        ).map { ($0["id"], $0["enabled"], $0["pinned_version"], $0["approved_version"]) }
    }

    /// Plug-in ids as one JSON array, bound once and expanded in SQL by `json_each`.
    private static func idList(_ ids: [String]) -> String { AuditJSON.array(ids.map(AuditJSON.string)).canonicalText }

    /// `id@version` of every version under an active version-scoped kill switch.
    static func activeVersionKills(_ db: Database) throws -> Set<String> {
        Set(
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT plugin_id, version FROM kill_switches WHERE revived_at IS NULL AND scope = 'version'")
            ).map {
                "\($0[0] as String)@\($0[1] as String)"
            })
    }

    /// Whether `sha256` is the artifact of a release of a plug-in enabled in `environment`.
    static func isArtifact(_ db: Database, sha256: String, enabledIn environment: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (
                        SELECT 1 FROM plugin_versions v
                        JOIN plugin_environments pe ON pe.plugin_id = v.plugin_id AND pe.environment = ? AND pe.enabled = 1
                        WHERE v.artifact_sha256 = ?)
                    """), arguments: [environment, sha256]) ?? false
    }

    /// The ids of the plug-ins enabled in `environment`.
    static func enabledIDs(_ db: Database, environment: String) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(sql: "SELECT plugin_id FROM plugin_environments WHERE environment = ? AND enabled = 1"),
            arguments: [environment])
    }

    /// The reasons of the active kill switches over all plug-ins (`nil` key) and over whole plug-ins.
    static func activePluginKills(_ db: Database) throws -> (all: String?, plugins: [String: String]) {
        var all: String?
        var plugins: [String: String] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT scope, plugin_id, reason FROM kill_switches WHERE revived_at IS NULL AND scope <> 'version'"))
        {
            if (row["scope"] as String) == "all" { all = row["reason"] } else { plugins[row["plugin_id"]] = row["reason"] }
        }
        return (all, plugins)
    }

    private static func capabilities(_ json: String?) -> [String] {
        json.flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) } ?? []
    }
}

/// A plug-in's enablement and pin in one environment, as stored.
struct EnvironmentRow: Equatable {
    var enabled: Bool
    var pinned: String?
    /// The newest release a change took in where the environment is protected (nil: none yet).
    var approved: String? = nil
    var json: AuditJSON {
        var fields: [String: AuditJSON] = ["enabled": .bool(enabled), "pinned_version": .optional(pinned)]
        if let approved { fields["approved_version"] = .string(approved) }
        return .object(fields)
    }
}
