public import ArgumentParser
public import PlugboardModel
package import PlugboardStore

extension GroupRole.Role: ExpressibleByArgument {}

/// People who sign in with an identity provider: which provider account signs in as which principal
/// (`plugboard principal …`), and which of the provider's groups give which role (`plugboard sso …`).
public enum IdentityOperations {
    /// `plugboard principal …`, in the order its help lists them.
    package static let principals: [any ParsedOperation.Type] = [Link.self, Unlink.self, ListIdentities.self]
    /// `plugboard sso …`, in the order its help lists them.
    package static let sso: [any ParsedOperation.Type] = [MapGroup.self, UnmapGroup.self, ListGroupRoles.self]

    /// `principal link NAME --issuer ISS --subject SUB`.
    public struct Link: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .principalLink, .write, abstract: "Link an identity provider's account to a principal, which it then signs in as (admins).",
            discussion: """
                An account is the provider's issuer and subject (the sub claim), never an e-mail address or a user name: \
                a first sign-in of an account no one linked makes a principal of its own. Linking lets the account act \
                as the principal, so it waits for approvals where any environment is protected.
                """, widens: .boardWide)
        @Argument(help: "The principal the account signs in as.") public var principal: PersonPrincipal
        @OptionGroup public var account: IdentityAccount
        public init() {}
        public init(principal: PersonPrincipal, issuer: Issuer, subject: Subject) {
            self.principal = principal
            account = IdentityAccount(issuer: issuer, subject: subject)
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(
                try board.linkIdentity(issuer: account.issuer.text, subject: account.subject.text, to: principal.text, by: actor))
        }
    }

    /// `principal unlink --issuer ISS --subject SUB`: a stop.
    public struct Unlink: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .principalUnlink, .stop, abstract: "Unlink an identity provider's account: its sessions end (admins).")
        @OptionGroup public var account: IdentityAccount
        public init() {}
        public init(issuer: Issuer, subject: Subject) { account = IdentityAccount(issuer: issuer, subject: subject) }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.unlinkIdentity(issuer: account.issuer.text, subject: account.subject.text, by: actor))
        }
    }

    /// `principal identities [NAME]`.
    public struct ListIdentities: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .principalIdentities, .read, abstract: "List the identity provider accounts linked to principals (or to one).")
        @Argument(help: "Only this principal's.") public var principal: PrincipalName?
        public init() {}
        public init(principal: PrincipalName?) { self.principal = principal }
        /// What it answers.
        public typealias Response = [IdentityLink]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.identities(principal: principal?.text))
        }
        package func text(for links: [IdentityLink]) -> String? {
            Table.listing(links, "PRINCIPAL", "ISSUER", "SUBJECT", "LINKED", empty: "No identity provider account is linked yet.") {
                [$0.principal, $0.issuer, $0.subject, "\($0.createdAt) by \($0.createdBy)"]
            }
        }
    }

    /// `sso map-group GROUP --issuer ISS --role ROLE [--plugin ID]`.
    public struct MapGroup: GroupMappingChange {
        public static let declaration = OperationDeclaration(
            .ssoMapGroup, .write, abstract: "Give the members of an identity provider's group a role at their sign-in (admins).",
            discussion: """
                The role is board admin, owner or maintainer of one plug-in (--plugin), or read-only (a console session \
                that only reads). A sign-in grants the roles its groups map to and takes back those an earlier sign-in \
                granted that no group maps to any more; every grant is an audit row. A mapping widens who may act, so \
                it waits for approvals where any environment is protected.
                """, widens: .boardWide)
        @OptionGroup public var mapping: GroupMappingFields
        public init() {}
        public init(group: ProviderGroup, issuer: Issuer, role: GroupRole.Role, plugin: PluginID?) {
            mapping = GroupMappingFields(group: group, issuer: issuer, role: role, plugin: plugin)
        }
        package static let maps = true
    }

    /// `sso unmap-group GROUP --issuer ISS --role ROLE [--plugin ID]`: a stop.
    public struct UnmapGroup: GroupMappingChange {
        public static let declaration = OperationDeclaration(
            .ssoUnmapGroup, .stop, abstract: "Stop giving a group's members a role; they lose it at their next sign-in (admins).")
        @OptionGroup public var mapping: GroupMappingFields
        public init() {}
        public init(group: ProviderGroup, issuer: Issuer, role: GroupRole.Role, plugin: PluginID?) {
            mapping = GroupMappingFields(group: group, issuer: issuer, role: role, plugin: plugin)
        }
        package static let maps = false
    }

    /// `sso groups`.
    public struct ListGroupRoles: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .ssoGroups, .read, abstract: "List which identity provider groups give which role.")
        public init() {}
        /// What it answers.
        public typealias Response = [GroupRole]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.groupRoles())
        }
        package static func text(_ roles: [GroupRole]) -> String? {
            Table.listing(
                roles, "ISSUER", "GROUP", "ROLE", "ADDED",
                empty: "No group gives a role; map one with plugboard sso map-group GROUP --issuer ISS --role admin."
            ) { [$0.issuer, $0.group, $0.role.rawValue + ($0.pluginID.map { " of \($0)" } ?? ""), "\($0.addedAt) by \($0.addedBy)"] }
        }
    }
}

