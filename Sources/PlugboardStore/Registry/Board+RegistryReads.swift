import GRDB
package import PlugboardModel
import PlugboardVersioning

extension Board {
    /// Every plug-in with its state in `environment`, sorted by id; with `after` and `limit`, the page of at most `limit`
    /// plug-ins whose ids sort after `after`.
    package func pluginSummaries(
        environment: String, after: String? = nil, limit: Int? = nil, matching: String? = nil
    ) throws(BoardError) -> [PluginSummary] {
        try Validate.environment(environment)
        return try read { db in
            try RegistryQueries.requireEnvironment(db, environment)
            return try RegistryQueries.pluginSummaries(db, environment: environment, after: after, limit: limit, matching: matching)
        }
    }

    /// Everything about one plug-in.
    package func pluginDetail(_ pluginID: String) throws(BoardError) -> PluginDetail {
        try Validate.pluginID(pluginID)
        return try read { db in
            guard let plugin = try RegistryQueries.pluginRow(db, pluginID) else {
                throw BoardError.notFound("plug-in \(pluginID) is not registered; see plugboard plugin list")
            }
            return PluginDetail(
                id: pluginID, name: plugin.name, description: plugin.description, createdAt: plugin.createdAt, createdBy: plugin.createdBy,
                versions: try RegistryQueries.versionInfos(db, pluginID), environments: try RegistryQueries.environmentStates(db, pluginID),
                owners: try RoleQueries.owners(db, pluginID: pluginID),
                killSwitches: try RegistryQueries.killSwitches(db, coveringPlugin: pluginID))
        }
    }

    /// Throws ``BoardError`` `notFound` unless `pluginID` is registered (and `invalidInput` for an invalid id).
    package func requirePlugin(_ pluginID: String) throws(BoardError) {
        try Validate.pluginID(pluginID)
        try read { db in try RegistryQueries.requirePlugin(db, pluginID) }
    }

    /// The ids of every registered plug-in.
    package func registeredPluginIDs() throws(BoardError) -> Set<String> {
        try read { db in Set(try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM plugins"))) }
    }

    /// The environments of the board, sorted by name.
    package func environments() throws(BoardError) -> [String] {
        try read { db in try RegistryQueries.environments(db) }
    }

    /// A fact about the board itself (`board_id`, `created_at`, `created_by`).
    package func info(_ key: String) throws(BoardError) -> String? {
        try read { db in try BoardQueries.info(db, key) }
    }
}

/// Finds the registered version a version argument means. SemVer gives versions that differ only in build metadata
/// (`1.0.0+build.1`, `1.0.0+build.2`) the same precedence, so they are one version: `1.0.0` names `1.0.0+build.1`.
enum VersionLookup {
    /// The registered text of `version`: itself when registered exactly, else the one registered version with its
    /// precedence; nil when there is none.
    ///
    /// - Throws: ``BoardError`` `.conflict` when several registered versions (from before this rule) share the
    ///   precedence and none is `version` exactly.
    static func registered(_ db: Database, _ pluginID: String, _ version: SemanticVersion) throws -> String? {
        let candidates = try RegistryQueries.versions(db, pluginID, precedenceKey: version.precedenceKey)
        if candidates.contains(version.description) { return version.description }
        guard candidates.count <= 1 else {
            throw BoardError.conflict(
                "\(pluginID)@\(version) matches the versions \(candidates.joined(separator: ", ")), which differ only in build metadata; name one of them exactly"
            )
        }
        return candidates.first
    }

    /// ``registered(_:_:_:)`` as a ``SemanticVersion``.
    static func registeredVersion(_ db: Database, _ pluginID: String, _ version: SemanticVersion) throws -> SemanticVersion? {
        guard let text = try registered(db, pluginID, version) else { return nil }
        return SemanticVersion(parsing: text) ?? version
    }
}
