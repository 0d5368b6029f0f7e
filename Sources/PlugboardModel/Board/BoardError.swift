/// An error from the board: one sentence that names the thing and says what to do.
///
/// The ``code`` tells a program what kind of failure it is; ``message`` is for people. Messages never contain
/// secrets and never consist of a raw SQLite message alone. It has the shape and the message style of the
/// secure storage's `SecureStorageError` and `KeyProviderError` (a code, one lower-case sentence without a final
/// period), so that no layer rewrites another's messages: a layer may choose another code, never another wording.
public struct BoardError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, for a program: the board's own code type, of the shape of the plug-in API's `ErrorCode`
    /// (the model links no plug-in ABI). The set is open: new codes may be added, so a `switch` over codes needs a
    /// `default` case.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The code's name, for example `notFound`.
        public let rawValue: String

        /// A code named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code's name.
        public var description: String { rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// One readable sentence.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    package static func invalid(_ message: String) -> BoardError { BoardError(.invalidInput, message) }
    package static func notFound(_ message: String) -> BoardError { BoardError(.notFound, message) }
    package static func notAllowed(_ message: String) -> BoardError { BoardError(.notAllowed, message) }
    package static func conflict(_ message: String) -> BoardError { BoardError(.conflict, message) }
}

extension BoardError.Code {
    /// The input is malformed or invalid (manifest, id, version, range, JSON, path).
    public static let invalidInput = Self(rawValue: "invalidInput")
    /// The thing named does not exist.
    public static let notFound = Self(rawValue: "notFound")
    /// Whoever asked is not allowed to do this.
    public static let notAllowed = Self(rawValue: "notAllowed")
    /// The change conflicts with the board's state (for example a version that already exists).
    public static let conflict = Self(rawValue: "conflict")
    /// The file is not a Plugboard board, or the board cannot be opened.
    public static let notABoard = Self(rawValue: "notABoard")
    /// The board's schema does not match this binary (edited, newer, or pending migrations).
    public static let schemaMismatch = Self(rawValue: "schemaMismatch")
    /// An integrity check failed (audit chain, artifact digest, a secret or data key that does not authenticate).
    public static let integrity = Self(rawValue: "integrity")
    /// The master key of the secure storage is missing, unreadable, insecure, or does not belong to the board.
    public static let masterKey = Self(rawValue: "masterKey")
    /// Reading or writing a file or the database failed.
    public static let io = Self(rawValue: "io")
}
