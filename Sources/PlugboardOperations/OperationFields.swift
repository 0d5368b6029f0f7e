public import ArgumentParser
public import PlugboardModel
import PlugboardStore
public import PlugboardVersioning

/// A value of an operation's field, validated once, in its initializer: a value that exists is valid. Read from the
/// command line and from JSON as text; a refusal names what is wrong in one sentence.
public protocol BoardField: Codable, Sendable, CustomStringConvertible {
    /// The value `text` stands for, or a refusal.
    init(validating text: String) throws(BoardError)
}

extension BoardField {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(validating: text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A plug-in id: reverse-DNS, lower case (`com.example.greeter`).
public struct PluginID: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.pluginID(text)
        self.text = text
    }
    public var description: String { text }
}

/// Why a change was made, kept in the board and the audit log: one line, bounded.
public struct Reason: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.reason(text)
        self.text = text
    }
    public var description: String { text }
}

/// A principal as the board holds it: an OS user name or a declared automation identity (`alice`,
/// `ci-bot@example.com`).
public struct PrincipalName: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.principal(text)
        self.text = text
    }
    public var description: String { text }
}

/// A principal a person gives a role or a token to: a ``PrincipalName`` that is not one of the names Plugboard acts as
/// itself (`plugboard/…`).
public struct PersonPrincipal: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.personPrincipal(text)
        self.text = text
    }
    public var description: String { text }
}

/// An API token's or an access token's name: letters, digits, `.`, `_` and `-` (`checkout-service`, `laptop`).
public struct TokenName: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.tokenName(text)
        self.text = text
    }
    public var description: String { text }
}

/// A publisher key's id: 16 lower-case hex digits, as `plugboard signer list` shows.
public struct KeyID: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try SigningKeys.validateKeyID(text)
        self.text = text
    }
    public var description: String { text }
}

/// A host's id, as the host reports it.
public struct HostID: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.hostID(text)
        self.text = text
    }
    public var description: String { text }
}

/// A flag name as a board holds it (`Validate.flagName(_:field:)`): what every command that looks a flag up takes, so
/// that a flag a board already holds can always be switched off, shown and archived.
public struct FlagName: BoardField, Hashable {
    /// The name.
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.flagName(text)
        self.text = text
    }
    public var description: String { text }
}

/// A name for a new flag (`Validate.newFlagName(_:field:)`): a ``FlagName`` whose letters are of one script.
public struct NewFlagName: BoardField, Hashable {
    /// The name.
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.newFlagName(text)
        self.text = text
    }
    public var description: String { text }
}

/// What keeps a user in the same bucket of a rollout: `default`, `userId`, `sessionId`, `random` or a context field.
public struct Stickiness: BoardField, Hashable {
    /// The field's name.
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.stickiness(text)
        self.text = text
    }
    private init(known text: String) { self.text = text }
    /// `default`: userId, else sessionId, else random.
    public static let standard = Stickiness(known: "default")
    public var description: String { text }
}

extension SemanticVersion: BoardField {
    public init(validating text: String) throws(BoardError) {
        do { self = try SemanticVersion(text) } catch { throw BoardError(.invalidInput, error.message) }
    }
}

// swift-argument-parser's property wrappers for fields of a ``BoardField`` type: parsed by its initializer, whose
// sentence a refusal shows.

extension Argument where Value: BoardField {
    /// A required argument of a ``BoardField`` type.
    public init(help: ArgumentHelp) {
        self.init(help: help, transform: { try Value(validating: $0) })
    }
}

extension Argument {
    /// An optional argument of a ``BoardField`` type.
    public init<T: BoardField>(help: ArgumentHelp) where Value == T? {
        self.init(help: help, transform: { try T(validating: $0) })
    }
}

extension Option where Value: BoardField {
    /// A required option of a ``BoardField`` type.
    public init(name: NameSpecification = .long, help: ArgumentHelp) {
        self.init(name: name, help: help, transform: { try Value(validating: $0) })
    }
}

extension Option where Value: BoardField {
    /// An option of a ``BoardField`` type with a default value.
    public init(wrappedValue: Value, name: NameSpecification = .long, help: ArgumentHelp) {
        // argument-parser shows no default for an option it parses with a transform: the help says it as it does for
        // the others.
        var help = help
        help.abstract += " (default: \(wrappedValue))"
        self.init(wrappedValue: wrappedValue, name: name, help: help, transform: { try Value(validating: $0) })
    }
}

extension Option {
    /// An optional option of a ``BoardField`` type.
    public init<T: BoardField>(name: NameSpecification = .long, help: ArgumentHelp) where Value == T? {
        self.init(name: name, help: help, transform: { try T(validating: $0) })
    }
}
