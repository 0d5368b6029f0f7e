package import Foundation
import GRDB
package import PlugboardModel

/// The SQL of webhook endpoints: the policy rows (`webhooks`, `webhook_signing_keys`) and delivery's runtime rows
/// (`webhook_deliveries`).
enum WebhookQueries {
    /// How long an endpoint fails before it is shown as failing.
    static let failingAfter: TimeInterval = 86_400

    static let selectSQL = """
        SELECT w.name, w.url, w.events, w.environment, w.format, w.enabled, w.created_at, w.created_by,
               coalesce(d.cursor, 0) AS cursor, coalesce(d.attempts, 0) AS attempts, d.next_attempt_at, d.failing_since,
               d.last_status, d.last_error
        FROM webhooks w LEFT JOIN webhook_deliveries d ON d.name = w.name
        """

    static func endpoints(_ db: Database, now: Date) throws -> [WebhookEndpoint] {
        try Row.fetchAll(db, sql: selectSQL + " ORDER BY w.name").map { endpoint($0, now: now) }
    }

    static func endpoint(_ db: Database, _ name: String, now: Date) throws -> WebhookEndpoint? {
        try Row.fetchOne(db, sql: selectSQL + " WHERE w.name = ?", arguments: [name]).map { endpoint($0, now: now) }
    }

    static func require(_ db: Database, _ name: String, now: Date) throws -> WebhookEndpoint {
        guard let found = try endpoint(db, name, now: now) else {
            throw BoardError.notFound("no webhook named '\(Validate.printable(name))'; see plugboard webhook list")
        }
        return found
    }

    static func endpoint(_ row: Row, now: Date) -> WebhookEndpoint {
        let failingSince: String? = row["failing_since"]
        let failing = failingSince.flatMap(Milliseconds.parse).map { now.timeIntervalSince($0) >= failingAfter } ?? false
        return WebhookEndpoint(
            name: row["name"], url: row["url"], events: row["events"], environment: row["environment"],
            format: WebhookFormat(rawValue: row["format"]) ?? .standard, enabled: row["enabled"] as Bool, cursor: row["cursor"],
            attempts: row["attempts"], nextAttemptAt: row["next_attempt_at"], failingSince: failingSince, failing: failing,
            lastStatus: row["last_status"], lastError: row["last_error"], createdAt: row["created_at"], createdBy: row["created_by"])
    }

    static func sealedSecret(_ db: Database, _ name: String) throws -> Data? {
        try Data.fetchOne(db.cachedStatement(sql: "SELECT secret_sealed FROM webhooks WHERE name = ?"), arguments: [name])
    }

    static func signingKey(_ db: Database) throws -> WebhookSigningKey? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT public_key, private_sealed FROM webhook_signing_keys WHERE id = 1")).map {
            WebhookSigningKey(publicKey: $0["public_key"], sealedPrivateKey: $0["private_sealed"])
        }
    }

    /// Sets the endpoint's cursor, and clears its attempts: the next event is sent at once.
    static func setCursor(_ db: Database, _ name: String, to cursor: Int64) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO webhook_deliveries (name, cursor) VALUES (?1, ?2)
                ON CONFLICT (name) DO UPDATE SET cursor = ?2, attempts = 0, next_attempt_at = NULL, failing_since = NULL
                """
        ).execute(arguments: [name, cursor])
    }
}

/// The board's webhook signing key: its public half, and its private half sealed under the master key.
package struct WebhookSigningKey: Sendable, Hashable {
    /// The Ed25519 public key, base64.
    package let publicKey: String
    /// The private key's raw bytes, sealed.
    package let sealedPrivateKey: Data

    /// A key.
    package init(publicKey: String, sealedPrivateKey: Data) {
        self.publicKey = publicKey
        self.sealedPrivateKey = sealedPrivateKey
    }
}

/// What `webhook add` stores: an endpoint's settings, its sealed secret, and the board's signing key if it has none yet.
package struct NewWebhook: Sendable {
    package let name: String
    package let url: String
    package let events: String
    package let environment: String?
    package let format: WebhookFormat
    package let sealedSecret: Data
    /// The board's webhook signing key, made for the first endpoint (ignored when the board has one).
    package let signingKey: WebhookSigningKey

    /// A value with each stored property given.
    package init(
        name: String, url: String, events: String, environment: String?, format: WebhookFormat, sealedSecret: Data,
        signingKey: WebhookSigningKey
    ) {
        self.name = name
        self.url = url
        self.events = events
        self.environment = environment
        self.format = format
        self.sealedSecret = sealedSecret
        self.signingKey = signingKey
    }
}
