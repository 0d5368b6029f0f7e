package import Foundation
import GRDB
package import PlugboardModel

extension Board {
    // MARK: Changes (admins)

    /// Adds the webhook endpoint `webhook`: admins. Its cursor starts at the log's head, so it receives the events
    /// after this change. The board's webhook signing key is stored with the first endpoint. The audit row names the
    /// URL, the filters and the format, never the secret.
    package func addWebhook(_ webhook: NewWebhook, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.webhookName(webhook.name)
        try Validate.webhookEvents(webhook.events)
        if let environment = webhook.environment { try Validate.environment(environment) }
        return try change(
            actor, refusal: AuditEntry(action: .webhookAdd, targetType: "webhook", targetID: webhook.name),
            requiring: .admin(doing: "add webhooks")
        ) { change in
            if try WebhookQueries.endpoint(change.db, webhook.name, now: clock.date()) != nil {
                throw BoardError.conflict("a webhook named '\(webhook.name)' exists; remove it first, or rotate its secret")
            }
            if let environment = webhook.environment { try RegistryQueries.requireEnvironment(change.db, environment) }
            if try WebhookQueries.signingKey(change.db) == nil {
                try change.db.cachedStatement(
                    sql: "INSERT INTO webhook_signing_keys (id, public_key, private_sealed, created_at, created_by) VALUES (1, ?, ?, ?, ?)"
                ).execute(arguments: [webhook.signingKey.publicKey, webhook.signingKey.sealedPrivateKey, change.now, change.actor.osUser])
            }
            try change.db.cachedStatement(
                sql: """
                    INSERT INTO webhooks (name, url, events, environment, format, enabled, secret_sealed, created_at, created_by)
                    VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)
                    """
            ).execute(arguments: [
                webhook.name, webhook.url, webhook.events, webhook.environment, webhook.format.rawValue, webhook.sealedSecret,
                change.now, change.actor.osUser,
            ])
            let head = try Int64.fetchOne(change.db, sql: "SELECT coalesce(max(seq), 0) FROM audit_log") ?? 0
            // The add's own row comes after the head: the endpoint's first event.
            try WebhookQueries.setCursor(change.db, webhook.name, to: head)
            var after: [String: AuditJSON] = [
                "url": .string(webhook.url), "events": .string(webhook.events), "format": .string(webhook.format.rawValue),
            ]
            if let environment = webhook.environment { after["environment"] = .string(environment) }
            try change.record(
                AuditEntry(
                    action: .webhookAdd, targetType: "webhook", targetID: webhook.name, environment: webhook.environment,
                    after: .object(after)))
            return ChangeResult(changed: true, "Added the webhook \(webhook.name): events from now on go to \(webhook.url).")
        }
    }

    /// Removes the endpoint `name` and its delivery state: admins. A stop.
    package func removeWebhook(_ name: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.webhookName(name)
        return try change(
            actor, refusal: AuditEntry(action: .webhookRemove, targetType: "webhook", targetID: name),
            requiring: .admin(doing: "remove webhooks")
        ) { change in
            let endpoint = try WebhookQueries.require(change.db, name, now: clock.date())
            try change.db.cachedStatement(sql: "DELETE FROM webhooks WHERE name = ?").execute(arguments: [name])
            try change.db.cachedStatement(sql: "DELETE FROM webhook_deliveries WHERE name = ?").execute(arguments: [name])
            try change.record(
                AuditEntry(action: .webhookRemove, targetType: "webhook", targetID: name, before: .object(["url": .string(endpoint.url)])))
            return ChangeResult(changed: true, "Removed the webhook \(name); nothing more is sent to \(endpoint.url).")
        }
    }

    /// Enables or disables the endpoint `name`: admins, or `plugboard/webhook-delivery` when the endpoint answered 410
    /// Gone. A disabled endpoint keeps its cursor; enabled again, it receives what it missed.
    package func setWebhookEnabled(_ name: String, _ enabled: Bool, reason: String? = nil, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.webhookName(name)
        let action: AuditAction = enabled ? .webhookEnable : .webhookDisable
        let delivery = actor.osUser == Self.webhookDeliveryPrincipal
        return try change(
            actor, refusal: AuditEntry(action: action, targetType: "webhook", targetID: name),
            requiring: delivery ? nil : .admin(doing: enabled ? "enable webhooks" : "disable webhooks")
        ) { change in
            let endpoint = try WebhookQueries.require(change.db, name, now: clock.date())
            guard endpoint.enabled != enabled else {
                return ChangeResult(changed: false, "The webhook \(name) is already \(enabled ? "enabled" : "disabled"); nothing changed.")
            }
            try change.db.cachedStatement(sql: "UPDATE webhooks SET enabled = ? WHERE name = ?").execute(arguments: [enabled, name])
            if enabled { try WebhookQueries.setCursor(change.db, name, to: endpoint.cursor) }
            try change.record(
                AuditEntry(
                    action: action, targetType: "webhook", targetID: name, reason: reason, before: .object(["enabled": .bool(!enabled)]),
                    after: .object(["enabled": .bool(enabled)])))
            return ChangeResult(
                changed: true,
                enabled
                    ? "Enabled the webhook \(name): it receives the events after seq \(endpoint.cursor)."
                    : "Disabled the webhook \(name); its cursor stays at seq \(endpoint.cursor).")
        }
    }

