import Foundation
import GRDB
import PlugboardModel
import PlugboardVersioning

extension RegistryQueries {
    /// What the `plugin_state` view says of every plug-in in `environment`, computed in one ordered pass over the
    /// plug-ins and one over their versions instead of the view's subqueries per plug-in (10,000 plug-ins: a few
    /// milliseconds). `StoreOperationTests` checks that both agree.
    ///
    /// With `after` and `limit`, a page: the first `limit` plug-ins whose id sorts after `after`, with only their
    /// versions read.
    static func pluginSummaries(
        _ db: Database, environment: String, after: String? = nil, limit: Int? = nil, matching: String? = nil
    ) throws -> [PluginSummary] {
        var pageSQL =
            "SELECT id, name FROM plugins WHERE id > ?1 AND (?2 IS NULL OR instr(lower(id), ?2) > 0 OR instr(lower(name), ?2) > 0) ORDER BY id"
        var pageArguments: StatementArguments = [after ?? "", matching?.lowercased()]
        if let limit {
            pageSQL += " LIMIT ?3"
            pageArguments += [limit]
        }
        let page = try Row.fetchAll(db, sql: pageSQL, arguments: pageArguments).map { (id: $0[0] as String, name: $0[1] as String) }
        guard let first = page.first?.id, let last = page.last?.id else { return [] }
        var enablement: [String: (enabled: Bool, pinned: String?)] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT plugin_id, enabled, pinned_version FROM plugin_environments WHERE environment = ?"),
            arguments: [environment])
        {
            enablement[row[0]] = (row[1], row[2])
        }
        let kills = try activePluginKills(db)
        let killedVersions = try activeVersionKills(db)
        // Versions in (plug-in, precedence descending) order: the first eligible one is the latest.
        var latest: [String: String] = [:]
        var counts: [String: Int] = [:]
        let versions = try Row.fetchCursor(
            db,
            sql: """
                SELECT plugin_id, version, yanked_at IS NULL AND is_prerelease = 0 FROM plugin_versions
                WHERE plugin_id BETWEEN ? AND ? ORDER BY plugin_id, sort_key DESC
                """, arguments: [first, last])
        while let row = try versions.next() {
            let id: String = row[0]
            counts[id, default: 0] += 1
            guard latest[id] == nil, row[2] as Bool else { continue }
            let version: String = row[1]
            if killedVersions.isEmpty || !killedVersions.contains("\(id)@\(version)") { latest[id] = version }
        }
        var summaries: [PluginSummary] = []
        summaries.reserveCapacity(page.count)
        for (id, name) in page {
            let state = enablement[id]
            summaries.append(
                PluginSummary(
                    id: id, name: name, environment: environment, enabled: state?.enabled ?? false,
                    killed: kills.all != nil || kills.plugins[id] != nil, pinnedVersion: state?.pinned, latestVersion: latest[id],
                    activeVersion: state?.pinned ?? latest[id], versionCount: counts[id] ?? 0))
        }
        return summaries
    }
}
