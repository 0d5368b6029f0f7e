import Crypto
import Foundation
import PlugboardPluginAPI

/// A plug-in's data key (DEK) in the clear, bound to the plug-in and the version it was created as.
///
/// A data key exists unwrapped only in memory, for the span of one operation. Its `description` and `dump` never
/// show its bytes.
struct DataKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The plug-in that owns the key.
    let pluginID: String
    /// The key's version, from 1.
    let version: Int
    let key: SymmetricKey

    init(pluginID: String, version: Int, key: SymmetricKey) {
        precondition(version >= 1, "data key versions start at 1")
        self.pluginID = pluginID
        self.version = version
        self.key = key
    }

    /// Returns a new random 256-bit data key for `pluginID` at `version`.
    static func generate(pluginID: String, version: Int) -> DataKey {
        DataKey(pluginID: pluginID, version: version, key: SymmetricKey(size: .bits256))
    }

    /// `DataKey(<redacted>, plugin: …, version: …)`.
    var description: String { "DataKey(<redacted>, plugin: \(pluginID), version: \(version))" }
    /// Same as ``description``.
    var debugDescription: String { description }
    /// A mirror that shows the plug-in and the version, never the key.
    var customMirror: Mirror {
        Mirror(self, children: ["pluginID": pluginID, "version": version], displayStyle: .struct)
    }
}

/// The envelope-encryption primitives: wrapping data keys under the master key, and sealing values under a data
/// key. All use AES-256-GCM with a fresh random 96-bit nonce and associated data that binds the ciphertext to its
/// place.
///
/// ## Byte formats (version 1)
///
/// Associated data is a sequence of fields, each a 4-byte big-endian length followed by that many bytes, so that
/// no two different field lists encode to the same bytes (`"a|b" + "c"` differs from `"a" + "b|c"`). Strings are
/// UTF-8 (key names and plug-in ids NFC-normalised by the caller); versions are 8-byte big-endian unsigned
/// integers.
///
/// | what | bytes |
/// |---|---|
/// | data key AAD | field(`"plugboard/dek/v1"`) ‖ field(plug-in id) ‖ field(version) |
/// | value AAD | field(`"plugboard/value/v1"`) ‖ field(plug-in id) ‖ field(key name) ‖ field(data key version) |
/// | wrapped data key | `0x01` ‖ nonce (12) ‖ ciphertext (32) ‖ tag (16) — 61 bytes |
/// | sealed value | `0x01` ‖ nonce (12) ‖ ciphertext (as long as the value) ‖ tag (16) |
///
/// Data keys are wrapped with the master key's wrapping key (HKDF-SHA256 of the master key, see ``MasterKey``).
/// Opening anything that was modified, truncated, or moved to another plug-in, key name or version throws
/// `SecureStorageError` with code `integrityFailure`; it never returns wrong data.
enum Envelope {
    /// The format byte that starts wrapped keys and sealed values.
    static let formatVersion: UInt8 = 1
    /// The AES-GCM nonce length: 12 bytes.
    static let nonceByteCount = 12
    /// The AES-GCM tag length: 16 bytes.
    static let tagByteCount = 16
    /// The length of a wrapped data key: 61 bytes.
    static let wrappedKeyByteCount = 1 + nonceByteCount + 32 + tagByteCount

    static let dataKeyLabel = Data("plugboard/dek/v1".utf8)
    static let valueLabel = Data("plugboard/value/v1".utf8)

    // MARK: Associated data

    /// The associated data that binds a wrapped data key to its plug-in and version.
    static func dataKeyAssociatedData(pluginID: String, version: Int) -> Data {
        var fields = Fields(capacity: 3 * 4 + dataKeyLabel.count + pluginID.utf8.count + 8)
        fields.append(dataKeyLabel)
        fields.append(pluginID.utf8)
        fields.append(version: version)
        return fields.bytes
    }

    /// The associated data that binds a sealed value to its plug-in, key name and data key version.
    static func valueAssociatedData(pluginID: String, key: String, dataKeyVersion: Int) -> Data {
        var fields = Fields(capacity: 4 * 4 + valueLabel.count + pluginID.utf8.count + key.utf8.count + 8)
        fields.append(valueLabel)
        fields.append(pluginID.utf8)
        fields.append(key.utf8)
        fields.append(version: dataKeyVersion)
        return fields.bytes
    }

    // MARK: Data keys

    /// Wraps (encrypts) `dataKey` under `masterKey`, bound to the data key's plug-in and version.
    static func wrap(_ dataKey: DataKey, under masterKey: MasterKey) -> Data {
        let aad = dataKeyAssociatedData(pluginID: dataKey.pluginID, version: dataKey.version)
        return dataKey.key.withUnsafeBytes { raw in
            seal(raw, using: masterKey.wrappingKey, authenticating: aad)
        }
    }

