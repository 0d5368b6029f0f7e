public import Foundation

/// Settings of a board's secure storage: when data keys rotate, and the clock that stamps records.
public struct SecureStorageConfiguration: Sendable {
    /// The default rotation threshold: 2^30 encryptions per data key.
    public static let defaultDataKeyRotationThreshold = 1 << 30
    /// The largest rotation threshold allowed: 2^32, the NIST limit for AES-GCM with random 96-bit nonces.
    public static let maximumDataKeyRotationThreshold = 1 << 32

    /// How many values one data key may seal. Before sealing value number `threshold + 1`, the secure storage
    /// rotates to a new data key. Between 1 and ``maximumDataKeyRotationThreshold``.
    public var dataKeyRotationThreshold: Int
    /// The clock that stamps records.
    public var now: @Sendable () -> Date

    /// Creates a configuration.
    public init(
        dataKeyRotationThreshold: Int = SecureStorageConfiguration.defaultDataKeyRotationThreshold,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.dataKeyRotationThreshold = dataKeyRotationThreshold
        self.now = now
    }
}
