public import ArgumentParser
package import PlugboardModel
package import PlugboardStore

extension PluginOwner.Role: ExpressibleByArgument {}

/// Roles on the board: who administers it (`plugboard admin …`) and who owns and maintains each plug-in
/// (`plugboard owner …`).
package enum RoleOperations {
    /// `plugboard admin …`, in the order its help lists them.
    package static let admins: [any BoardOperation.Type] = [AddAdmin.self, RemoveAdmin.self, ListAdmins.self]
    /// `plugboard owner …`, in the order its help lists them.
    package static let owners: [any BoardOperation.Type] = [AddOwner.self, RemoveOwner.self, ListOwners.self]

    /// `admin add PRINCIPAL`.
    package struct AddAdmin: BoardOperation {
        package static let declaration = OperationDeclaration(
            "admin.add", .write, abstract: "Make a principal (an OS user name) a board admin.", response: "ChangeResult")
        @Argument(help: "The principal to make an admin.") package var principal: PersonPrincipal
        package init() {}
        package init(principal: PersonPrincipal) { self.principal = principal }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(try board.addAdmin(principal.text, by: actor))
        }
    }

    /// `admin remove PRINCIPAL`: takes a role away, a stop.
    package struct RemoveAdmin: BoardOperation {
        package static let declaration = OperationDeclaration(
            "admin.remove", .stop, abstract: "Remove a board admin (never the last one).", response: "ChangeResult")
        @Argument(help: "The admin to remove.") package var principal: PrincipalName
        package init() {}
        package init(principal: PrincipalName) { self.principal = principal }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(try board.removeAdmin(principal.text, by: actor))
        }
    }

    /// `admin list`.
    package struct ListAdmins: BoardOperation {
        package static let declaration = OperationDeclaration(
            "admin.list", .read, abstract: "List board admins.", response: "AdminList")
        package init() {}
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[BoardAdmin]> {
            AdminReply(try board.admins())
        }
        package static func text(_ admins: [BoardAdmin]) -> String? {
            var table = Table("PRINCIPAL", "ADDED AT", "ADDED BY")
            for admin in admins { table.add(admin.principal, admin.addedAt, admin.addedBy) }
            return table.text(empty: "No admins.")
        }
    }

    /// `owner add ID PRINCIPAL [--role]`: adds an owner or maintainer, or changes their role.
    package struct AddOwner: BoardOperation {
        package static let declaration = OperationDeclaration(
            "owner.add", .write, abstract: "Add an owner or maintainer to a plug-in (or change their role).", response: "ChangeResult")
        @Argument(help: "The plug-in id.") package var id: PluginID
        @Argument(help: "The principal (an OS user name).") package var principal: PersonPrincipal
        @Option(name: .long, help: "owner (may manage owners) or maintainer.") package var role: PluginOwner.Role = .owner
        package init() {}
        package init(id: PluginID, principal: PersonPrincipal, role: PluginOwner.Role) {
            self.id = id
            self.principal = principal
            self.role = role
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(try board.addOwner(id.text, principal: principal.text, role: role, by: actor))
        }
    }

    /// `owner remove ID PRINCIPAL`: takes a role away, a stop.
    package struct RemoveOwner: BoardOperation {
        package static let declaration = OperationDeclaration(
            "owner.remove", .stop, abstract: "Remove an owner or maintainer (never the last owner).", response: "ChangeResult")
        @Argument(help: "The plug-in id.") package var id: PluginID
        @Argument(help: "The principal to remove.") package var principal: PrincipalName
        package init() {}
        package init(id: PluginID, principal: PrincipalName) {
            self.id = id
            self.principal = principal
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<ChangeResult> {
            AdminReply(try board.removeOwner(id.text, principal: principal.text, by: actor))
        }
    }

    /// `owner list ID`.
    package struct ListOwners: BoardOperation {
        package static let declaration = OperationDeclaration(
            "owner.list", .read, abstract: "List a plug-in's owners and maintainers.", response: "OwnerList")
        @Argument(help: "The plug-in id.") package var id: PluginID
        package init() {}
        package init(id: PluginID) { self.id = id }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<[PluginOwner]> {
            AdminReply(try board.owners(of: id.text))
        }
        package func text(for owners: [PluginOwner]) -> String? {
            var table = Table("PRINCIPAL", "ROLE", "ADDED AT", "ADDED BY")
            for owner in owners { table.add(owner.principal, owner.role.rawValue, owner.addedAt, owner.addedBy) }
            return table.text(empty: "\(id) has no owners.")
        }
    }
}
