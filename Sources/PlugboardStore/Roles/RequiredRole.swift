import GRDB
import PlugboardModel

extension RequiredRole {
    /// Checks `access` for `actor` inside a transaction; throws `notFound` for an unregistered plug-in and
    /// `notAllowed` for a principal without the role.
    static func check(_ access: RequiredRole, _ db: Database, by actor: Principal) throws {
        switch access {
        case .admin(let what):
            try requireAdmin(db, by: actor, doing: what)
        case .pluginOwners(let pluginID, let what):
            try RegistryQueries.requirePlugin(db, pluginID)
            try requireRole(db, by: actor, pluginID: pluginID, roles: [.owner], doing: what)
        case .pluginMaintainers(let pluginID, let what):
            try RegistryQueries.requirePlugin(db, pluginID)
            try requireRole(db, by: actor, pluginID: pluginID, roles: [.owner, .maintainer], doing: what)
        }
    }

    static func requireAdmin(_ db: Database, by actor: Principal, doing what: String) throws {
        guard try RoleQueries.isAdmin(db, actor.osUser) else {
            throw BoardError.notAllowed("\(actor.osUser) may not \(what): only a board admin may (see plugboard admin list)")
        }
    }

    /// Passes for admins and for principals holding one of `roles` on the plug-in.
    private static func requireRole(_ db: Database, by actor: Principal, pluginID: String, roles: Set<PluginOwner.Role>, doing what: String)
        throws
    {
        if try RoleQueries.isAdmin(db, actor.osUser) { return }
        if let role = try RoleQueries.role(db, pluginID: pluginID, principal: actor.osUser), roles.contains(role) { return }
        let who = roles.contains(.maintainer) ? "its owners, its maintainers or a board admin" : "its owners or a board admin"
        throw BoardError.notAllowed(
            "\(actor.osUser) may not \(what) \(pluginID): only \(who) may; ask one of them (plugboard owner list \(pluginID))")
    }
}
