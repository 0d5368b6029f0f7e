import Foundation

extension Board {
    /// Stores a batch of client telemetry in one short transaction, without an audit row (usage is not a change of
    /// the board's policy): instance registrations, hourly flag usage counts (added to what is stored), and when
    /// tokens were last accepted. Then deletes what is past ``UsageRetention``.
    public func recordClientUsage(
        registrations: [ClientRegistration], usage: [FlagUsageCount], tokensUsed: [String: Date] = [:], now: Date = Date()
    ) throws(BoardError) {
        guard !registrations.isEmpty || !usage.isEmpty || !tokensUsed.isEmpty else { return }
        do {
            try writeUnaudited(.clientUsage) { db in
                for registration in registrations { try UsageQueries.upsertInstance(db, registration) }
                for count in usage where count.yes > 0 || count.no > 0 || !count.variants.isEmpty { try UsageQueries.addUsage(db, count) }
                try TokenQueries.touch(db, lastUsed: tokensUsed.mapValues(Timestamp.format))
                try UsageQueries.prune(db, now: now)
            }
        } catch {
            throw mapError(error)
        }
    }

    /// The applications and SDK instances that read the board, most recently seen first.
    public func clientInstances(environment: String? = nil) throws(BoardError) -> [ClientInstance] {
        if let environment { try Validate.environment(environment) }
        return try read { db in try UsageQueries.instances(db, environment: environment) }
    }

    /// How clients used a flag, per environment, over the kept hour buckets.
    public func flagUsage(_ name: String) throws(BoardError) -> [FlagUsageSummary] {
        try Validate.flagName(name)
        return try read { db in try UsageQueries.usage(db, flag: name) }
    }

    /// Flags of `environment` (not archived) that no client evaluated in the last `days` days.
    public func unusedFlags(environment: String, days: Int) throws(BoardError) -> [FlagSummary] {
        guard days >= 1 else { throw .invalid("--unused \(days) is not valid: give a number of days of at least 1") }
        guard days <= UsageRetention.days else {
            throw .invalid(
                "--unused \(days) is more than the \(UsageRetention.days) days of usage the board keeps; give at most \(UsageRetention.days)"
            )
        }
        let since = FlagUsageCount.bucket(for: Date().addingTimeInterval(-Double(days) * 86400))
        let flags = try flagSummaries(environment: environment)
        let used = try read { db in try UsageQueries.usedFlags(db, environment: environment, since: since) }
        return flags.filter { !used.contains($0.name) }
    }
}
