import Foundation
import GRDB
import PlugboardModel

/// The SQL of client registrations and flag usage counts.
enum UsageQueries {
    static func upsertInstance(_ db: Database, _ registration: ClientRegistration) throws {
        let at = Timestamp.format(registration.at)
        let strategies = registration.strategies.map { FlagQueries.encode($0) }
        try db.cachedStatement(
            sql: """
                INSERT INTO client_instances (app_name, instance_id, environment, sdk_version, strategies, token_name, first_seen, last_seen)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app_name, instance_id, environment) DO UPDATE SET
                    sdk_version = ifnull(excluded.sdk_version, sdk_version),
                    strategies = ifnull(excluded.strategies, strategies),
                    token_name = ifnull(excluded.token_name, token_name),
                    last_seen = max(last_seen, excluded.last_seen)
                """
        ).execute(arguments: [
            registration.appName, registration.instanceID, registration.environment, registration.sdkVersion, strategies,
            registration.tokenName, at, at,
        ])
    }

    static func addUsage(_ db: Database, _ count: FlagUsageCount) throws {
        let existing = try String.fetchOne(
            db.cachedStatement(
                sql: "SELECT variants_json FROM flag_usage WHERE bucket = ? AND flag_name = ? AND environment = ? AND app_name = ?"),
            arguments: [count.bucket, count.flag, count.environment, count.appName])
        var variants = existing.flatMap { try? JSONDecoder().decode([String: Int].self, from: Data($0.utf8)) } ?? [:]
        for (name, value) in count.variants { variants[name, default: 0] += value }
        try db.cachedStatement(
            sql: """
                INSERT INTO flag_usage (bucket, flag_name, environment, app_name, yes, no, variants_json) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (bucket, flag_name, environment, app_name) DO UPDATE SET
                    yes = yes + excluded.yes, no = no + excluded.no, variants_json = excluded.variants_json
                """
        ).execute(arguments: [
            count.bucket, count.flag, count.environment, count.appName, count.yes, count.no, FlagQueries.encode(variants),
        ])
    }

    /// Deletes what is past the retention bounds (``UsageRetention``); returns how many rows went for the row caps.
    static func prune(_ db: Database, now: Date) throws -> Int {
        var removed = 0
        let cutoff = Timestamp.format(now.addingTimeInterval(-Double(UsageRetention.days) * 86400))
        try db.cachedStatement(sql: "DELETE FROM flag_usage WHERE bucket < ?").execute(arguments: [cutoff])
        try db.cachedStatement(sql: "DELETE FROM client_instances WHERE last_seen < ?").execute(arguments: [cutoff])
        let rows = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM flag_usage")) ?? 0
        if rows > UsageRetention.maxUsageRows {
            try db.cachedStatement(
                sql: """
                    DELETE FROM flag_usage WHERE (bucket, flag_name, environment, app_name) IN
                        (SELECT bucket, flag_name, environment, app_name FROM flag_usage ORDER BY bucket LIMIT ?)
                    """
            ).execute(arguments: [rows - UsageRetention.maxUsageRows])
            removed += rows - UsageRetention.maxUsageRows
        }
        let instances = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM client_instances")) ?? 0
        if instances > UsageRetention.maxInstances {
            try db.cachedStatement(
                sql: """
                    DELETE FROM client_instances WHERE (app_name, instance_id, environment) IN
                        (SELECT app_name, instance_id, environment FROM client_instances ORDER BY last_seen LIMIT ?)
                    """
            ).execute(arguments: [instances - UsageRetention.maxInstances])
            removed += instances - UsageRetention.maxInstances
        }
        return removed
    }

    static func instances(_ db: Database, environment: String?) throws -> [ClientInstance] {
        var sql = "SELECT * FROM client_instances"
        var arguments: StatementArguments = []
        if let environment {
            sql += " WHERE environment = ?"
            arguments = [environment]
        }
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
            ClientInstance(
                appName: row["app_name"], instanceID: row["instance_id"], environment: row["environment"], sdkVersion: row["sdk_version"],
                tokenName: row["token_name"], firstSeen: row["first_seen"], lastSeen: row["last_seen"])
        }
    }

    static func usageRows(_ db: Database, flag: String) throws -> [Row] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT bucket, environment, yes, no, variants_json FROM flag_usage WHERE flag_name = ?"),
            arguments: [flag])
    }

    static func summaries(_ rows: [Row]) -> [FlagUsageSummary] {
        var byEnvironment: [String: (last: String, yes: Int, no: Int, variants: [String: Int])] = [:]
        for row in rows {
            let environment: String = row["environment"]
            var entry = byEnvironment[environment] ?? (last: "", yes: 0, no: 0, variants: [:])
            entry.last = max(entry.last, row["bucket"] as String)
            entry.yes += row["yes"] as Int
            entry.no += row["no"] as Int
            let json: String = row["variants_json"]
            for (name, value) in (try? JSONDecoder().decode([String: Int].self, from: Data(json.utf8))) ?? [:] {
                entry.variants[name, default: 0] += value
            }
            byEnvironment[environment] = entry
        }
        return byEnvironment.sorted { $0.key < $1.key }.map { environment, entry in
            FlagUsageSummary(environment: environment, lastSeen: entry.last, yes: entry.yes, no: entry.no, variants: entry.variants)
        }
    }

    /// Names of flags evaluated (yes or no) in `environment` since `since` (a bucket string).
    static func usedFlags(_ db: Database, environment: String, since: String) throws -> Set<String> {
        Set(
            try String.fetchAll(
                db.cachedStatement(sql: "SELECT DISTINCT flag_name FROM flag_usage WHERE environment = ? AND bucket >= ? AND yes + no > 0"),
                arguments: [environment, since]))
    }
}
