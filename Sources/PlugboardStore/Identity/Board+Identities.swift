import GRDB
package import PlugboardModel

extension Board {
    // MARK: Identities

    /// Links the identity provider's account `(issuer, subject)` to `principal`, so that a sign-in with it acts as
    /// that principal: admins. An identity is never joined to a principal by a name or an e-mail address the provider
    /// sends; this is the only way to give an existing principal a provider's sign-in.
    package func linkIdentity(issuer: String, subject: String, to principal: String, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try IdentityRules.check(issuer: issuer, subject: subject)
        try Validate.personPrincipal(principal)
        let target = IdentityRules.target(issuer, subject)
        return try change(
            actor, refusal: AuditEntry(action: .principalLink, targetType: "identity", targetID: target),
            requiring: .admin(doing: "link identities")
        ) { change in
            if let linked = try IdentityQueries.principal(change.db, issuer: issuer, subject: subject) {
                guard linked != principal else {
                    return ChangeResult(changed: false, "\(target) already signs in as \(principal); nothing changed.")
                }
                throw BoardError.conflict(
                    "\(target) signs in as \(linked); unlink it first (plugboard principal unlink --issuer ISSUER --subject SUBJECT)")
            }
            try IdentityQueries.insert(
                change.db, issuer: issuer, subject: subject, principal: principal, by: change.actor.osUser, at: change.now)
            try change.record(
                AuditEntry(
                    action: .principalLink, targetType: "identity", targetID: target,
                    after: .object(["principal": .string(principal)])))
            return ChangeResult(changed: true, "\(target) now signs in as \(principal).")
        }
    }

    /// Unlinks the identity `(issuer, subject)`: its sessions end at their next request, and its next sign-in makes
    /// a new principal. A stop: admins.
    package func unlinkIdentity(issuer: String, subject: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try IdentityRules.check(issuer: issuer, subject: subject)
        let target = IdentityRules.target(issuer, subject)
        return try change(
            actor, refusal: AuditEntry(action: .principalUnlink, targetType: "identity", targetID: target),
            requiring: .admin(doing: "unlink identities")
        ) { change in
            guard let linked = try IdentityQueries.principal(change.db, issuer: issuer, subject: subject) else {
                throw BoardError.notFound("no identity \(target) is linked; see plugboard principal identities")
            }
            try change.db.cachedStatement(sql: "DELETE FROM identities WHERE issuer = ? AND subject = ?").execute(arguments: [
                issuer, subject,
            ])
            try change.record(
                AuditEntry(
                    action: .principalUnlink, targetType: "identity", targetID: target,
                    before: .object(["principal": .string(linked)])))
            return ChangeResult(changed: true, "\(target) no longer signs in as \(linked).")
        }
    }

