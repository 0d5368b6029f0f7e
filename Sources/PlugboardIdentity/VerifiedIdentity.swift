public import Foundation

/// Who the identity provider says signed in, after every check: keyed on ``issuer`` and ``subject``, never on the name
/// or the e-mail address.
public struct VerifiedIdentity: Sendable, Equatable {
    /// The `iss` of the ID token: the configured issuer, exactly.
    public var issuer: String
    /// The `sub` of the ID token: the provider's stable identifier of the person (1 to 255 characters).
    public var subject: String
    /// The person's name from the configured name claim, else their e-mail address (at most 128 characters), or nil.
    public var name: String?
    /// The `email` claim (at most 320 characters), or nil. Informational: never a key to a principal.
    public var email: String?
    /// The groups from the configured groups claim (at most 100, each at most 256 characters); empty without one.
    public var groups: [String]
    /// When the person last authenticated at the provider (`auth_time`), when the token says.
    public var authTime: Date?

    /// A value with each stored property given.
    public init(issuer: String, subject: String, name: String? = nil, email: String? = nil, groups: [String], authTime: Date? = nil) {
        self.issuer = issuer
        self.subject = subject
        self.name = name
        self.email = email
        self.groups = groups
        self.authTime = authTime
    }
}

/// The bounds on what a provider may say about a person.
enum IdentityLimits {
    static let subject = 255
    static let name = 128
    static let email = 320
    static let groups = 100
    static let group = 256
}
