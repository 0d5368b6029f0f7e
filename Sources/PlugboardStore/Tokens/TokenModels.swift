import Crypto
package import Foundation
package import PlugboardModel

/// A token just created: the only time its secret exists outside the client that keeps it.
package struct CreatedAPIToken: Sendable {
    /// The stored token.
    package let token: APIToken
    /// The secret to hand to the SDK; the board keeps only its SHA-256.
    package let secret: String
}

/// What a server needs to check a presented token: its digest and whether it is still good. No secret.
package struct APITokenCredential: Sendable, Hashable {
    /// The token's name.
    package let name: String
    /// The environment it reads.
    package let environment: String
    /// Which routes it reads.
    package let kind: APIToken.Kind
    /// The SHA-256 of the secret (32 bytes).
    package let digest: [UInt8]
    /// When it stops being accepted; nil for never.
    package let expiresAt: Date?
    /// Revoked tokens are kept so that a client hears "revoked", not "unknown".
    package let revoked: Bool

    /// A value with each stored property given.
    package init(name: String, environment: String, kind: APIToken.Kind, digest: [UInt8], expiresAt: Date?, revoked: Bool) {
        self.name = name
        self.environment = environment
        self.kind = kind
        self.digest = digest
        self.expiresAt = expiresAt
        self.revoked = revoked
    }

    /// Whether the token is accepted at `now`: not revoked and not expired.
    package func isAccepted(at now: Date) -> Bool {
        !revoked && (expiresAt.map { $0 > now } ?? true)
    }
}

/// Making and hashing token secrets.
package enum APITokenSecret {
    /// A new secret for `environment`: `*:ENV.pb_` followed by 32 random bytes in base64url (43 characters).
    ///
    /// The `*:ENV.` shape is the one Unleash gives its client tokens, so Unleash SDKs read the environment
    /// from it as they do from Unleash's own tokens.
    package static func generate(environment: String) -> String {
        "*:\(environment).pb_" + randomPart()
    }

    /// The stored form of a token's expiry (nil: never); refuses one that is not in the future.
    static func expiry(_ date: Date?) throws(BoardError) -> String? {
        guard let date else { return nil }
        guard date > Date() else {
            throw .invalid("the expiry \(Timestamp.format(date)) is in the past; give a future time or an age such as 90d")
        }
        return Timestamp.format(date)
    }

    /// 32 random bytes in base64url (43 characters): the part of every token secret that is secret.
    package static func randomPart() -> String {
        var generator = SystemRandomNumberGenerator()
        return base64URL((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// The SHA-256 of a presented secret (32 bytes).
    package static func digest(_ secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Compares two digests in time that depends only on their lengths.
    package static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }

    /// The part of a secret shown in listings: its environment and the first 6 characters after `pb_`.
    static func displayPrefix(_ secret: String) -> String {
        guard let range = secret.range(of: ".pb_") else { return String(secret.prefix(8)) + "…" }
        return String(secret[..<range.upperBound]) + String(secret[range.upperBound...].prefix(6)) + "…"
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

extension Validate {
    /// A token name: 1–128 characters of `a-z A-Z 0-9 . _ -`, starting with a letter or digit.
    package static func tokenName(_ name: String) throws(BoardError) {
        let allowed: (UInt8) -> Bool = { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "._-".utf8.contains(byte)
        }
        guard !name.isEmpty, name.utf8.count <= 128, name.utf8.allSatisfy(allowed), let first = name.utf8.first, !"._-".utf8.contains(first)
        else {
            throw .invalid(
                "token name '\(printable(name))' is not valid: use 1-128 characters of letters, digits, '.', '_' and '-' (for example checkout-service)"
            )
        }
    }
}
