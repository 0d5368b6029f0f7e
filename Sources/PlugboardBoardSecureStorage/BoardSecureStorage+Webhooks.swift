package import Foundation
package import PlugboardModel
import PlugboardSecureStorage
package import PlugboardStore

// Webhook endpoints' secrets and the board's webhook signing key, sealed under the master key. The store keeps only the
// sealed bytes; they are opened here, in the process that holds the master key, to sign a delivery.
extension BoardSecureStorage {
    private static let secretPurpose = "webhook secret"
    private static let signingPurpose = "webhook signing key"

    /// `secret` (the key's bytes) sealed for the endpoint `name`.
    package func sealWebhookSecret(_ secret: Data, name: String) -> Data {
        LabelledSeal.seal(secret, purpose: Self.secretPurpose, label: name, with: store.masterKey)
    }

    /// The secret of the endpoint `name`, opened.
    ///
    /// - Throws: `BoardError` with code `integrity` when it does not open (sealed under another master key, or moved
    ///   from another endpoint).
    package func webhookSecret(name: String) throws(BoardError) -> Data {
        let sealed = try board.sealedWebhookSecret(name)
        guard let secret = LabelledSeal.open(sealed, purpose: Self.secretPurpose, label: name, with: store.masterKey) else {
            throw BoardError(
                .integrity,
                "the secret of the webhook \(name) does not open with this master key; rotate it (plugboard webhook rotate-secret \(name))")
        }
        return secret
    }

    /// A new webhook signing key (Ed25519), its private half sealed, for a board that has none yet.
    package func newWebhookSigningKey() -> WebhookSigningKey {
        let key = Curve25519Keys.generate()
        return WebhookSigningKey(
            publicKey: key.publicKey.base64EncodedString(),
            sealedPrivateKey: LabelledSeal.seal(key.privateKey, purpose: Self.signingPurpose, label: "1", with: store.masterKey))
    }

    /// The board's webhook signing key's private half (its 32 raw bytes), opened; nil before the first endpoint.
    package func webhookSigningPrivateKey() throws(BoardError) -> Data? {
        guard let key = try board.webhookSigningKey() else { return nil }
        guard let opened = LabelledSeal.open(key.sealedPrivateKey, purpose: Self.signingPurpose, label: "1", with: store.masterKey) else {
            throw BoardError(.integrity, "the board's webhook signing key does not open with this master key")
        }
        return opened
    }

    /// `sealed` (an endpoint's secret, or with no label the signing key) opened under `oldKey` and sealed again under
    /// `newKey`, for a master-key rotation.
    static func resealWebhookValue(_ sealed: Data, label: String?, from oldKey: MasterKey, to newKey: MasterKey) throws(BoardError) -> Data
    {
        let (purpose, text) = label.map { (secretPurpose, $0) } ?? (signingPurpose, "1")
        guard let plain = LabelledSeal.open(sealed, purpose: purpose, label: text, with: oldKey) else {
            throw BoardError(
                .integrity,
                "\(label.map { "the secret of the webhook \($0)" } ?? "the board's webhook signing key") does not open with the current master key, so the master key was not rotated; remove or rotate it first"
            )
        }
        return LabelledSeal.seal(plain, purpose: purpose, label: text, with: newKey)
    }
}