    /// Unwraps a data key of `pluginID` at `version`.
    ///
    /// - Throws: `SecureStorageError` with code `integrityFailure` if `wrapped` was not made
    ///   by ``wrap(_:under:)`` for this plug-in and version under this master key, or was altered in any way.
    static func unwrap(
        _ wrapped: Data, pluginID: String, version: Int, under masterKey: MasterKey
    ) throws(SecureStorageError) -> DataKey {
        // Made only when it is thrown (the message is built from strings).
        func failure() -> SecureStorageError {
            SecureStorageError(
                .integrityFailure,
                "data key version \(version) of plug-in \(pluginID) failed its integrity check: it was altered, moved from another plug-in or version, or wrapped under another master key"
            )
        }
        let aad = dataKeyAssociatedData(pluginID: pluginID, version: version)
        guard version >= 1, wrapped.count == wrappedKeyByteCount,
            var bytes = open(wrapped, using: masterKey.wrappingKey, authenticating: aad)
        else { throw failure() }
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        guard bytes.count == 32 else { throw failure() }
        return DataKey(pluginID: pluginID, version: version, key: SymmetricKey(data: bytes))
    }

    // MARK: Values

    /// Seals `value` stored under `key` with `dataKey`, bound to the data key's plug-in and version and to `key`.
    static func seal(_ value: Data, forKey key: String, with dataKey: DataKey) -> Data {
        let aad = valueAssociatedData(pluginID: dataKey.pluginID, key: key, dataKeyVersion: dataKey.version)
        return seal(value, using: dataKey.key, authenticating: aad)
    }

    /// Opens a value sealed under `key` with `dataKey`.
    ///
    /// - Throws: `SecureStorageError` with code `integrityFailure` if `sealed` was altered
    ///   or was sealed for another key name, plug-in or data key version.
    /// Takes `sealed`: its bytes are released once the sealed box holds its own copy, before the plaintext is made,
    /// so that a large value is in memory twice at most, not three times.
    static func open(_ sealed: consuming Data, forKey key: String, with dataKey: DataKey) throws(SecureStorageError)
        -> Data
    {
        let aad = valueAssociatedData(pluginID: dataKey.pluginID, key: key, dataKeyVersion: dataKey.version)
        guard let value = open(sealed, using: dataKey.key, authenticating: aad) else {
            throw SecureStorageError(
                .integrityFailure,
                "the value for key '\(key)' of plug-in \(dataKey.pluginID) failed its integrity check (it was altered, or moved from another key, plug-in or data key version); remove it or set it again"
            )
        }
        return value
    }

    // MARK: Internals

    /// `0x01 ‖ nonce ‖ ciphertext ‖ tag`.
    private static func seal(_ plaintext: some DataProtocol, using key: SymmetricKey, authenticating aad: Data) -> Data {
        // AES-GCM with a 256-bit key, a random 12-byte nonce and in-memory data cannot fail.
        let box = try! AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: aad)
        return Data([formatVersion]) + box.combined!
    }

    /// Opens `0x01 ‖ nonce ‖ ciphertext ‖ tag`; `nil` on any failure.
    private static func open(_ sealed: consuming Data, using key: SymmetricKey, authenticating aad: Data) -> Data? {
        guard sealed.count >= 1 + nonceByteCount + tagByteCount, sealed.first == formatVersion else { return nil }
        guard let box = try? AES.GCM.SealedBox(combined: sealed[(sealed.startIndex + 1)...]) else { return nil }
        sealed = Data()
        return try? AES.GCM.open(box, using: key, authenticating: aad)
    }

    /// Associated data being encoded: each field a 4-byte big-endian length, then its bytes, into one buffer.
    private struct Fields {
        private var buffer: [UInt8] = []

        init(capacity: Int) {
            buffer.reserveCapacity(capacity)
        }

        var bytes: Data { Data(buffer) }

        mutating func append(_ field: Data) {
            appendBigEndian(UInt64(UInt32(field.count)), byteCount: 4)  // a field past 4 GiB traps, never wraps
            buffer.append(contentsOf: field)
        }

        mutating func append(_ field: String.UTF8View) {
            appendBigEndian(UInt64(UInt32(field.count)), byteCount: 4)  // a field past 4 GiB traps, never wraps
            buffer.append(contentsOf: field)
        }

        /// A version as an 8-byte field. Versions are >= 1; a bad one read from a tampered record still encodes
        /// (and then fails to open).
        mutating func append(version: Int) {
            appendBigEndian(8, byteCount: 4)
            appendBigEndian(UInt64(bitPattern: Int64(version)), byteCount: 8)
        }

        private mutating func appendBigEndian(_ value: UInt64, byteCount: Int) {
            for index in (0..<byteCount).reversed() {
                buffer.append(UInt8(truncatingIfNeeded: value >> (UInt64(index) * 8)))
            }
        }
    }
}
