public import Foundation

// MARK: - The SPI

/// Encrypted key–value storage that the host gives a plug-in for its secrets.
///
/// A plug-in receives a `SecureStorage` from its host and never creates one. The storage is already bound to the
/// plug-in's own namespace: there is no way to name another plug-in's namespace through this protocol, so a
/// plug-in can read and write only its own values. How values are kept is the host's business. The default host
/// keeps them in the board, encrypted with AES-256-GCM under per-plug-in data keys; another host may use a
/// keychain or a cloud KMS. Tests use `InMemorySecureStorage` from `PlugboardTesting`.
///
/// ## Why the requirements are `async`
///
/// Plug-in code runs in async contexts, and an async protocol lets a host use a backend that really waits
/// (a KMS call, a keychain prompt, a remote vault) without blocking a thread. A host whose backend is synchronous
/// (like the board, where a call is a short SQLite transaction) still conforms. Calling from synchronous code
/// needs a `Task`, which is the usual cost of an async SPI.
///
/// ## Key names
///
/// A key name is 1 to ``SecureStorageLimits/maximumKeyNameByteCount`` bytes of UTF-8 with no control, format or
/// unassigned characters. It is normalised to Unicode NFC, so canonically equivalent names (a precomposed "é" and
/// "e" followed by a combining accent) name the same value. ``SecureStorageLimits/validatedKeyName(_:)`` applies
/// these rules; every conforming type must apply them the same way.
///
/// ## Errors
///
/// Requirements throw ``SecureStorageError``. Its message names the key and the plug-in, and never a value.
///
/// ## Topics
///
/// ### Reading and writing
/// - ``set(_:forKey:)-(Data,_)``
/// - ``data(forKey:)``
/// - ``removeValue(forKey:)``
/// - ``keys()``
///
/// ### Codable values
/// - ``set(_:forKey:)-(T,_)``
/// - ``value(_:forKey:)``
public protocol SecureStorage: Sendable {
    /// Stores `value` under `key`, replacing any value already there.
    ///
    /// - Parameters:
    ///   - value: The bytes to keep secret. At most ``SecureStorageLimits/maximumValueByteCount`` bytes.
    ///   - key: The key name, validated by ``SecureStorageLimits/validatedKeyName(_:)``.
    /// - Throws: ``SecureStorageError`` with code `invalidKeyName`, `valueTooLarge`, `wrongMasterKey` or
    ///   `unavailable`; the value was not stored.
    func set(_ value: Data, forKey key: String) async throws

    /// Returns the value stored under `key`, or `nil` when there is none.
    ///
    /// - Throws: ``SecureStorageError`` with code `integrityFailure` when the stored value was tampered with or
    ///   moved from elsewhere, `keysShredded` when its data key was destroyed, or `invalidKeyName`,
    ///   `wrongMasterKey`, `unavailable`. Never returns wrong data.
    func data(forKey key: String) async throws -> Data?

    /// Removes the value stored under `key`. Removing a key that has no value is not an error.
    ///
    /// - Throws: ``SecureStorageError``; nothing was removed.
    func removeValue(forKey key: String) async throws

    /// Returns the names of all keys that have a value, sorted by their UTF-8 bytes.
    ///
    /// A key whose value can no longer be decrypted (for example after its data key was shredded) is still
    /// listed until it is removed or overwritten.
    func keys() async throws -> [String]
}

extension SecureStorage {
    /// Stores `value` encoded as JSON under `key`.
    ///
    /// A `Data` argument picks the non-generic ``set(_:forKey:)-(Data,_)`` instead and stores the bytes as they are.
    ///
    /// - Throws: ``SecureStorageError`` with code `encodingFailed` if `value` cannot be encoded, or any error of
    ///   ``set(_:forKey:)-(Data,_)``.
    public func set<T: Encodable>(_ value: T, forKey key: String) async throws {
        let data: Data
        do {
            data = try JSONEncoder().encode(value)
        } catch {
            // The underlying EncodingError may quote the value: it is not kept.
            throw SecureStorageError(
                .encodingFailed,
                "the value for key '\(key)' could not be encoded as JSON (type \(T.self)); store a value that encodes"
            )
        }
        try await set(data, forKey: key)
    }

    /// Returns the JSON value stored under `key` decoded as `type`, or `nil` when there is none.
    ///
    /// - Throws: ``SecureStorageError`` with code `decodingFailed` if the stored bytes are not a JSON `T`, or any
    ///   error of ``data(forKey:)``.
    public func value<T: Decodable>(_ type: T.Type, forKey key: String) async throws -> T? {
        guard let data = try await data(forKey: key) else { return nil }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            // The underlying DecodingError may quote part of the secret: it is not kept.
            throw SecureStorageError(
                .decodingFailed,
                "the value for key '\(key)' is not a JSON \(T.self); read it with the type it was stored as"
            )
        }
    }
}

// MARK: - Errors

/// An error thrown by a ``SecureStorage`` or by the host's secret machinery.
///
/// The ``message`` is one sentence that names the thing and says what to do. It never contains a stored value,
/// a plaintext or key material, so it is safe to log and to show.
///
/// Match on ``code``:
///
/// ```swift
/// do {
///     let token = try await storage.data(forKey: "api-token")
/// } catch let error as SecureStorageError where error.code == .keysShredded {
///     // ask the user to sign in again
/// }
/// ```
public struct SecureStorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong (see ``ErrorCode``: an open set of codes).
    public typealias Code = ErrorCode<SecureStorageError>

    /// What went wrong.
    public var code: Code
    /// One sentence that says what went wrong and what to do. Never contains a value or key material.
    public var message: String

    /// Creates an error. Callers must not put values or key material in `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

