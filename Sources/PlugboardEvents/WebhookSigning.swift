package import Crypto
package import Foundation

/// Standard Webhooks 1.0 signing: the headers of one delivery.
package enum WebhookSigning {
    /// What is signed: `id.timestamp.body`.
    package static func content(id: String, timestamp: Int, body: Data) -> Data {
        Data("\(id).\(timestamp).".utf8) + body
    }

    /// The `v1a,` Ed25519 signature of `content` with the board's signing key, or nil without a usable key. It is
    /// the same for every endpoint, so it is made once for all of them.
    package static func v1a(_ content: Data, signingKey: Data?) -> String? {
        guard let signingKey, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: signingKey),
            let signature = try? key.signature(for: content)
        else { return nil }
        return "v1a," + signature.base64EncodedString()
    }

    /// The three headers of a delivery: `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, which
    /// carries `v1,` HMAC-SHA256 of `content` with the endpoint's `secret` and, when given, the `v1a` signature.
    package static func headers(id: String, timestamp: Int, content: Data, secret: Data, v1a: String?) -> [(String, String)] {
        let mac = HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: secret))
        let signatures = ["v1," + Data(mac).base64EncodedString()] + (v1a.map { [$0] } ?? [])
        return [
            ("webhook-id", id), ("webhook-timestamp", String(timestamp)), ("webhook-signature", signatures.joined(separator: " ")),
            ("Content-Type", "application/json"),
        ]
    }

    /// The headers of a delivery of `body`, signed now (see ``headers(id:timestamp:content:secret:v1a:)``).
    package static func headers(id: String, timestamp: Int, body: Data, secret: Data, signingKey: Data?) -> [(String, String)] {
        let content = content(id: id, timestamp: timestamp, body: body)
        return headers(id: id, timestamp: timestamp, content: content, secret: secret, v1a: v1a(content, signingKey: signingKey))
    }
}
