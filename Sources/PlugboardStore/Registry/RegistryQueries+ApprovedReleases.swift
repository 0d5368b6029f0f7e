import GRDB
import PlugboardModel

/// The releases a protected environment runs: the newest release a change took in, per plug-in
/// (`plugin_environments.approved_version`).
extension RegistryQueries {
    /// The newest release a host may pick: the highest version that is neither a pre-release nor yanked.
    static func newestRelease(_ db: Database, _ pluginID: String) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT version FROM plugin_versions WHERE plugin_id = ? AND is_prerelease = 0 AND yanked_at IS NULL
                    ORDER BY sort_key DESC LIMIT 1
                    """), arguments: [pluginID])
    }

    /// The release a change of `pluginID` in `environment` takes in (an enable, an unpin): its newest release where the
    /// environment is protected, else (or when it has none) `current`, the one taken in before.
    static func releaseTakenIn(_ db: Database, _ pluginID: String, environment: String, current: String?) throws -> String? {
        guard try ChangeRecords.protection(db, environment: environment).required > 0 else { return current }
        return try newestRelease(db, pluginID) ?? current
    }

    /// Takes in, for every plug-in enabled in `environment`, its newest release: what the environment runs when it
    /// becomes protected. Answers the plug-ins and releases taken in (a plug-in with no release takes in none).
    static func takeInNewestReleases(_ db: Database, environment: String, by actor: Principal, at now: String) throws -> [String: String] {
        var taken: [String: String] = [:]
        for pluginID in try String.fetchAll(
            db.cachedStatement(sql: "SELECT plugin_id FROM plugin_environments WHERE environment = ? AND enabled = 1 ORDER BY 1"),
            arguments: [environment])
        {
            let newest = try newestRelease(db, pluginID)
            try db.cachedStatement(
                sql: """
                    UPDATE plugin_environments SET approved_version = ?, updated_at = ?, updated_by = ?
                    WHERE plugin_id = ? AND environment = ? AND approved_version IS NOT ?
                    """
            ).execute(arguments: [newest, now, actor.osUser, pluginID, environment, newest])
            if let newest { taken[pluginID] = newest }
        }
        return taken
    }

    /// Whether the board records the releases changes took in (migration 0019 applied): a host may read a board that
    /// an older `plugboard` wrote.
    static func hasApprovedVersions(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: "SELECT EXISTS (SELECT 1 FROM pragma_table_info('plugin_environments') WHERE name = 'approved_version')")) ?? false
    }
}
