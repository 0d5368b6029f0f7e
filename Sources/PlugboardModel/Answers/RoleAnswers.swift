import Foundation
import PlugboardFlags
import PlugboardVersioning

/// An owner or maintainer of a plug-in.
public struct PluginOwner: Sendable, Hashable, Codable {
    /// What a principal may do with a plug-in.
    public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        /// Everything, including managing owners.
        case owner
        /// Everything except managing owners.
        case maintainer
    }

    public let principal: String
    public let role: Role
    public let addedAt: String
    public let addedBy: String

    /// A value with each stored property given.
    package init(principal: String, role: Role, addedAt: String, addedBy: String) {
        self.principal = principal
        self.role = role
        self.addedAt = addedAt
        self.addedBy = addedBy
    }
}

/// A board administrator.
public struct BoardAdmin: Sendable, Hashable, Codable {
    public let principal: String
    public let addedAt: String
    public let addedBy: String

    /// A value with each stored property given.
    package init(principal: String, addedAt: String, addedBy: String) {
        self.principal = principal
        self.addedAt = addedAt
        self.addedBy = addedBy
    }
}

/// A member of a principal group: a named list of principals that an approval policy can name as who approves change
/// requests (`plugboard group`, `plugboard policy set --approvers GROUP`).
public struct GroupMember: Sendable, Hashable, Codable {
    /// The group's name.
    public let group: String
    public let principal: String
    public let addedAt: String
    public let addedBy: String

    /// A value with each stored property given.
    package init(group: String, principal: String, addedAt: String, addedBy: String) {
        self.group = group
        self.principal = principal
        self.addedAt = addedAt
        self.addedBy = addedBy
    }
}
