import Foundation
import GRDB
import PlugboardModel

/// The SQL of the telemetry file: bounds and dropped counts (reports and usage have their own queries, run on it).
enum TelemetryQueries {
    static func countDrops(_ db: Database, _ counts: [String: Int], at now: String) throws {
        for (kind, count) in counts where count > 0 {
            try db.cachedStatement(
                sql: """
                    INSERT INTO dropped (kind, count, last_at) VALUES (?, ?, ?)
                    ON CONFLICT (kind) DO UPDATE SET count = count + excluded.count, last_at = excluded.last_at
                    """
            ).execute(arguments: [kind, count, now])
        }
    }

    static func drops(_ db: Database) throws -> [TelemetryDrop] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT kind, count, last_at FROM dropped ORDER BY kind")).map {
            TelemetryDrop(kind: $0[0], count: $0[1], lastAt: $0[2])
        }
    }

    /// Deletes the longest silent hosts past ``TelemetryLimits/maxHosts`` hosts or ``TelemetryLimits/maxReportRows``
    /// rows; returns how many rows went.
    static func boundReports(_ db: Database) throws -> Int {
        var removed = 0
        let hosts = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM hosts")) ?? 0
        if hosts > TelemetryLimits.maxHosts {
            let before = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM load_reports")) ?? 0
            try db.cachedStatement(sql: "DELETE FROM hosts WHERE host_id IN (SELECT host_id FROM hosts ORDER BY last_report LIMIT ?)")
                .execute(arguments: [hosts - TelemetryLimits.maxHosts])
            removed += before - (try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM load_reports")) ?? 0)
        }
        var rows = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM load_reports")) ?? 0
        while rows > TelemetryLimits.maxReportRows {
            // The longest silent hosts, as many as hold the excess (at least one).
            let excess = rows - TelemetryLimits.maxReportRows
            var chosen: [String] = []
            var freed = 0
            for row in try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT h.host_id, (SELECT count(*) FROM load_reports r WHERE r.host_id = h.host_id)
                        FROM hosts h ORDER BY h.last_report LIMIT 1000
                        """))
            {
                chosen.append(row[0])
                freed += row[1] as Int
                if freed >= excess { break }
            }
            guard !chosen.isEmpty else { break }
            for host in chosen { try db.cachedStatement(sql: "DELETE FROM hosts WHERE host_id = ?").execute(arguments: [host]) }
            removed += freed
            rows -= freed
        }
        return removed
    }

    /// The file is full: deletes the older half of every table's rows.
    static func shrink(_ db: Database) throws {
        let hosts = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM hosts")) ?? 0
        try db.cachedStatement(sql: "DELETE FROM hosts WHERE host_id IN (SELECT host_id FROM hosts ORDER BY last_report LIMIT ?)").execute(
            arguments: [(hosts + 1) / 2])
        let usage = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM flag_usage")) ?? 0
        try db.cachedStatement(
            sql: """
                DELETE FROM flag_usage WHERE (bucket, flag_name, environment, app_name) IN
                    (SELECT bucket, flag_name, environment, app_name FROM flag_usage ORDER BY bucket LIMIT ?)
                """
        ).execute(arguments: [(usage + 1) / 2])
        let instances = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM client_instances")) ?? 0
        try db.cachedStatement(
            sql: """
                DELETE FROM client_instances WHERE (app_name, instance_id, environment) IN
                    (SELECT app_name, instance_id, environment FROM client_instances ORDER BY last_seen LIMIT ?)
                """
        ).execute(arguments: [(instances + 1) / 2])
        try countDrops(db, [TelemetryDrop.Kind.storedRowsOverCap: hosts / 2 + usage / 2 + instances / 2], at: Timestamp.now())
    }
}
