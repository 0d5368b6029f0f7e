/// A plug-in that greets people (the example host's first feature).
public protocol Greeting: Sendable {
    /// A greeting for `name`.
    func greet(_ name: String) async throws -> String
}

/// A plug-in that keeps notes (the example host's second feature).
public protocol NoteTaking: Sendable {
    /// Stores a note under a title.
    func save(title: String, body: String) async throws
    /// Reads a note back.
    func note(titled title: String) async throws -> String?
}

/// A host service: how this host likes its greetings. Two hosts register different styles, so the same
/// plug-in binary behaves the way each host wants.
public protocol GreetingStyle: Sendable {
    /// The word a greeting starts with, such as "Hello".
    var salutation: String { get }
}

/// A fixed greeting style.
public struct FixedGreetingStyle: GreetingStyle {
    public let salutation: String
    public init(_ salutation: String) { self.salutation = salutation }
}
