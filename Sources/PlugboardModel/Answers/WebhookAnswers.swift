import Foundation

/// The shape of the events an endpoint receives.
public enum WebhookFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// Standard Webhooks JSON: the audit row with its place in the hash chain.
    case standard
    /// A Slack incoming webhook's message, in blocks.
    case slack
    /// A Microsoft Teams message with an Adaptive Card.
    case teams
    /// A Datadog Events API event.
    case datadog
}

/// A webhook endpoint of the board: where events go, which ones, and how far delivery got.
public struct WebhookEndpoint: Sendable, Hashable, Codable {
    /// Its name, unique in the board.
    public let name: String
    /// Where events are posted (`https://…`).
    public let url: String
    /// The actions it receives: patterns separated by commas (`plugin.kill,change.*`), or `*` for every action.
    public let events: String
    /// The only environment whose events it receives (events of no environment are sent too); nil for every one.
    public let environment: String?
    public let format: WebhookFormat
    /// Whether delivery sends to it.
    public let enabled: Bool
    /// The last audit `seq` it acknowledged: events after it are waiting.
    public let cursor: Int64
    /// The attempts made for the event it waits on.
    public let attempts: Int
    /// When the next attempt is due, if one failed.
    public let nextAttemptAt: String?
    /// Since when attempts have failed without a success between them.
    public let failingSince: String?
    /// Whether it has been failing for a day or more.
    public let failing: Bool
    /// The status of the last attempt's answer (0 when none came).
    public let lastStatus: Int?
    /// Why the last attempt failed, in one sentence.
    public let lastError: String?
    public let createdAt: String
    public let createdBy: String

    /// A value with each stored property given.
    package init(
        name: String, url: String, events: String, environment: String?, format: WebhookFormat, enabled: Bool, cursor: Int64, attempts: Int,
        nextAttemptAt: String?, failingSince: String?, failing: Bool, lastStatus: Int?, lastError: String?, createdAt: String,
        createdBy: String
    ) {
        self.name = name
        self.url = url
        self.events = events
        self.environment = environment
        self.format = format
        self.enabled = enabled
        self.cursor = cursor
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.failingSince = failingSince
        self.failing = failing
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAt = createdAt
        self.createdBy = createdBy
    }

    /// Whether the audit action `action` in `environment` is one it receives.
    public func receives(action: String, environment eventEnvironment: String?) -> Bool {
        if let environment, let eventEnvironment, environment != eventEnvironment { return false }
        return WebhookEndpoint.matches(events: events, action: action)
    }

    /// Whether `action` matches one of the comma-separated `events` patterns: `*`, an exact action, or `group.*`.
    public static func matches(events: String, action: String) -> Bool {
        events.split(separator: ",").contains { pattern in
            let pattern = pattern.trimmingCharacters(in: .whitespaces)
            if pattern == "*" { return true }
            if pattern.hasSuffix(".*") { return action.hasPrefix(pattern.dropLast()) }
            return pattern == action
        }
    }
}

/// A new endpoint, or one whose secret was rotated: the secret, shown this once.
public struct WebhookSecret: Sendable, Hashable, Codable {
    /// The endpoint.
    public let name: String
    /// `whsec_` and the base64 of the key that signs its deliveries (`v1`, HMAC-SHA256): keep it with the receiver.
    public let secret: String
    /// The board's webhook signing key's public half (Ed25519, base64), which signs every delivery (`v1a`).
    public let publicKey: String
    /// One sentence for people.
    public let message: String

    /// A value with each stored property given.
    package init(name: String, secret: String, publicKey: String, message: String) {
        self.name = name
        self.secret = secret
        self.publicKey = publicKey
        self.message = message
    }
}

/// One endpoint and the key receivers pin: what `webhook show` answers.
public struct WebhookDetail: Sendable, Hashable, Codable {
    public let endpoint: WebhookEndpoint
    /// The board's webhook signing key's public half (Ed25519, base64); nil until the first endpoint is added.
    public let publicKey: String?
    /// The board's id: the first half of every `webhook-id` (`BOARD:SEQ`).
    public let boardID: String

    /// A value with each stored property given.
    package init(endpoint: WebhookEndpoint, publicKey: String?, boardID: String) {
        self.endpoint = endpoint
        self.publicKey = publicKey
        self.boardID = boardID
    }
}

/// What one pass of delivery did.
public struct WebhookDeliveryReport: Sendable, Hashable, Codable {
    /// Events acknowledged by their endpoints.
    public let delivered: Int
    /// Attempts that failed (each to be retried on its schedule, unless the endpoint was disabled).
    public let failed: Int
    /// One line per endpoint.
    public let endpoints: [String]

    /// A value with each stored property given.
    package init(delivered: Int, failed: Int, endpoints: [String]) {
        self.delivered = delivered
        self.failed = failed
        self.endpoints = endpoints
    }
}
