import Crypto
import Foundation
import GRDB
package import PlugboardModel

extension Board {
    /// The principal a subscribed feed's changes are recorded as: `plugboard/advisory-feed`, via the feed.
    package static let advisoryFeedPrincipal = "plugboard/advisory-feed"

    /// The principal that applies the feed `feed`: ``advisoryFeedPrincipal`` via `feed NAME (URL)`.
    package static func advisoryFeedActor(_ feed: AdvisoryFeedSubscription) throws(BoardError) -> Principal {
        let via = "feed \(feed.name) (\(feed.url))"
        return try Principal(osUser: advisoryFeedPrincipal, via: via.utf8.count <= 512 ? via : "feed \(feed.name)")
    }

    /// Subscribes the board to the feed at `url`, trusting `keys` (base64 Ed25519 public keys) to sign it. Admins; one
    /// audited change (`advisory-feed.subscribe`).
    package func subscribeAdvisoryFeed(name: String, url: String, keys: [String], intervalSeconds: Int, by actor: Principal)
        throws(BoardError) -> ChangeResult
    {
        try Validate.webhookName(name)
        guard (60...604_800).contains(intervalSeconds) else {
            throw BoardError.invalid("a feed's interval must be between 1 minute and 7 days")
        }
        guard !keys.isEmpty, keys.count <= AdvisoryFeed.maximumSignatures else {
            throw BoardError.invalid("give 1 to \(AdvisoryFeed.maximumSignatures) public keys (--key) that sign the feed")
        }
        var normalized: [String] = []
        for key in keys { normalized.append(try SigningKeys.publicKey(base64: key).rawRepresentation.base64EncodedString()) }
        let keysJSON = AuditJSON.array(normalized.map(AuditJSON.string)).canonicalText
        return try change(
            actor, refusal: AuditEntry(action: .advisoryFeedSubscribe, targetType: "advisory_feed", targetID: name),
            requiring: .admin(doing: "subscribe to advisory feeds")
        ) { change in
            if let existing = try AdvisoryFeedQueries.stored(change.db, name) {
                throw BoardError.conflict(
                    "the feed \(name) already exists (\(existing.url)); unsubscribe it first or choose another --name")
            }
            if let other = try String.fetchOne(change.db, sql: "SELECT name FROM advisory_feeds WHERE url = ?", arguments: [url]) {
                throw BoardError.conflict("the board already subscribes to \(url) as the feed \(other)")
            }
            try change.db.cachedStatement(
                sql: """
                    INSERT INTO advisory_feeds (name, url, keys_json, interval_seconds, created_at, created_by)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [name, url, keysJSON, intervalSeconds, change.now, change.actor.osUser])
            let after = try AdvisoryFeedQueries.stored(change.db, name)
            try change.record(
                AuditEntry(
                    action: .advisoryFeedSubscribe, targetType: "advisory_feed", targetID: name,
                    after: after.map(AdvisoryFeedQueries.json) ?? .null))
            return ChangeResult(
                changed: true,
                "Subscribed to the feed \(name) at \(url): plugboard serve fetches it every \(intervalSeconds / 60) min (or run plugboard advisory feed fetch \(name))."
            )
        }
    }

    /// Ends the subscription `name`; the advisories it brought stay. Admins; one audited change
    /// (`advisory-feed.unsubscribe`).
    package func unsubscribeAdvisoryFeed(_ name: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.webhookName(name)
        return try change(
            actor, refusal: AuditEntry(action: .advisoryFeedUnsubscribe, targetType: "advisory_feed", targetID: name),
            requiring: .admin(doing: "unsubscribe from advisory feeds")
        ) { change in
            guard let before = try AdvisoryFeedQueries.stored(change.db, name) else { throw Self.unknownFeed(name) }
            try change.db.cachedStatement(sql: "DELETE FROM advisory_feeds WHERE name = ?").execute(arguments: [name])
            try change.record(
                AuditEntry(
                    action: .advisoryFeedUnsubscribe, targetType: "advisory_feed", targetID: name,
                    before: AdvisoryFeedQueries.json(before)))
            return ChangeResult(changed: true, "Unsubscribed from the feed \(name); the advisories it brought stay on the board.")
        }
    }

    /// The board's feed subscriptions, by name.
    package func advisoryFeeds() throws(BoardError) -> [AdvisoryFeedSubscription] {
        try read { db in try AdvisoryFeedQueries.all(db) }
    }

    /// One subscription.
    package func advisoryFeed(_ name: String) throws(BoardError) -> AdvisoryFeedSubscription {
        try Validate.webhookName(name)
        return try read { db in
            guard let feed = try AdvisoryFeedQueries.stored(db, name) else { throw Self.unknownFeed(name) }
            return feed
        }
    }

    /// Applies a verified feed of the subscription `name`, as ``advisoryFeedPrincipal``, in one audited change: each
    /// document newer than the board's is imported (`advisory.import`), and the feed's sequence and head are recorded
    /// (`advisory-feed.apply`, whose `after` names the previous head, so that a feed this board never received shows as
    /// a gap). An expired feed, or any feed where the board requires approvals, imports only what stops or refuses as
    /// much or more; what it would loosen (a withdrawal, a lowered severity, a version no longer affected) is skipped
    /// and named.
    ///
    /// - Throws: ``BoardError`` `.invalidInput` for a replayed feed (a sequence below the last applied, or the same with
    ///   another head) or a document that is not a valid advisory; nothing changes.
    package func applyAdvisoryFeed(_ name: String, _ feed: VerifiedAdvisoryFeed, by actor: Principal) throws(BoardError) -> ChangeResult {
        let content = feed.content
        var documents: [OSVDocument] = []
        var ids: Set<String> = []
        for (index, text) in content.documents.enumerated() {
            let document = try OSVDocument.parse(text, file: "\(index + 1) of the feed \(name)")
            guard ids.insert(document.id).inserted else {
                throw BoardError.invalid("the feed \(name) holds the advisory \(document.id) twice; nothing was changed")
            }
            documents.append(document)
        }
        let feedActor = actor.osUser == Self.advisoryFeedPrincipal
        return try change(
            actor, refusal: AuditEntry(action: .advisoryFeedApply, targetType: "advisory_feed", targetID: name),
            requiring: feedActor ? nil : .admin(doing: "apply an advisory feed")
        ) { change in
            guard let before = try AdvisoryFeedQueries.stored(change.db, name) else { throw Self.unknownFeed(name) }
            if let last = before.sequence {
                if content.sequence == last, content.head == before.head {
                    return ChangeResult(changed: false, "The feed \(name) is unchanged at sequence \(last); nothing changed.")
                }
                guard content.sequence > last else {
                    throw BoardError.invalid(
                        "the feed \(name) has the sequence \(content.sequence), \(content.sequence == last ? "the same as" : "below") the \(last) this board applied last: a replayed or older feed, refused; nothing was changed"
                    )
                }
            }
            var taken: [String] = []
            var skipped: [String] = []
            // What lets hosts run more is a person's decision where the board requires approvals for it.
            let protected = try ChangeRecords.protection(change.db, environment: nil).required > 0
            for document in documents {
                guard let incoming = try AdvisoryQueries.incoming(change.db, document) else { continue }
                if let why = incoming.loosens, feed.expired || protected {
                    skipped.append("\(document.id) (\(why))")
                    continue
                }
                try AdvisoryQueries.save(change.db, document, source: "feed \(name)", at: change.now, by: change.actor)
                try change.record(
                    AuditEntry(
                        action: .advisoryImport, targetType: "advisory", targetID: document.id, before: incoming.stored?.json ?? .null,
                        after: try AdvisoryQueries.imported(change.db, document.id, incoming)))
                taken.append(document.id)
            }
            let gap = before.head != nil && content.previousHead != before.head
            try change.db.cachedStatement(
                sql: "UPDATE advisory_feeds SET sequence = ?, head = ?, expires = ?, applied_at = ? WHERE name = ?"
            ).execute(arguments: [content.sequence, content.head, content.expires, change.now, name])
            try change.record(
                AuditEntry(
                    action: .advisoryFeedApply, targetType: "advisory_feed", targetID: name,
                    before: .object(["sequence": before.sequence.map { .int(Int($0)) } ?? .null, "head": .optional(before.head)]),
                    after: .object([
                        "sequence": .int(Int(content.sequence)), "head": .string(content.head),
                        "previousHead": .optional(content.previousHead),
                        "expires": .string(content.expires), "expired": .bool(feed.expired), "keyID": .string(feed.keyID),
                        "imported": .array(taken.map(AuditJSON.string)), "skipped": .array(skipped.map(AuditJSON.string)),
                        "gap": .bool(gap),
                    ])))
            var notes: [String] = []
            if !skipped.isEmpty {
                let named = skipped.joined(separator: "; ")
                notes.append(
                    feed.expired
                        ? "The feed expired at \(content.expires), so what would let more run was skipped: \(named)."
                        : "This board requires approvals for what lets more run, so the feed's texts that would were skipped: \(named); a person imports them with plugboard advisory import, which waits for approvals."
                )
            }
            if gap {
                notes.append(
                    "The feed's previous head is \(content.previousHead ?? "none"), not the head \(before.head ?? "") this board applied last: a feed was published that this board never received."
                )
            }
            let imported =
                taken.isEmpty
                ? "no advisory changed"
                : "imported \(taken.count) \(taken.count == 1 ? "advisory" : "advisories"): \(taken.joined(separator: ", "))"
            return ChangeResult(
                changed: true, "Applied the feed \(name) at sequence \(content.sequence) (head \(content.head.prefix(16))): \(imported).",
                notes: notes)
        }
    }

    /// The text of every advisory the board holds, in id order, exactly as imported: what `advisory feed publish` puts
    /// in a feed. A withdrawal made on this board with `advisory withdraw` is not part of the text.
    package func advisoryDocuments() throws(BoardError) -> [String] {
        try read { db in try AdvisoryQueries.all(db).map(\.raw) }
    }

    private static func unknownFeed(_ name: String) -> BoardError {
        BoardError.notFound("the board subscribes to no feed named \(Validate.printable(name)); see plugboard advisory feed list")
    }
}
