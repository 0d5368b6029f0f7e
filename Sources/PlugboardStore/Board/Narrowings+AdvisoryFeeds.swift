import GRDB
import PlugboardModel

/// How far each subscribed feed got on the board a restore replaces. A restored copy's subscription to the same URL
/// keeps at least the replaced board's last sequence and head, so that a feed older than the last one applied is still
/// refused as a replay after going back in time.
struct AdvisoryFeedNarrowings: Sendable {
    /// The subscriptions of the replaced board that applied a feed, by name.
    var feeds: [String: AdvisoryFeedSubscription] = [:]

    /// Reads the subscriptions of the board being replaced; a board made before feeds has none.
    static func read(_ db: Database) throws -> AdvisoryFeedNarrowings {
        var records = AdvisoryFeedNarrowings()
        for feed in try AdvisoryFeedQueries.all(db) where feed.sequence != nil { records.feeds[feed.name] = feed }
        return records
    }

    /// Raises the copy's subscriptions to these records; `add` records each as a narrowing carried forward.
    func narrow(
        _ change: AuditedChange, _ add: (String, String, String, String?, String, Narrowings.Made.Key, AuditJSON, AuditJSON) -> Void
    ) throws {
        let db = change.db
        for (name, kept) in feeds.sorted(by: { $0.key < $1.key }) {
            guard let sequence = kept.sequence, let copy = try AdvisoryFeedQueries.stored(db, name), copy.url == kept.url,
                (copy.sequence ?? .min) < sequence
            else { continue }
            try db.cachedStatement(sql: "UPDATE advisory_feeds SET sequence = ?, head = ?, expires = ?, applied_at = ? WHERE name = ?")
                .execute(arguments: [sequence, kept.head, kept.expires, kept.appliedAt, name])
            add(
                "advisory feed", "advisory_feed", name, nil, "sequence \(sequence) applied on the replaced board", .advisoryFeed(name),
                AdvisoryFeedQueries.json(copy), try AdvisoryFeedQueries.stored(db, name).map(AdvisoryFeedQueries.json) ?? .null)
        }
    }
}
