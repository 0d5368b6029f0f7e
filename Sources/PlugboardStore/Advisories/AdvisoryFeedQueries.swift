import Foundation
import GRDB
import PlugboardModel
import PlugboardVersioning

/// The SQL of `advisory_feeds`, and how a feed's document compares with the advisory the board holds.
enum AdvisoryFeedQueries {
    static func all(_ db: Database) throws -> [AdvisoryFeedSubscription] {
        guard try db.tableExists("advisory_feeds") else { return [] }
        return try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM advisory_feeds ORDER BY name")).map(subscription)
    }

    static func stored(_ db: Database, _ name: String) throws -> AdvisoryFeedSubscription? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM advisory_feeds WHERE name = ?"), arguments: [name]).map(subscription)
    }

    static func json(_ feed: AdvisoryFeedSubscription) -> AuditJSON {
        .object([
            "url": .string(feed.url), "keys": .array(feed.keyIDs.map(AuditJSON.string)), "interval": .int(feed.intervalSeconds),
            "sequence": feed.sequence.map { .int(Int($0)) } ?? .null, "head": .optional(feed.head),
        ])
    }

    private static func subscription(_ row: Row) -> AdvisoryFeedSubscription {
        let text: String = row["keys_json"]
        let keys = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String] ?? []
        return AdvisoryFeedSubscription(
            name: row["name"], url: row["url"],
            keyIDs: keys.compactMap { Data(base64Encoded: $0).map { SigningKeys.keyID(publicKey: $0) } }, keys: keys,
            intervalSeconds: row["interval_seconds"], sequence: row["sequence"], head: row["head"], expires: row["expires"],
            appliedAt: row["applied_at"])
    }

    /// Why taking `new` in place of `old` (with its ranges `oldRanges`) would let more run: the publisher withdrew it, it
    /// lowers the severity, or it leaves a version unaffected that was affected. Nil when it only stops or refuses as
    /// much or more.
    static func widening(_ old: StoredAdvisory, ranges oldRanges: [String: [AdvisoryRange]], to new: OSVDocument) -> String? {
        if new.withdrawn != nil, old.withdrawn == nil { return "withdrawn by its publisher" }
        if rank(new.severity) < rank(old.severity) {
            return "lowers its severity from \(old.severity.rawValue) to \(new.severity.rawValue)"
        }
        for (plugin, ranges) in oldRanges.sorted(by: { $0.key < $1.key }) {
            let after = new.affected[plugin] ?? []
            if let version = points(ranges + after).first(where: { version in
                ranges.contains { $0.affects(version) } && !after.contains { $0.affects(version) }
            }) {
                return "no longer affects \(plugin) \(version)"
            }
        }
        return nil
    }

    /// critical 3, high 2, medium 1, low and unknown (which acts as low) 0.
    private static func rank(_ severity: AdvisorySeverity) -> Int {
        switch severity {
        case .critical: 3
        case .high: 2
        case .medium: 1
        case .low, .unknown: 0
        }
    }

    /// The versions at which two sets of ranges can differ: the lowest version, every version an event or a list names,
    /// and the version right after each one. The affected versions of a range are stretches that start and end at those
    /// versions, so a version affected by one set and not the other exists only if one of these is.
    static func points(_ ranges: [AdvisoryRange]) -> [SemanticVersion] {
        var texts = Set(ranges.flatMap { $0.events.map(\.version) + $0.versions })
        texts.remove("0")
        var result: Set<SemanticVersion> = []
        if let lowest = try? SemanticVersion(major: 0, minor: 0, patch: 0, prerelease: ["0"]) { result.insert(lowest) }
        for text in texts {
            guard let version = SemanticVersion(parsing: text) else { continue }
            result.insert(version)
            let next =
                version.isPrerelease
                ? try? SemanticVersion(
                    major: version.major, minor: version.minor, patch: version.patch, prerelease: version.prerelease + ["0"])
                : try? SemanticVersion(major: version.major, minor: version.minor, patch: version.patch + 1, prerelease: ["0"])
            if let next { result.insert(next) }
        }
        return result.sorted()
    }
}