/// An identity provider's account: `--issuer ISS --subject SUB`.
public struct IdentityAccount: ParsableArguments, Sendable {
    /// The provider's issuer.
    @Option(help: "The identity provider's issuer URL, exactly as its discovery document says it.") public var issuer: Issuer
    /// The account's subject.
    @Option(help: "The account's subject at the provider (its sub claim).") public var subject: Subject
    /// swift-argument-parser's: the fields are left for the parser to fill.
    public init() {}
    /// The account `subject` at `issuer`.
    public init(issuer: Issuer, subject: Subject) {
        self.issuer = issuer
        self.subject = subject
    }
}

/// A group's mapping to a role: `GROUP --issuer ISS --role ROLE [--plugin ID]`.
public struct GroupMappingFields: ParsableArguments, Sendable {
    /// The group, as the provider's groups claim names it.
    @Argument(help: "The group, as the identity provider's groups claim names it.") public var group: ProviderGroup
    /// The provider's issuer.
    @Option(help: "The identity provider's issuer URL.") public var issuer: Issuer
    /// The role its members get.
    @Option(help: "admin, owner, maintainer or read-only.") public var role: GroupRole.Role
    /// The plug-in an owner or maintainer role is for.
    @Option(help: "The plug-in (with owner or maintainer).") public var plugin: PluginID?
    /// swift-argument-parser's: the fields are left for the parser to fill.
    public init() {}
    /// The mapping of `group` to `role`.
    public init(group: ProviderGroup, issuer: Issuer, role: GroupRole.Role, plugin: PluginID?) {
        self.group = group
        self.issuer = issuer
        self.role = role
        self.plugin = plugin
    }
}

/// `sso map-group` and `sso unmap-group`: a group's mapping to a role, made or taken away.
package protocol GroupMappingChange: ChangingOperation {
    var mapping: GroupMappingFields { get }
    /// Whether the operation makes the mapping (else it takes it away).
    static var maps: Bool { get }
}

extension GroupMappingChange {
    package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
        OperationReply(
            try board.setGroupMapping(
                issuer: mapping.issuer.text, group: mapping.group.text, role: mapping.role, pluginID: mapping.plugin?.text,
                mapped: Self.maps, by: actor))
    }
}

/// An identity provider's issuer URL (`https://login.example.com`).
public struct Issuer: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.issuer(text)
        self.text = text
    }
    public var description: String { text }
}

/// An account's subject at an identity provider (its `sub` claim).
public struct Subject: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.subject(text)
        self.text = text
    }
    public var description: String { text }
}

/// A group as an identity provider's groups claim names it.
public struct ProviderGroup: BoardField, Hashable {
    public let text: String
    public init(validating text: String) throws(BoardError) {
        try Validate.providerGroup(text)
        self.text = text
    }
    public var description: String { text }
}
