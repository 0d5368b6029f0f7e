import Foundation
import PlugboardModel

/// A person's (or a service's) access token as people see it: never its secret, never its hash.
///
/// A token acts as its ``principal``, with exactly the rights that principal has on the board, or only reads
/// (``readOnly``). Names are unique per principal.
package struct AccessToken: Sendable, Hashable, Codable {
    /// The principal the token acts as: `alice`, `ci-bot@example.com`, later an identity provider's subject.
    package let principal: String
    /// The token's name, unique for its principal (`laptop`, `release-pipeline`).
    package let name: String
    /// The first characters of the secret, to recognise it (`pba_Xy3k…`).
    package let prefix: String
    /// True when the token may only read.
    package let readOnly: Bool
    package let createdAt: String
    package let createdBy: String
    /// When the token stops being accepted; nil for never.
    package let expiresAt: String?
    package let revokedAt: String?
    package let revokedBy: String?
    package let revokeReason: String?
    /// When a server last accepted it.
    package let lastUsedAt: String?
    /// Whether it is accepted now.
    package let state: APIToken.State

    /// The same token in `state`.
    func inState(_ state: APIToken.State) -> AccessToken {
        AccessToken(
            principal: principal, name: name, prefix: prefix, readOnly: readOnly, createdAt: createdAt, createdBy: createdBy,
            expiresAt: expiresAt, revokedAt: revokedAt, revokedBy: revokedBy, revokeReason: revokeReason, lastUsedAt: lastUsedAt,
            state: state)
    }
}

/// A token just created, with the secret shown once.
package struct CreatedAccessToken: Sendable {
    package let token: AccessToken
    /// The secret: shown once, never stored (the board keeps its SHA-256).
    package let secret: String
}

/// Making access-token secrets: `pba_` followed by 32 random bytes in base64url, so that a leaked one is recognised
/// (secret scanners, logs) and never taken for an SDK token (`*:ENV.pb_…`).
package enum AccessTokenSecret {
    static let marker = "pba_"

    package static func generate() -> String { marker + APITokenSecret.randomPart() }

    static func displayPrefix(_ secret: String) -> String { String(secret.prefix(marker.count + 6)) + "…" }
}