extension ErrorCode where Domain == SecureStorageError {
    /// The key name breaks the rules of ``SecureStorageLimits/validatedKeyName(_:)``.
    public static let invalidKeyName = Self(rawValue: "invalidKeyName")
    /// The host tried to bind a storage to an invalid plug-in namespace.
    public static let invalidNamespace = Self(rawValue: "invalidNamespace")
    /// The value is larger than ``SecureStorageLimits/maximumValueByteCount``.
    public static let valueTooLarge = Self(rawValue: "valueTooLarge")
    /// A stored value or key failed authentication: it was modified, truncated, or moved from another key,
    /// plug-in or key version. No data is returned in that case, never wrong data.
    public static let integrityFailure = Self(rawValue: "integrityFailure")
    /// The data keys that protected the value were shredded: it can no longer be decrypted.
    public static let keysShredded = Self(rawValue: "keysShredded")
    /// The master key does not belong to this board (its key check value does not match).
    /// Nothing was read or written.
    public static let wrongMasterKey = Self(rawValue: "wrongMasterKey")
    /// The board's secure storage was never initialised with a master key.
    public static let notInitialized = Self(rawValue: "notInitialized")
    /// The backend could not be reached or failed (I/O, database, KMS).
    public static let unavailable = Self(rawValue: "unavailable")
    /// A value could not be encoded to JSON by ``SecureStorage/set(_:forKey:)-(T,_)``.
    public static let encodingFailed = Self(rawValue: "encodingFailed")
    /// A stored value could not be decoded from JSON by ``SecureStorage/value(_:forKey:)``.
    public static let decodingFailed = Self(rawValue: "decodingFailed")
}

// MARK: - Shared rules

/// The rules every ``SecureStorage`` applies to key names and values, kept in one place so that the board,
/// the in-memory fake and any host implementation agree.
public enum SecureStorageLimits {
    /// The longest key name, in UTF-8 bytes after NFC normalisation: 256.
    public static let maximumKeyNameByteCount = 256

    /// The largest value, in bytes: 1 MiB. Secure storage is for secrets (tokens, passwords, small
    /// configuration), not for documents.
    public static let maximumValueByteCount = 1 << 20

    /// Returns `name` normalised to Unicode NFC, or throws if it is not a valid key name.
    ///
    /// A valid name is non-empty, at most ``maximumKeyNameByteCount`` bytes of UTF-8 once normalised, and has
    /// no control characters (C0, DEL, C1), format characters (such as zero-width joiners or bidirectional
    /// overrides), line or paragraph separators, private-use or unassigned code points. Spaces and any printable
    /// Unicode are allowed.
    ///
    /// - Throws: ``SecureStorageError`` with code `SecureStorageError.Code.invalidKeyName`. The message quotes
    ///   the name only when it is printable.
    public static func validatedKeyName(_ name: String) throws(SecureStorageError) -> String {
        switch normalized(name) {
        case .success(let normalized): return normalized
        case .failure(let problem): throw SecureStorageError(.invalidKeyName, "the secure storage key name is not valid: \(problem)")
        }
    }

    /// Returns `id` normalised to NFC, or throws if it cannot name a plug-in namespace.
    ///
    /// Hosts call this when they bind a storage to a plug-in. The rules are those of key names.
    ///
    /// - Throws: ``SecureStorageError`` with code `SecureStorageError.Code.invalidNamespace`.
    public static func validatedNamespace(_ id: String) throws(SecureStorageError) -> String {
        switch normalized(id) {
        case .success(let normalized): return normalized
        case .failure(let problem):
            throw SecureStorageError(.invalidNamespace, "the secure storage namespace (plug-in id) is not valid: \(problem)")
        }
    }

    /// Throws if `value` is larger than ``maximumValueByteCount``.
    ///
    /// - Throws: ``SecureStorageError`` with code `SecureStorageError.Code.valueTooLarge`.
    public static func validateValue(_ value: Data, forKey key: String) throws(SecureStorageError) {
        if value.count > maximumValueByteCount {
            throw SecureStorageError(
                .valueTooLarge,
                "the value for key '\(key)' is \(value.count) bytes; secure storage holds at most \(maximumValueByteCount) bytes a value"
            )
        }
    }

    /// A problem of `name`, as one sentence.
    private struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// `name` normalised to NFC, or what is wrong with it.
    ///
    /// A name of printable ASCII only (the usual case: ids like `com.example.sync`, keys like `api-token`) is already
    /// NFC and has no forbidden character, so it is checked byte by byte; any other name takes the general path.
    private static func normalized(_ name: String) -> Result<String, Problem> {
        if name.isEmpty { return .failure(Problem(description: "it is empty")) }
        let printableASCII =
            name.utf8.withContiguousStorageIfAvailable { $0.allSatisfy { (0x20...0x7E).contains($0) } }
            ?? name.utf8.allSatisfy { (0x20...0x7E).contains($0) }
        if printableASCII { return checkingLength(name) }
        for scalar in name.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
                let code = String(scalar.value, radix: 16, uppercase: true)
                return .failure(
                    Problem(
                        description:
                            "it contains the non-printable character U+\(String(repeating: "0", count: max(0, 4 - code.count)))\(code)"))
            default:
                continue
            }
        }
        return checkingLength(name.precomposedStringWithCanonicalMapping)
    }

    private static func checkingLength(_ normalized: String) -> Result<String, Problem> {
        let count = normalized.utf8.count
        guard count <= maximumKeyNameByteCount else {
            return .failure(Problem(description: "it is \(count) bytes long, more than the \(maximumKeyNameByteCount) allowed"))
        }
        return .success(normalized)
    }
}
