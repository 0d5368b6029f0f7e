/// The code of an error: what kind of failure it is, for a program; the error's message is for people.
///
/// One type serves the errors of the plug-in API and of what builds on it (the shape of GRDB's `ResultCode`):
/// ``SecureStorageError/Code`` is `ErrorCode<SecureStorageError>`, secure storage's `KeyProviderError.Code` is
/// `ErrorCode<KeyProviderError>`, and each error type defines its codes as static members of an extension constrained
/// to it. The board's `BoardError.Code` has the same shape in the model, which links no plug-in ABI. The set is open:
/// new codes may be added, so a `switch` over codes needs a `default` case.
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
