package import PlugboardSecureStorage

/// What ``BoardSecureStorage/initialize(board:by:environment:configuration:)`` did.
package struct MasterKeySetup: Sendable, Hashable {
    /// Where the master key is.
    package let source: MasterKeySource
    /// The key's non-secret ``/PlugboardSecureStorage/MasterKey/identifier``.
    package let keyID: String
    /// Whether a new key file was created (else an existing key file or the environment variable was used).
    package let createdKeyFile: Bool
    /// Whether the board's key check value was stored now (else the storage was already initialised).
    package let changed: Bool
}
