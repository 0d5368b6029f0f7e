/// The code of an error: what kind of failure it is, for a program; the error's message is for people.
///
/// One type serves every Plugboard error (the shape of GRDB's `ResultCode`): ``SecureStorageError/Code`` is
/// `ErrorCode<SecureStorageError>`, the board's `BoardError.Code` is `ErrorCode<BoardError>`, and each error type
/// defines its codes as static members of an extension constrained to it. The set is open: new codes may be added, so a
/// `switch` over codes needs a `default` case.
///
/// ```swift
/// extension ErrorCode where Domain == MyError {
///     public static let notFound = ErrorCode(rawValue: "notFound")
/// }
/// ```
public struct ErrorCode<Domain>: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    /// The code's name, for example `notFound`.
    public let rawValue: String

    /// A code named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The code's name.
    public var description: String { rawValue }
}
