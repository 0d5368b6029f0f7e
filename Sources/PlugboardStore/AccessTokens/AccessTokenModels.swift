import Foundation
package import PlugboardModel

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