    /// The linked identities (of one principal), by issuer and subject.
    package func identities(principal: String? = nil) throws(BoardError) -> [IdentityLink] {
        try read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM identities WHERE ?1 IS NULL OR principal = ?1 ORDER BY issuer, subject"),
                arguments: [principal]
            ).map(IdentityQueries.link)
        }
    }

    /// The principal the identity `(issuer, subject)` signs in as, or nil when it is not linked.
    package func identity(issuer: String, subject: String) throws(BoardError) -> IdentityLink? {
        try read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM identities WHERE issuer = ? AND subject = ?"), arguments: [issuer, subject]
            )
            .map(IdentityQueries.link)
        }
    }

    // MARK: Groups to roles

    /// Maps the provider's group `group` to `role` (for `pluginID` when an owner or maintainer), or with `mapped` false
    /// takes that mapping away: admins. Its members get (or lose) the role at their next sign-in. A new mapping widens
    /// who may act: a change request where an environment is protected; taking one away is a stop.
    package func setGroupMapping(
        issuer: String, group: String, role: GroupRole.Role, pluginID: String?, mapped: Bool, by actor: Principal
    ) throws(BoardError) -> ChangeResult {
        let mapping = try GroupMapping(issuer: issuer, group: group, role: role, pluginID: pluginID)
        let action: AuditAction = mapped ? .ssoMapGroup : .ssoUnmapGroup
        return try change(
            actor, refusal: AuditEntry(action: action, targetType: "sso_group", targetID: mapping.target),
            requiring: .admin(doing: "map groups to roles")
        ) { change in
            if mapped, let pluginID { _ = try RegistryQueries.requirePlugin(change.db, pluginID) }
            guard try mapping.exists(change.db) != mapped else {
                if mapped { return ChangeResult(changed: false, "\(mapping.target) is already mapped; nothing changed.") }
                throw BoardError.notFound("no mapping \(mapping.target); see plugboard sso groups")
            }
            let key: StatementArguments = [issuer, group, role.rawValue, pluginID ?? ""]
            if mapped {
                try change.db.cachedStatement(
                    sql: "INSERT INTO sso_group_roles (issuer, group_name, role, plugin_id, added_at, added_by) VALUES (?, ?, ?, ?, ?, ?)"
                ).execute(arguments: key + [change.now, change.actor.osUser])
            } else {
                try change.db.cachedStatement(
                    sql: "DELETE FROM sso_group_roles WHERE issuer = ? AND group_name = ? AND role = ? AND plugin_id = ?"
                ).execute(arguments: key)
            }
            try change.record(
                AuditEntry(
                    action: action, targetType: "sso_group", targetID: mapping.target, before: .object(["mapped": .bool(!mapped)]),
                    after: .object(["mapped": .bool(mapped)])))
            return ChangeResult(
                changed: true,
                mapped
                    ? "Members of \(mapping.target) at their next sign-in."
                    : "No longer: members of \(mapping.target); they lose it at their next sign-in.")
        }
    }

    /// Every mapping of a provider's groups to roles (of one issuer).
    package func groupRoles(issuer: String? = nil) throws(BoardError) -> [GroupRole] {
        try read { db in
            try IdentityQueries.groupRoles(db, issuer: issuer, groups: nil)
        }
    }
}

/// A mapping of a provider's group to a role, checked.
struct GroupMapping {
    let issuer: String
    let group: String
    let role: GroupRole.Role
    let pluginID: String?

    init(issuer: String, group: String, role: GroupRole.Role, pluginID: String?) throws(BoardError) {
        try Validate.issuer(issuer)
        try Validate.providerGroup(group)
        switch (role, pluginID) {
        case (.owner, nil), (.maintainer, nil):
            throw BoardError.invalid("an owner or maintainer role is for one plug-in: give --plugin ID")
        case (.admin, .some), (.readOnly, .some):
            throw BoardError.invalid("the \(role.rawValue) role is board-wide: give --plugin only with owner or maintainer")
        case (_, .some(let id)): try Validate.pluginID(id)
        default: break
        }
        self.issuer = issuer
        self.group = group
        self.role = role
        self.pluginID = pluginID
    }

    /// `group ops of ISSUER → admin` (`… → owner of ID`).
    var target: String { Self.target(issuer: issuer, group: group, role: role.rawValue, pluginID: pluginID) }

    static func target(issuer: String, group: String, role: String, pluginID: String?) -> String {
        "group \(group) of \(issuer) → \(role)\(pluginID.map { " of \($0)" } ?? "")"
    }

    func exists(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM sso_group_roles WHERE issuer = ? AND group_name = ? AND role = ? AND plugin_id = ?"),
            arguments: [issuer, group, role.rawValue, pluginID ?? ""]) ?? false
    }
}

/// What an issuer, a subject and a group may be, and how the audit log names them.
enum IdentityRules {
    static func check(issuer: String, subject: String) throws(BoardError) {
        try Validate.issuer(issuer)
        try Validate.subject(subject)
    }

    /// `SUBJECT at ISSUER`, as the audit log names an identity.
    static func target(_ issuer: String, _ subject: String) -> String { "\(subject) at \(issuer)" }

    /// `sso ISSUER`: who a first sign-in and the roles a sign-in grants are added by.
    static func grantor(_ issuer: String) -> String { "sso \(issuer)" }
}
