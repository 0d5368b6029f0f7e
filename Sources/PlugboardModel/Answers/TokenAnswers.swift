import Foundation
import PlugboardFlags
import PlugboardVersioning

/// An API token as people see it: never its secret, never its hash.
public struct APIToken: Sendable, Hashable, Codable {
    /// Whether a token is accepted now.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        case active, expired, revoked
    }

    /// Which routes of `plugboard serve` a token reads.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// The flag routes of SDKs: the Unleash client API (`/api/client/…`) and OFREP (`/ofrep/…`).
        case sdk
        /// The routes of remote hosts (`/api/host/…`).
        case hosts
        /// Both: what every token made before token kinds existed became, so that fleets kept working.
        case sdkAndHosts = "sdk+hosts"

        /// Whether a token of this kind reads SDK routes.
        public var readsFlags: Bool { self != .hosts }
        /// Whether a token of this kind reads host routes.
        public var readsHostRoutes: Bool { self != .sdk }
    }

    /// The token's unique name, for example `checkout-service`.
    public let name: String
    /// The one environment the token reads.
    public let environment: String
    /// Which routes it reads: SDK routes, host routes, or (tokens made before kinds existed) both.
    public let kind: Kind
    /// The first characters of the secret, to recognise it (`*:production.pb_Xy3k…`).
    public let prefix: String
    public let createdAt: String
    public let createdBy: String
    /// When the token stops being accepted; nil for never.
    public let expiresAt: String?
    public let revokedAt: String?
    public let revokedBy: String?
    public let revokeReason: String?
    /// When a server last accepted it (written in batches, so up to a minute late).
    public let lastUsedAt: String?
    /// Active, expired or revoked, now.
    public let state: State

    /// A value with each stored property given.
    package init(
        name: String, environment: String, kind: Kind, prefix: String, createdAt: String, createdBy: String, expiresAt: String?,
        revokedAt: String?, revokedBy: String?, revokeReason: String?, lastUsedAt: String?, state: State
    ) {
        self.name = name
        self.environment = environment
        self.kind = kind
        self.prefix = prefix
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.revokedBy = revokedBy
        self.revokeReason = revokeReason
        self.lastUsedAt = lastUsedAt
        self.state = state
    }
}

/// A person's (or a service's) access token as people see it: never its secret, never its hash.
///
/// A token acts as its ``principal``, with exactly the rights that principal has on the board, or only reads
/// (``readOnly``). Names are unique per principal.
public struct AccessToken: Sendable, Hashable, Codable {
    /// The principal the token acts as: `alice`, `ci-bot@example.com`, later an identity provider's subject.
    public let principal: String
    /// The token's name, unique for its principal (`laptop`, `release-pipeline`).
    public let name: String
    /// The first characters of the secret, to recognise it (`pba_Xy3k…`).
    public let prefix: String
    /// True when the token may only read.
    public let readOnly: Bool
    /// What the token may do with its principal's rights: all of them, or only stop (``AccessTokenScope``).
    public let scope: AccessTokenScope
    public let createdAt: String
    public let createdBy: String
    /// When the token stops being accepted; nil for never.
    public let expiresAt: String?
    public let revokedAt: String?
    public let revokedBy: String?
    public let revokeReason: String?
    /// When a server last accepted it.
    public let lastUsedAt: String?
    /// Whether it is accepted now.
    public let state: APIToken.State

    /// A value with each stored property given.
    package init(
        principal: String, name: String, prefix: String, readOnly: Bool, scope: AccessTokenScope, createdAt: String, createdBy: String,
        expiresAt: String?, revokedAt: String?, revokedBy: String?, revokeReason: String?, lastUsedAt: String?, state: APIToken.State
    ) {
        self.principal = principal
        self.name = name
        self.prefix = prefix
        self.readOnly = readOnly
        self.scope = scope
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.revokedBy = revokedBy
        self.revokeReason = revokeReason
        self.lastUsedAt = lastUsedAt
        self.state = state
    }

    /// The same token in `state`.
    package func inState(_ state: APIToken.State) -> AccessToken {
        AccessToken(
            principal: principal, name: name, prefix: prefix, readOnly: readOnly, scope: scope, createdAt: createdAt,
            createdBy: createdBy, expiresAt: expiresAt, revokedAt: revokedAt, revokedBy: revokedBy, revokeReason: revokeReason,
            lastUsedAt: lastUsedAt, state: state)
    }
}
