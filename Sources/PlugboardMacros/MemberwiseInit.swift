/// The access level of the initializer ``MemberwiseInit(_:)`` writes.
public enum InitAccess {
    case `public`
    case `package`
    case `internal`
}

/// Writes the memberwise initializer of a struct at the access level given, which Swift synthesizes only as internal:
/// for a value another module makes (the board's answers, made by the store and read by the CLI, the server and the
/// client).
///
/// One parameter a stored property, in the order declared, labelled with its name, as Swift's own: a `let` with a
/// value is left out, a `var` with a value defaults to it, an optional `var` defaults to nil. ``InitDefault(_:)`` gives
/// any property a default.
///
/// ```swift
/// @MemberwiseInit(.public)
/// public struct Token {
///     public let name: String
///     @InitDefault(nil) public let expiresAt: String?
/// }
/// // public init(name: String, expiresAt: String? = nil)
/// ```
@attached(member, names: named(init))
public macro MemberwiseInit(_ access: InitAccess = .internal) =
    #externalMacro(module: "PlugboardMacrosPlugin", type: "MemberwiseInitMacro")

/// The default of a property in the initializer ``MemberwiseInit(_:)`` writes.
@attached(peer)
public macro InitDefault(_ value: Any?) = #externalMacro(module: "PlugboardMacrosPlugin", type: "InitDefaultMacro")
