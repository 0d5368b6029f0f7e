package import Foundation
package import PlugboardModel

extension Board {
    /// Stores a batch of client telemetry in one short transaction of the telemetry file (never the board's write lock,
    /// no audit row: usage is not a change of the board's policy): instance registrations and hourly flag usage counts
    /// (added to what is stored). Then deletes what is past ``UsageRetention``. When tokens were last accepted goes to
    /// the board itself (one small update per token).
    package func recordClientUsage(
        registrations: [ClientRegistration], usage: [FlagUsageCount], tokensUsed: [String: Date] = [:], now: Date = Date()
    ) throws(BoardError) {
        if !registrations.isEmpty || !usage.isEmpty {
            try writeTelemetry { db in
                for registration in registrations { try UsageQueries.upsertInstance(db, registration) }
                for count in usage where count.yes > 0 || count.no > 0 || !count.variants.isEmpty { try UsageQueries.addUsage(db, count) }
                let removed = try UsageQueries.prune(db, now: now)
                try TelemetryQueries.countDrops(db, [TelemetryDrop.Kind.storedRowsOverCap: removed], at: Timestamp.format(now))
            }
        }
        if !tokensUsed.isEmpty {
            do {
                try writeUnaudited(.clientUsage) { db in try TokenQueries.touch(db, lastUsed: tokensUsed.mapValues(Timestamp.format)) }
            } catch {
                throw mapError(error)
            }
        }
    }

    /// The applications and SDK instances that read the board, most recently seen first: from the telemetry file, and
    /// those that boards written before it still hold and that have not been seen since.
    package func clientInstances(environment: String? = nil) throws(BoardError) -> [ClientInstance] {
        if let environment { try Validate.environment(environment) }
        let current = try readTelemetry(empty: []) { db in try UsageQueries.instances(db, environment: environment) }
        let legacy = try read { db in try UsageQueries.instances(db, environment: environment) }
        func key(_ instance: ClientInstance) -> [String] { [instance.appName, instance.instanceID, instance.environment] }
        let seen = Set(current.map(key))
        return (current + legacy.filter { !seen.contains(key($0)) }).sorted { $0.lastSeen > $1.lastSeen }
    }

    /// How clients used a flag, per environment, over the kept hour buckets (the telemetry file's and those boards
    /// written before it still hold).
    package func flagUsage(_ name: String) throws(BoardError) -> [FlagUsageSummary] {
        try Validate.flagName(name)
        let current = try readTelemetry(empty: []) { db in try UsageQueries.usageRows(db, flag: name) }
        let legacy = try read { db in try UsageQueries.usageRows(db, flag: name) }
        return UsageQueries.summaries(current + legacy)
    }

    /// Flags of `environment` (not archived) that no client evaluated in the last `days` days.
    package func unusedFlags(environment: String, days: Int) throws(BoardError) -> [FlagSummary] {
        guard days >= 1 else { throw .invalid("--unused \(days) is not valid: give a number of days of at least 1") }
        guard days <= UsageRetention.days else {
            throw .invalid(
                "--unused \(days) is more than the \(UsageRetention.days) days of usage the board keeps; give at most \(UsageRetention.days)"
            )
        }
        let since = FlagUsageCount.bucket(for: Date().addingTimeInterval(-Double(days) * 86400))
        let flags = try flagSummaries(environment: environment)
        let used = try readTelemetry(empty: []) { db in try UsageQueries.usedFlags(db, environment: environment, since: since) }
            .union(read { db in try UsageQueries.usedFlags(db, environment: environment, since: since) })
        return flags.filter { !used.contains($0.name) }
    }
}
