public import PlugboardPluginAPI

/// An error thrown while obtaining, parsing or storing a master key.
///
/// The ``message`` names the file or environment variable and says what to do. It never contains key material,
/// not even a malformed key: a key that is one character off is still most of a key.
public struct KeyProviderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure (see `ErrorCode`).
    public typealias Code = ErrorCode<KeyProviderError>

    /// What went wrong.
    public var code: Code
    /// One sentence that names the file or variable and says what to do. Never contains key material.
    public var message: String
    /// The key file concerned, if any.
    public var path: String?

    /// Creates an error. Callers must not put key material in `message`.
    public init(_ code: Code, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// The message.
    public var description: String { message }
}

extension ErrorCode where Domain == KeyProviderError {
    /// The key file or environment variable does not exist.
    public static let notFound = Self(rawValue: "notFound")
    /// The key file can be read or written by its group or by others.
    public static let insecurePermissions = Self(rawValue: "insecurePermissions")
    /// The key file is a symbolic link, which ``KeyFileProvider`` refuses unless told otherwise.
    public static let symbolicLink = Self(rawValue: "symbolicLink")
    /// The key file is not a regular file (a directory, a FIFO, a device).
    public static let notRegularFile = Self(rawValue: "notRegularFile")
    /// The key file belongs to a user other than the current one or root.
    public static let wrongOwner = Self(rawValue: "wrongOwner")
    /// The key is not the base64 encoding of exactly 32 bytes.
    public static let malformed = Self(rawValue: "malformed")
    /// A key file already exists where a new one was to be created.
    public static let alreadyExists = Self(rawValue: "alreadyExists")
    /// Reading or writing the key file failed.
    public static let ioFailure = Self(rawValue: "ioFailure")
    /// A host provider's backend (KMS, keychain) is unavailable.
    public static let unavailable = Self(rawValue: "unavailable")
}
