package import Crypto
package import Foundation

/// Standard Webhooks 1.0 signing: the headers of one delivery.
package enum WebhookSigning {
    /// The three headers of a delivery: `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, which
    /// carries `v1,` HMAC-SHA256 with `secret` and, with a signing key, `v1a,` Ed25519, both over `id.timestamp.body`.
    package static func headers(id: String, timestamp: Int, body: Data, secret: Data, signingKey: Data?) -> [(String, String)] {
        let content = Data("\(id).\(timestamp).".utf8) + body
        let mac = HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: secret))
        var signatures = ["v1," + Data(mac).base64EncodedString()]
        if let signingKey, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: signingKey),
            let signature = try? key.signature(for: content)
        {
            signatures.append("v1a," + signature.base64EncodedString())
        }
        return [
            ("webhook-id", id), ("webhook-timestamp", String(timestamp)), ("webhook-signature", signatures.joined(separator: " ")),
            ("Content-Type", "application/json"),
        ]
    }
}
