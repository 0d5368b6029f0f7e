package import PlugboardModel

extension Board {
    /// Adds an owner or maintainer to a plug-in, or changes the role of an existing one. Needs an owner or an admin.
    package func addOwner(_ pluginID: String, principal: String, role: PluginOwner.Role, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.pluginID(pluginID)
        try Validate.personPrincipal(principal)
        return try change(
            actor, refusal: AuditEntry(action: .ownerAdd, targetType: "plugin", targetID: pluginID),
            requiring: .pluginOwners(pluginID, doing: "manage the owners of")
        ) { change in
            let current = try RoleQueries.role(change.db, pluginID: pluginID, principal: principal)
            if current == role {
                return ChangeResult(
                    changed: false,
                    "\(principal) is already \(role == .owner ? "an owner" : "a maintainer") of \(pluginID); nothing changed.")
            }
            if current == .owner, role != .owner { try requireAnotherOwner(change, pluginID, principal) }
            try RoleQueries.saveOwner(change.db, pluginID: pluginID, principal: principal, role: role, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .ownerAdd, targetType: "plugin", targetID: pluginID,
                    before: .object(["principal": .string(principal), "role": .optional(current?.rawValue)]),
                    after: .object(["principal": .string(principal), "role": .string(role.rawValue)])))
            return ChangeResult(changed: true, "\(principal) is now \(role == .owner ? "an owner" : "a maintainer") of \(pluginID).")
        }
    }

    /// Removes an owner or maintainer from a plug-in. The last owner cannot be removed.
    package func removeOwner(_ pluginID: String, principal: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        try Validate.principal(principal)
        return try change(
            actor, refusal: AuditEntry(action: .ownerRemove, targetType: "plugin", targetID: pluginID),
            requiring: .pluginOwners(pluginID, doing: "manage the owners of")
        ) { change in
            guard let current = try RoleQueries.role(change.db, pluginID: pluginID, principal: principal) else {
                throw BoardError.notFound("\(principal) is not an owner or maintainer of \(pluginID); see plugboard owner list \(pluginID)")
            }
            if current == .owner { try requireAnotherOwner(change, pluginID, principal) }
            try RoleQueries.deleteOwner(change.db, pluginID: pluginID, principal: principal)
            try change.record(
                AuditEntry(
                    action: .ownerRemove, targetType: "plugin", targetID: pluginID,
                    before: .object(["principal": .string(principal), "role": .string(current.rawValue)]),
                    after: .object(["principal": .string(principal), "role": .null])))
            return ChangeResult(changed: true, "Removed \(principal) from the owners of \(pluginID).")
        }
    }

    /// Makes a principal a board admin. Needs an admin.
    package func addAdmin(_ principal: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.personPrincipal(principal)
        return try change(
            actor, refusal: AuditEntry(action: .adminAdd, targetType: "admin", targetID: principal),
            requiring: .admin(doing: "add admins")
        ) { change in
            if try RoleQueries.isAdmin(change.db, principal) {
                return ChangeResult(changed: false, "\(principal) is already a board admin; nothing changed.")
            }
            try RoleQueries.insertAdmin(change.db, principal, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .adminAdd, targetType: "admin", targetID: principal, before: .object(["admin": .bool(false)]),
                    after: .object(["admin": .bool(true)])))
            return ChangeResult(changed: true, "\(principal) is now a board admin.")
        }
    }

    /// Removes a board admin. Needs an admin; the last admin cannot be removed.
    package func removeAdmin(_ principal: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.principal(principal)
        return try change(
            actor, refusal: AuditEntry(action: .adminRemove, targetType: "admin", targetID: principal),
            requiring: .admin(doing: "remove admins")
        ) { change in
            guard try RoleQueries.isAdmin(change.db, principal) else {
                throw BoardError.notFound("\(principal) is not a board admin; see plugboard admin list")
            }
            guard try RoleQueries.adminCount(change.db) > 1 else {
                throw BoardError.conflict("\(principal) is the last board admin and cannot be removed; add another admin first")
            }
            try RoleQueries.deleteAdmin(change.db, principal)
            try change.record(
                AuditEntry(
                    action: .adminRemove, targetType: "admin", targetID: principal, before: .object(["admin": .bool(true)]),
                    after: .object(["admin": .bool(false)])))
            return ChangeResult(changed: true, "\(principal) is no longer a board admin.")
        }
    }

    /// The owners and maintainers of a plug-in.
    package func owners(of pluginID: String) throws(BoardError) -> [PluginOwner] {
        try Validate.pluginID(pluginID)
        return try read { db in
            try RegistryQueries.requirePlugin(db, pluginID)
            return try RoleQueries.owners(db, pluginID: pluginID)
        }
    }

    /// Whether `principal` is a board admin or an owner or maintainer of some plug-in: one who may register versions of
    /// what is already on the board, and so may send what a registration carries (many manifests, artifacts).
    package func holdsRole(_ principal: String) throws(BoardError) -> Bool {
        try read { db in try RoleQueries.isAdmin(db, principal) || RoleQueries.holdsPluginRole(db, principal) }
    }

    /// The board admins.
    package func admins() throws(BoardError) -> [BoardAdmin] {
        try read { db in try RoleQueries.admins(db) }
    }

    private func requireAnotherOwner(_ change: AuditedChange, _ pluginID: String, _ principal: String) throws {
        guard try RoleQueries.otherOwnerCount(change.db, pluginID: pluginID, besides: principal) > 0 else {
            throw BoardError.conflict(
                "\(principal) is the last owner of \(pluginID) and cannot be removed or demoted; add another owner first")
        }
    }
}
