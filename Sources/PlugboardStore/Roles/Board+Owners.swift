package import PlugboardModel

extension Board {
    /// Adds an owner or maintainer to a plug-in, or changes the role of an existing one. Needs an owner or an admin.
    package func addOwner(_ pluginID: String, principal: String, role: PluginOwner.Role, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.pluginID(pluginID)
        try Validate.personPrincipal(principal)
        return try ownersChange(pluginID, .ownerAdd, by: actor) { change in
            let current = try RoleQueries.role(change.db, pluginID: pluginID, principal: principal)
            if current == role {
                return ChangeResult(
                    changed: false,
                    "\(principal) is already \(role == .owner ? "an owner" : "a maintainer") of \(pluginID); nothing changed.")
            }
            if current == .owner, role != .owner { try requireAnotherOwner(change, pluginID, principal) }
            try RoleQueries.saveOwner(change.db, pluginID: pluginID, principal: principal, role: role, by: change.actor, at: change.now)
            try Self.recordRole(change, .ownerAdd, pluginID, principal, from: current, to: role)
            return ChangeResult(changed: true, "\(principal) is now \(role == .owner ? "an owner" : "a maintainer") of \(pluginID).")
        }
    }

    /// Removes an owner or maintainer from a plug-in. The last owner cannot be removed.
    package func removeOwner(_ pluginID: String, principal: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        try Validate.principal(principal)
        return try ownersChange(pluginID, .ownerRemove, by: actor) { change in
            guard let current = try RoleQueries.role(change.db, pluginID: pluginID, principal: principal) else {
                throw BoardError.notFound("\(principal) is not an owner or maintainer of \(pluginID); see plugboard owner list \(pluginID)")
            }
            if current == .owner { try requireAnotherOwner(change, pluginID, principal) }
            try RoleQueries.deleteOwner(change.db, pluginID: pluginID, principal: principal)
            try Self.recordRole(change, .ownerRemove, pluginID, principal, from: current, to: nil)
            return ChangeResult(changed: true, "Removed \(principal) from the owners of \(pluginID).")
        }
    }

    /// Makes a principal a board admin. Needs an admin.
    package func addAdmin(_ principal: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.personPrincipal(principal)
        return try changeMembership(.admin(principal), adding: true, .adminAdd, doing: "add admins", by: actor) { change in
            try RoleQueries.insertAdmin(change.db, principal, by: change.actor, at: change.now)
        }
    }

    /// Removes a board admin. Needs an admin; the last admin cannot be removed.
    package func removeAdmin(_ principal: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.principal(principal)
        return try changeMembership(.admin(principal), adding: false, .adminRemove, doing: "remove admins", by: actor) { change in
            guard try RoleQueries.adminCount(change.db) > 1 else {
                throw BoardError.conflict("\(principal) is the last board admin and cannot be removed; add another admin first")
            }
            try RoleQueries.deleteAdmin(change.db, principal)
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

    /// A change to the owners of `pluginID`, audited as `action` on the plug-in: needs an owner or an admin.
    private func ownersChange(
        _ pluginID: String, _ action: AuditAction, by actor: Principal, _ body: (AuditedChange) throws -> ChangeResult
    ) throws(BoardError) -> ChangeResult {
        try change(
            actor, refusal: AuditEntry(action: action, targetType: "plugin", targetID: pluginID),
            requiring: .pluginOwners(pluginID, doing: "manage the owners of"), body)
    }

    /// The audit row of `principal`'s role on `pluginID` going from `before` to `after` (nil: none).
    private static func recordRole(
        _ change: AuditedChange, _ action: AuditAction, _ pluginID: String, _ principal: String, from before: PluginOwner.Role?,
        to after: PluginOwner.Role?
    ) throws {
        try change.record(
            AuditEntry(
                action: action, targetType: "plugin", targetID: pluginID,
                before: .object(["principal": .string(principal), "role": .optional(before?.rawValue)]),
                after: .object(["principal": .string(principal), "role": .optional(after?.rawValue)])))
    }

    private func requireAnotherOwner(_ change: AuditedChange, _ pluginID: String, _ principal: String) throws {
        guard try RoleQueries.otherOwnerCount(change.db, pluginID: pluginID, besides: principal) > 0 else {
            throw BoardError.conflict(
                "\(principal) is the last owner of \(pluginID) and cannot be removed or demoted; add another owner first")
        }
    }
}

/// A principal's place in a set the admins keep (the board admins, a principal group), as a change audits it.
struct Membership {
    /// The principal.
    let principal: String
    /// The audit row's target type (`admin`, `principal_group`) and id.
    let targetType: String
    let targetID: String
    /// The key of the audited state, `true` for a member (`admin`, `member`).
    let key: String
    /// What a member is, after "is": `a board admin`, `in the group ops`.
    let standing: String
    /// The command that lists the members.
    let listCommand: String
    /// Whether the principal is a member now.
    let isMember: (AuditedChange) throws -> Bool

    /// `principal` as a board admin.
    static func admin(_ principal: String) -> Membership {
        Membership(
            principal: principal, targetType: "admin", targetID: principal, key: "admin", standing: "a board admin",
            listCommand: "plugboard admin list", isMember: { change in try RoleQueries.isAdmin(change.db, principal) })
    }
}

extension Board {
    /// Adds a principal to (or removes it from) a set the admins keep, with `apply`'s rows and the audit row `action`;
    /// nothing changes when it is already a member (adding), and a non-member is not found (removing). Needs an admin.
    func changeMembership(
        _ membership: Membership, adding: Bool, _ action: AuditAction, doing: String, by actor: Principal,
        apply: (AuditedChange) throws -> Void
    ) throws(BoardError) -> ChangeResult {
        let principal = membership.principal
        return try change(
            actor, refusal: AuditEntry(action: action, targetType: membership.targetType, targetID: membership.targetID),
            requiring: .admin(doing: doing)
        ) { change in
            if try membership.isMember(change) == adding {
                guard !adding else {
                    return ChangeResult(changed: false, "\(principal) is already \(membership.standing); nothing changed.")
                }
                throw BoardError.notFound("\(principal) is not \(membership.standing); see \(membership.listCommand)")
            }
            try apply(change)
            try change.record(
                AuditEntry(
                    action: action, targetType: membership.targetType, targetID: membership.targetID,
                    before: .object([membership.key: .bool(!adding)]), after: .object([membership.key: .bool(adding)])))
            return ChangeResult(changed: true, "\(principal) is \(adding ? "now" : "no longer") \(membership.standing).")
        }
    }
}
