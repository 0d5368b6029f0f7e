public import Crypto
public import Foundation

/// The board's master key: the key-encryption key (KEK) that wraps every plug-in's data keys.
///
/// A master key is 32 random bytes. It never encrypts a value itself: two keys are derived from it with
/// HKDF-SHA256, one that wraps data keys with AES-256-GCM and one that computes the ``keyCheckValue`` stored in
/// the board, so that a wrong master key is recognised before anything is read or written.
///
/// The key's bytes never appear in its `description`, `debugDescription` or `dump`: all three show
/// `MasterKey(<redacted>, id: …)` with the non-secret ``identifier``.
///
/// ```swift
/// let key = try MasterKey(base64Encoded: ProcessInfo.processInfo.environment["PLUGBOARD_MASTER_KEY"] ?? "")
/// print(key)   // MasterKey(<redacted>, id: 3f9c0e1d2b7a4c55)
/// ```
public struct MasterKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The length of a master key in bytes: 32.
    public static let byteCount = 32

    /// The format version, first byte of ``keyCheckValue``.
    static let keyCheckFormat: UInt8 = 1
    /// HKDF `info` of the key that wraps data keys.
    static let wrappingKeyInfo = Data("plugboard/kek/wrap/v1".utf8)
    /// HKDF `info` of the key that computes the key check value.
    static let checkKeyInfo = Data("plugboard/kek/check/v1".utf8)
    /// The fixed message authenticated by the key check value.
    static let keyCheckLabel = Data("plugboard/key-check/v1".utf8)

    /// The raw KEK. Only ever used as HKDF input key material.
    private let key: SymmetricKey
    /// AES-256-GCM key that wraps data keys: HKDF-SHA256(master, salt: none, info: "plugboard/kek/wrap/v1").
    let wrappingKey: SymmetricKey

    /// The key check value stored in the board: 33 bytes, `0x01` followed by
    /// HMAC-SHA256(key: HKDF-SHA256(master, salt: none, info: "plugboard/kek/check/v1"),
    /// message: "plugboard/key-check/v1").
    ///
    /// It tells whether a master key belongs to a board without revealing anything about the key (it is a PRF
    /// output, neither the key nor a plain hash of it).
    public let keyCheckValue: Data

    /// A short non-secret fingerprint of the key: the first 8 bytes of the key check value's MAC, as 16 lowercase
    /// hexadecimal digits. Safe to log and to show, to tell keys apart.
    public var identifier: String {
        Self.identifier(ofKeyCheckValue: keyCheckValue) ?? "unknown"
    }

    /// Creates a master key from exactly 32 bytes.
    ///
    /// - Throws: ``KeyProviderError`` with code `KeyProviderError.Code.malformed` if `bytes` is not 32 bytes
    ///   long. The message gives the length, never the bytes.
    public init(bytes: some ContiguousBytes) throws(KeyProviderError) {
        try self.init(SymmetricKey(data: bytes))
    }

    /// Creates a master key from a 256-bit `SymmetricKey`.
    ///
    /// - Throws: ``KeyProviderError`` with code `KeyProviderError.Code.malformed` if the key is not 256 bits.
    public init(_ key: SymmetricKey) throws(KeyProviderError) {
        guard key.bitCount == Self.byteCount * 8 else {
            throw KeyProviderError(
                .malformed,
                "a master key must be \(Self.byteCount) bytes long; this one is \(key.bitCount / 8) bytes"
            )
        }
        self.key = key
        self.wrappingKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, info: Self.wrappingKeyInfo, outputByteCount: Self.byteCount)
        let checkKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, info: Self.checkKeyInfo, outputByteCount: Self.byteCount)
        let mac = HMAC<SHA256>.authenticationCode(for: Self.keyCheckLabel, using: checkKey)
        self.keyCheckValue = Data([Self.keyCheckFormat]) + Data(mac)
    }

    /// Creates a master key from the base64 encoding of 32 bytes, ignoring surrounding white space.
    ///
    /// This is the format of the key file and of `PLUGBOARD_MASTER_KEY`
    /// (`openssl rand -base64 32` prints one).
    ///
    /// - Parameters:
    ///   - text: The base64 text.
    ///   - source: Names where the text came from, for the error message (for example
    ///     `"The environment variable PLUGBOARD_MASTER_KEY"`). The text itself is never quoted.
    /// - Throws: ``KeyProviderError`` with code `KeyProviderError.Code.malformed`.
    public init(base64Encoded text: String, source: String = "The master key") throws(KeyProviderError) {
        var bytes = Array(text.utf8)
        defer { wipe(&bytes) }
        try self.init(base64EncodedUTF8: bytes, source: source)
    }

    /// Parses base64 text given as UTF-8 bytes; the caller wipes `text`.
    init(base64EncodedUTF8 text: [UInt8], source: String) throws(KeyProviderError) {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let start = text.firstIndex { !isSpace($0) } ?? text.endIndex
        let end = text.lastIndex { !isSpace($0) }.map { $0 + 1 } ?? start
        guard start < end else {
            throw KeyProviderError(
                .malformed,
                "\(source) is empty; it must be the base64 encoding of \(Self.byteCount) random bytes (for example the output of openssl rand -base64 32)"
            )
        }
        guard var decoded = Data(base64Encoded: Data(text[start..<end])) else {
            throw KeyProviderError(
                .malformed,
                "\(source) is not valid base64; it must be the base64 encoding of \(Self.byteCount) random bytes (for example the output of openssl rand -base64 32)"
            )
        }
        defer { decoded.resetBytes(in: 0..<decoded.count) }
        guard decoded.count == Self.byteCount else {
            throw KeyProviderError(
                .malformed,
                "\(source) decodes to \(decoded.count) bytes; a master key is exactly \(Self.byteCount) bytes (for example the output of openssl rand -base64 32)"
            )
        }
        try self.init(bytes: decoded)
    }

    /// Returns a new master key of 32 bytes from the system's secure random generator.
    public static func generate() -> MasterKey {
        // A 256-bit key always passes the length check.
        try! MasterKey(SymmetricKey(size: .bits256))
    }

    /// Calls `body` with the key's raw bytes, for a provider that must store a new key (a key file, a keychain).
    ///
    /// Do not copy the bytes anywhere else, and never log them.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try key.withUnsafeBytes(body)
    }

    /// Tells, in constant time, whether `value` is this key's ``keyCheckValue``.
    public func matches(keyCheckValue value: Data) -> Bool {
        guard value.count == keyCheckValue.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(value, keyCheckValue) { difference |= a ^ b }
        return difference == 0
    }

    /// The ``identifier`` a key check value stands for, or `nil` if `value` is not a key check value.
    public static func identifier(ofKeyCheckValue value: Data) -> String? {
        guard value.count == 1 + SHA256.byteCount, value.first == keyCheckFormat else { return nil }
        return value.dropFirst().prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 0x10 ? "0" + hex : hex
        }.joined()
    }

    /// Compares two keys in constant time.
    public static func == (lhs: MasterKey, rhs: MasterKey) -> Bool {
        lhs.key == rhs.key
    }

    /// `MasterKey(<redacted>, id: …)`: never the key.
    public var description: String { "MasterKey(<redacted>, id: \(identifier))" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror without children, so that `dump` and debuggers show no key material.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
