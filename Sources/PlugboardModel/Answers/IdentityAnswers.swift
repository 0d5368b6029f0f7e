/// An identity provider's account linked to a principal: who the provider's `(issuer, subject)` signs in as.
public struct IdentityLink: Sendable, Hashable, Codable {
    /// The provider's issuer, exactly as configured (`https://login.example.com`).
    public let issuer: String
    /// The provider's subject for the person (`sub`): stable, never reassigned.
    public let subject: String
    /// The principal the identity signs in as.
    public let principal: String
    public let createdAt: String
    /// Who linked it: an admin, or `sso ISSUER` for a first sign-in.
    public let createdBy: String

    /// A value with each stored property given.
    package init(issuer: String, subject: String, principal: String, createdAt: String, createdBy: String) {
        self.issuer = issuer
        self.subject = subject
        self.principal = principal
        self.createdAt = createdAt
        self.createdBy = createdBy
    }
}

/// A role an identity provider's group gives its members at sign-in.
public struct GroupRole: Sendable, Hashable, Codable {
    /// The roles a group can map to.
    public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        /// Board admin.
        case admin
        /// Owner of one plug-in.
        case owner
        /// Maintainer of one plug-in.
        case maintainer
        /// A console session that only reads, whatever else the person may do.
        case readOnly = "read-only"
    }

    public let issuer: String
    /// The group as the provider's groups claim names it.
    public let group: String
    public let role: Role
    /// The plug-in an owner or maintainer role is for; nil for the others.
    public let pluginID: String?
    public let addedAt: String
    public let addedBy: String

    /// A value with each stored property given.
    package init(issuer: String, group: String, role: Role, pluginID: String?, addedAt: String, addedBy: String) {
        self.issuer = issuer
        self.group = group
        self.role = role
        self.pluginID = pluginID
        self.addedAt = addedAt
        self.addedBy = addedBy
    }
}

/// Who a sign-in with an identity provider is on the board.
public struct SignedInIdentity: Sendable, Hashable, Codable {
    /// The principal the person acts as.
    public let principal: String
    /// Whether the identity was new: its principal was made by this sign-in.
    public let created: Bool
    /// Whether the person's groups make their session read-only (a `read-only` group and no group with a role).
    public let readOnly: Bool
    /// What the sign-in changed: roles its groups granted or no longer grant.
    public let changes: [String]

    /// A value with each stored property given.
    package init(principal: String, created: Bool, readOnly: Bool, changes: [String]) {
        self.principal = principal
        self.created = created
        self.readOnly = readOnly
        self.changes = changes
    }
}
