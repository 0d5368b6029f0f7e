public import ArgumentParser
public import PlugboardModel
package import PlugboardStore

extension PluginOwner.Role: ExpressibleByArgument {}

/// Roles on the board: who administers it (`plugboard admin …`) and who owns and maintains each plug-in
/// (`plugboard owner …`).
public enum RoleOperations {
    /// `plugboard admin …`, in the order its help lists them.
    package static let admins: [any ParsedOperation.Type] = [AddAdmin.self, RemoveAdmin.self, ListAdmins.self]
    /// `plugboard owner …`, in the order its help lists them.
    package static let owners: [any ParsedOperation.Type] = [AddOwner.self, RemoveOwner.self, ListOwners.self]
    /// `plugboard group …`, in the order its help lists them.
    package static let groups: [any ParsedOperation.Type] = [AddGroupMember.self, RemoveGroupMember.self, ListGroups.self]

    /// `admin add PRINCIPAL`.
    public struct AddAdmin: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .adminAdd, .write, abstract: "Make a principal (an OS user name) a board admin.")
        @Argument(help: "The principal to make an admin.") public var principal: PersonPrincipal
        public init() {}
        public init(principal: PersonPrincipal) { self.principal = principal }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.addAdmin(principal.text, by: actor))
        }
    }

    /// `admin remove PRINCIPAL`: takes a role away, a stop.
    public struct RemoveAdmin: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .adminRemove, .stop, abstract: "Remove a board admin (never the last one).")
        @Argument(help: "The admin to remove.") public var principal: PrincipalName
        public init() {}
        public init(principal: PrincipalName) { self.principal = principal }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.removeAdmin(principal.text, by: actor))
        }
    }

    /// `admin list`.
    public struct ListAdmins: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .adminList, .read, abstract: "List board admins.", response: "AdminList")
        public init() {}
        /// What it answers.
        public typealias Response = [BoardAdmin]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.admins())
        }
        package static func text(_ admins: [BoardAdmin]) -> String? {
            Table.listing(admins, "PRINCIPAL", "ADDED AT", "ADDED BY", empty: "No admins.") { [$0.principal, $0.addedAt, $0.addedBy] }
        }
    }

    /// `owner add ID PRINCIPAL [--role]`: adds an owner or maintainer, or changes their role.
    public struct AddOwner: ParsedOperation, PluginTargeted, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .ownerAdd, .write, abstract: "Add an owner or maintainer to a plug-in (or change their role).")
        @OptionGroup public var target: PluginTarget
        @Argument(help: "The principal (an OS user name).") public var principal: PersonPrincipal
        @Option(name: .long, help: "owner (may manage owners) or maintainer.") public var role: PluginOwner.Role = .owner
        public init() {}
        public init(id: PluginID, principal: PersonPrincipal, role: PluginOwner.Role) {
            self.id = id
            self.principal = principal
            self.role = role
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.addOwner(id.text, principal: principal.text, role: role, by: actor))
        }
    }

    /// `owner remove ID PRINCIPAL`: takes a role away, a stop.
    public struct RemoveOwner: ParsedOperation, PluginTargeted, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .ownerRemove, .stop, abstract: "Remove an owner or maintainer (never the last owner).")
        @OptionGroup public var target: PluginTarget
        @Argument(help: "The principal to remove.") public var principal: PrincipalName
        public init() {}
        public init(id: PluginID, principal: PrincipalName) {
            self.id = id
            self.principal = principal
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.removeOwner(id.text, principal: principal.text, by: actor))
        }
    }

    /// `owner list ID`.
    public struct ListOwners: ParsedOperation, PluginOperation {
        public static let declaration = OperationDeclaration(
            .ownerList, .read, abstract: "List a plug-in's owners and maintainers.", response: "OwnerList")
        @OptionGroup public var target: PluginTarget
        public init() {}
        /// What it answers.
        public typealias Response = [PluginOwner]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.owners(of: id.text))
        }
        package func text(for owners: [PluginOwner]) -> String? {
            Table.listing(owners, "PRINCIPAL", "ROLE", "ADDED AT", "ADDED BY", empty: "\(id) has no owners.") {
                [$0.principal, $0.role.rawValue, $0.addedAt, $0.addedBy]
            }
        }
    }

    /// A principal group's name (`release-managers`).
    public struct GroupName: BoardField, Hashable {
        public let text: String
        public init(validating text: String) throws(BoardError) {
            try Validate.groupName(text)
            self.text = text
        }
        public var description: String { text }
    }

    /// `group add GROUP PRINCIPAL`: who may approve where a policy names the group (`policy set --approvers GROUP`).
    public struct AddGroupMember: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .groupAdd, .write, abstract: "Add a principal to a group (admins); a group is made with its first member.",
            discussion: """
                An approval policy that names the group (plugboard policy set --env ENV --approvers GROUP) lets its members \
                approve and reject change requests there, if they also are board admins or own or maintain the plug-in \
                changed. Adding a member widens who may approve, so it waits for approvals where any environment is protected.
                """, widens: .boardWide)
        @Argument(help: "The group.") public var group: GroupName
        @Argument(help: "The principal to add.") public var principal: PersonPrincipal
        public init() {}
        public init(group: GroupName, principal: PersonPrincipal) {
            self.group = group
            self.principal = principal
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.addGroupMember(group.text, principal.text, by: actor))
        }
    }

    /// `group remove GROUP PRINCIPAL`: a stop.
    public struct RemoveGroupMember: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .groupRemove, .stop, abstract: "Remove a principal from a group (admins).")
        @Argument(help: "The group.") public var group: GroupName
        @Argument(help: "The principal to remove.") public var principal: PrincipalName
        public init() {}
        public init(group: GroupName, principal: PrincipalName) {
            self.group = group
            self.principal = principal
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.removeGroupMember(group.text, principal.text, by: actor))
        }
    }

    /// `group list [GROUP]`.
    public struct ListGroups: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .groupList, .read, abstract: "List the members of every group, or of one.")
        @Argument(help: "Only this group.") public var group: GroupName?
        public init() {}
        public init(group: GroupName?) { self.group = group }
        /// What it answers.
        public typealias Response = [GroupMember]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.groupMembers(group?.text))
        }
        package func text(for members: [GroupMember]) -> String? {
            Table.listing(
                members, "GROUP", "PRINCIPAL", "ADDED AT", "ADDED BY",
                empty: group.map { "The group \($0) has no members." } ?? "No group yet."
            ) { [$0.group, $0.principal, $0.addedAt, $0.addedBy] }
        }
    }
}
