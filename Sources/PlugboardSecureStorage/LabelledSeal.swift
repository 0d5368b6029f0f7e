import Crypto
package import Foundation

/// Small values sealed directly under the master key, each bound to a label (a webhook's secret, the board's webhook
/// signing key): AES-256-GCM with a key derived from the master key by HKDF-SHA256 for `purpose`, and the label as
/// associated data, so that a sealed value copied to another label does not open.
///
/// A sealed value is one version byte (1), then the nonce, the ciphertext and the tag.
package enum LabelledSeal {
    /// Seals `plaintext` for `label`.
    package static func seal(_ plaintext: Data, purpose: String, label: String, with masterKey: MasterKey) -> Data {
        let key = derived(masterKey, purpose: purpose)
        // AES-GCM sealing with a fresh random nonce cannot fail for a 256-bit key.
        let box = try! AES.GCM.seal(plaintext, using: key, authenticating: Data(label.utf8))
        return Data([1]) + box.combined!
    }

    /// Opens `sealed` for `label`, or nil when it was not sealed for that label under this master key.
    package static func open(_ sealed: Data, purpose: String, label: String, with masterKey: MasterKey) -> Data? {
        guard sealed.first == 1, let box = try? AES.GCM.SealedBox(combined: sealed.dropFirst()) else { return nil }
        return try? AES.GCM.open(box, using: derived(masterKey, purpose: purpose), authenticating: Data(label.utf8))
    }

    private static func derived(_ masterKey: MasterKey, purpose: String) -> SymmetricKey {
        let input = masterKey.withUnsafeBytes { SymmetricKey(data: Data($0)) }
        return HKDF<SHA256>.deriveKey(
            inputKeyMaterial: input, info: Data("plugboard \(purpose) v1".utf8), outputByteCount: 32)
    }
}

/// Ed25519 key pairs as raw bytes.
package enum Curve25519Keys {
    /// A new key pair: the 32-byte private key and the 32-byte public key.
    package static func generate() -> (privateKey: Data, publicKey: Data) {
        let key = Curve25519.Signing.PrivateKey()
        return (key.rawRepresentation, key.publicKey.rawRepresentation)
    }
}
