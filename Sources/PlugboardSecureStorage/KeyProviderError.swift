/// An error thrown while obtaining, parsing or storing a master key.
///
/// The ``message`` names the file or environment variable and says what to do. It never contains key material,
/// not even a malformed key: a key that is one character off is still most of a key.
public struct KeyProviderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong. New codes may be added: a `switch` over codes needs a `default` case.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case notFound, insecurePermissions, symbolicLink, notRegularFile, wrongOwner, malformed,
                alreadyExists, ioFailure, unavailable
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The key file or environment variable does not exist.
        public static let notFound = Code(.notFound)
        /// The key file can be read or written by its group or by others.
        public static let insecurePermissions = Code(.insecurePermissions)
        /// The key file is a symbolic link, which ``KeyFileProvider`` refuses unless told otherwise.
        public static let symbolicLink = Code(.symbolicLink)
        /// The key file is not a regular file (a directory, a FIFO, a device).
        public static let notRegularFile = Code(.notRegularFile)
        /// The key file belongs to a user other than the current one or root.
        public static let wrongOwner = Code(.wrongOwner)
        /// The key is not the base64 encoding of exactly 32 bytes.
        public static let malformed = Code(.malformed)
        /// A key file already exists where a new one was to be created.
        public static let alreadyExists = Code(.alreadyExists)
        /// Reading or writing the key file failed.
        public static let ioFailure = Code(.ioFailure)
        /// A host provider's backend (KMS, keychain) is unavailable.
        public static let unavailable = Code(.unavailable)

        /// The code's name, for example `insecurePermissions`.
        public var description: String { base.rawValue }
    }

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
