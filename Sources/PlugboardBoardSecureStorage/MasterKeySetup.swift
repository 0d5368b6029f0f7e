public import PlugboardSecureStorage

/// What ``BoardSecureStorage/initialize(board:by:environment:configuration:)`` did.
public struct MasterKeySetup: Sendable, Hashable {
    /// Where the master key is.
    public let source: MasterKeySource
    /// The key's non-secret ``/PlugboardSecureStorage/MasterKey/identifier``.
    public let keyID: String
    /// Whether a new key file was created (else an existing key file or the environment variable was used).
    public let createdKeyFile: Bool
    /// Whether the board's key check value was stored now (else the storage was already initialised).
    public let changed: Bool
}
