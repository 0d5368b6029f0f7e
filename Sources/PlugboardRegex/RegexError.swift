/// Why a pattern was refused: Unleash's engine would refuse it too, or it is too large to run in linear time.
///
/// The message is one sentence that quotes the pattern, for example
/// `'a{1001}' is not a valid regular expression: a repetition count is over 1000`.
public struct RegexError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The pattern and what is wrong with it, as one sentence.
    public let message: String

    init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
