/// An error from the board: one sentence that names the thing and says what to do.
///
/// The ``code`` tells a program what kind of failure it is; ``message`` is for people. Messages never
/// contain secrets and never consist of a raw SQLite message alone.
public struct BoardError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable, Hashable, Codable {
        /// The input is malformed or invalid (manifest, id, version, range, JSON, path).
        case invalidInput = "invalid_input"
        /// The thing named does not exist.
        case notFound = "not_found"
        /// The actor is not allowed to do this.
        case notAllowed = "not_allowed"
        /// The change conflicts with the board's state (for example a version that already exists).
        case conflict
        /// The file is not a Plugboard board, or the board cannot be opened.
        case notABoard = "not_a_board"
        /// The board's schema does not match this binary (edited, newer, or pending migrations).
        case schemaMismatch = "schema_mismatch"
        /// An integrity check failed (audit chain, artifact digest, a secret or data key that does not
        /// authenticate).
        case integrity
        /// The master key of the secure storage is missing, unreadable, insecure, or does not belong to the board.
        case masterKey = "master_key"
        /// Reading or writing a file or the database failed.
        case io
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

    public var description: String { message }

    static func invalid(_ message: String) -> BoardError { BoardError(.invalidInput, message) }
    static func notFound(_ message: String) -> BoardError { BoardError(.notFound, message) }
    static func notAllowed(_ message: String) -> BoardError { BoardError(.notAllowed, message) }
    static func conflict(_ message: String) -> BoardError { BoardError(.conflict, message) }
}
