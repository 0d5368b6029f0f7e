import Foundation
import PlugboardModel
import Synchronization

/// The bodies of events and their `v1a` signatures, made once for every endpoint of a format instead of once for each
/// endpoint and attempt: the body depends only on the row and the format, and the Ed25519 signature only on the body,
/// its id and its timestamp. Only the `v1` HMAC, whose key is the endpoint's own, is made per endpoint.
///
/// A prepared event is used while its timestamp is fresh (``freshness``), so that a retry much later is signed with
/// a time the receiver's tolerance accepts; at most ``capacity`` are kept.
final class PreparedEvents: Sendable {
    /// One event, ready to be signed with an endpoint's secret.
    struct Event: Sendable {
        let id: String
        let body: Data
        let timestamp: Int
        /// `id.timestamp.body`, what both signatures sign.
        let content: Data
        let v1a: String?
    }

    private struct Key: Hashable {
        let seq: Int64
        let format: WebhookFormat
    }

    /// How long, in seconds, a prepared event's timestamp is used.
    static let freshness = 60
    /// The most events kept.
    static let capacity = 4096
    private let events = Mutex<[Key: Event]>([:])

    /// The event of `row` in `format`, prepared now unless a fresh one is kept.
    func event(_ row: AuditRecord, format: WebhookFormat, payload: WebhookPayload, signingKey: Data?, now: Date) -> Event {
        let key = Key(seq: row.seq, format: format)
        let timestamp = Int(now.timeIntervalSince1970)
        if let kept = events.withLock({ $0[key] }), timestamp - kept.timestamp < Self.freshness { return kept }
        let id = payload.id(row)
        let body = payload.body(row, format: format)
        let content = WebhookSigning.content(id: id, timestamp: timestamp, body: body)
        let event = Event(
            id: id, body: body, timestamp: timestamp, content: content, v1a: WebhookSigning.v1a(content, signingKey: signingKey))
        events.withLock { events in
            if events.count >= Self.capacity {
                events = events.filter { timestamp - $0.value.timestamp < Self.freshness }
                if events.count >= Self.capacity { events.removeAll() }
            }
            events[key] = event
        }
        return event
    }
}
