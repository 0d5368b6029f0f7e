/// The error this module throws: a features JSON it cannot decode, a feature set strict validation refuses, or a
/// line of batch input it cannot read.
///
/// ``code`` says which kind of problem it is, ``message`` what and where, in one sentence that names the flag and
/// the field (or the line), for example
/// `flag 'checkout' (features[3]) strategy 1 constraint 2: missing required key 'operator'`. Codes are an open
/// set, compared with their static members (`error.code == .malformedFeatures`); a later version may add codes.
public struct FlagsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure: an open set of names, compared with its static members. It has the shape of the plug-in
    /// API's `ErrorCode` that the other modules' errors use; the evaluator links no plug-in API, so it declares its own.
    public struct Code: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
        /// The code's name, for example `malformed-features`.
        public let rawValue: String

        /// A code named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The code's name.
        public var description: String { rawValue }
    }

    /// The kind of problem.
    public var code: Code
    /// What is wrong and where, as one sentence (one line per problem for `Code.invalidFeatures`).
    public var message: String
    /// The 1-based line of the batch input, for `Code.malformedRequest`.
    public var lineNumber: Int?
    /// Every error and warning strict validation found, for `Code.invalidFeatures`.
    public var validation: FlagValidationReport?

    /// Creates an error.
    public init(_ code: Code, _ message: String, lineNumber: Int? = nil, validation: FlagValidationReport? = nil) {
        self.code = code
        self.message = message
        self.lineNumber = lineNumber
        self.validation = validation
    }

    /// The message, after `line N: ` when the error is about a line of input.
    public var description: String { lineNumber.map { "line \($0): \(message)" } ?? message }
}

extension FlagsError.Code {
    /// The features JSON is not valid JSON, or a field has the wrong shape.
    public static let malformedFeatures = Self(rawValue: "malformed-features")
    /// The features decoded, but strict validation refused them; ``FlagsError/validation`` has every problem.
    public static let invalidFeatures = Self(rawValue: "invalid-features")
    /// A line of batch input is not a request; ``FlagsError/lineNumber`` says which line.
    public static let malformedRequest = Self(rawValue: "malformed-request")
}