    /// Replaces the endpoint's sealed secret: admins. The audit row says that it changed, never what it is.
    package func rotateWebhookSecret(_ name: String, sealedSecret: Data, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.webhookName(name)
        return try change(
            actor, refusal: AuditEntry(action: .webhookRotateSecret, targetType: "webhook", targetID: name),
            requiring: .admin(doing: "rotate webhook secrets")
        ) { change in
            _ = try WebhookQueries.require(change.db, name, now: clock.date())
            try change.db.cachedStatement(sql: "UPDATE webhooks SET secret_sealed = ? WHERE name = ?").execute(arguments: [
                sealedSecret, name,
            ])
            try change.record(AuditEntry(action: .webhookRotateSecret, targetType: "webhook", targetID: name))
            return ChangeResult(
                changed: true, "Rotated the secret of the webhook \(name); deliveries from now on are signed with the new one.")
        }
    }

    /// Moves the endpoint's cursor back so that it receives the events from `seq` on again: admins.
    package func replayWebhook(_ name: String, from seq: Int64, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.webhookName(name)
        guard seq >= 1 else { throw BoardError(.invalidInput, "--from takes an audit seq of 1 or more") }
        return try change(
            actor, refusal: AuditEntry(action: .webhookReplay, targetType: "webhook", targetID: name),
            requiring: .admin(doing: "replay webhooks")
        ) { change in
            let endpoint = try WebhookQueries.require(change.db, name, now: clock.date())
            try WebhookQueries.setCursor(change.db, name, to: seq - 1)
            try change.record(
                AuditEntry(
                    action: .webhookReplay, targetType: "webhook", targetID: name, before: .object(["cursor": .int(Int(endpoint.cursor))]),
                    after: .object(["cursor": .int(Int(seq - 1))])))
            return ChangeResult(changed: true, "The webhook \(name) receives the events from seq \(seq) on again.")
        }
    }

    // MARK: Reads

    /// Every endpoint, by name.
    package func webhooks() throws(BoardError) -> [WebhookEndpoint] {
        try read { db in try WebhookQueries.endpoints(db, now: clock.date()) }
    }

    /// The endpoint `name`.
    ///
    /// - Throws: `BoardError` with code `notFound` when there is none.
    package func webhook(_ name: String) throws(BoardError) -> WebhookEndpoint {
        try Validate.webhookName(name)
        return try read { db in try WebhookQueries.require(db, name, now: clock.date()) }
    }

    /// The endpoint's secret, sealed: for delivery and `webhook test`, which open it with the master key.
    package func sealedWebhookSecret(_ name: String) throws(BoardError) -> Data {
        try read { db in
            guard let sealed = try WebhookQueries.sealedSecret(db, name) else {
                throw BoardError.notFound("no webhook named '\(Validate.printable(name))'; see plugboard webhook list")
            }
            return sealed
        }
    }

    /// The board's webhook signing key, or nil before the first endpoint is added.
    package func webhookSigningKey() throws(BoardError) -> WebhookSigningKey? {
        try read { db in try WebhookQueries.signingKey(db) }
    }

    /// The principal delivery acts as when it disables an endpoint that answered 410 Gone.
    package static let webhookDeliveryPrincipal = "plugboard/webhook-delivery"
}

extension Board {
    /// Writes a `webhook.test` audit row, which delivery sends to the endpoint `name` only: admins.
    package func testWebhook(_ name: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.webhookName(name)
        return try change(
            actor, refusal: AuditEntry(action: .webhookTest, targetType: "webhook", targetID: name),
            requiring: .admin(doing: "test webhooks")
        ) { change in
            let endpoint = try WebhookQueries.require(change.db, name, now: clock.date())
            try change.record(AuditEntry(action: .webhookTest, targetType: "webhook", targetID: name))
            return ChangeResult(
                changed: true,
                "A test event waits for \(name)\(endpoint.enabled ? "" : " (disabled: enable it to receive it)"); plugboard serve sends it within a second, or run plugboard webhook deliver."
            )
        }
    }
}

extension AuditedChange {
    /// Replaces the sealed secret of every webhook endpoint, and the sealed half of the board's webhook signing key,
    /// with what `reseal` makes of them (the label is the endpoint's name; nil for the signing key): a master-key
    /// rotation, in its own transaction, so that no sealed value stays under the old key. Answers how many it resealed.
    package func resealWebhookSecrets(_ reseal: (_ sealed: Data, _ label: String?) throws -> Data) throws -> Int {
        var count = 0
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT name, secret_sealed FROM webhooks ORDER BY name")) {
            let name: String = row["name"]
            try db.cachedStatement(sql: "UPDATE webhooks SET secret_sealed = ? WHERE name = ?").execute(arguments: [
                try reseal(row["secret_sealed"], name), name,
            ])
            count += 1
        }
        if let key = try WebhookQueries.signingKey(db) {
            try db.cachedStatement(sql: "UPDATE webhook_signing_keys SET private_sealed = ? WHERE id = 1").execute(arguments: [
                try reseal(key.sealedPrivateKey, nil)
            ])
            count += 1
        }
        return count
    }
}
