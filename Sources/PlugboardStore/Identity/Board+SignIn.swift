import Foundation
import GRDB
package import PlugboardModel

extension Board {
    /// Signs in the identity provider's account `(issuer, subject)`, whose token the caller verified: the principal it
    /// acts as, made on its first sign-in (named `name`, or `name-2`, `name-3`, … when another principal has the name; an
    /// identity is never joined to an existing principal by name), with the roles its `groups` map to granted and the
    /// roles an earlier sign-in granted that no group maps to any more taken back (`sso.grant`, `sso.revoke`). `via` is
    /// how the sign-in came (`console (oidc ISSUER) from ADDRESS`), recorded on each row it writes.
    package func signIn(issuer: String, subject: String, name: String, groups: [String], via: String) throws(BoardError)
        -> SignedInIdentity
    {
        try IdentityRules.check(issuer: issuer, subject: subject)
        for group in groups { try Validate.providerGroup(group) }
        let existing = try identity(issuer: issuer, subject: subject)
        let principal: String
        if let known = existing?.principal {
            principal = known
        } else {
            principal = try read { db in try IdentityQueries.freeName(db, from: name) }
        }
        let actor = try Principal(osUser: principal, via: via)
        let target = IdentityRules.target(issuer, subject)
        return try change(actor, refusal: AuditEntry(action: .ssoSignIn, targetType: "identity", targetID: target)) { change in
            let linked = try IdentityQueries.principal(change.db, issuer: issuer, subject: subject)
            guard linked == existing?.principal else {
                throw BoardError.conflict("\(target) was linked or unlinked during the sign-in; sign in again")
            }
            if linked == nil {
                guard try IdentityQueries.nameIsFree(change.db, principal) else {
                    throw BoardError.conflict("the name \(principal) was taken during the sign-in; sign in again")
                }
                try IdentityQueries.insert(
                    change.db, issuer: issuer, subject: subject, principal: principal, by: IdentityRules.grantor(issuer), at: change.now)
                try change.record(
                    AuditEntry(
                        action: .ssoSignIn, targetType: "identity", targetID: target, after: .object(["principal": .string(principal)])))
            }
            let roles = try IdentityQueries.groupRoles(change.db, issuer: issuer, groups: groups)
            let changes = try GroupGrants(principal: principal, issuer: issuer, roles: roles).apply(change)
            let readOnly = roles.contains { $0.role == .readOnly } && !roles.contains { $0.role != .readOnly }
            return SignedInIdentity(principal: principal, created: linked == nil, readOnly: readOnly, changes: changes)
        }
    }
}

/// The roles a sign-in's groups give: granted where missing, and those an earlier sign-in of the issuer granted that no
/// group gives any more taken back. Roles given by hand (`admin add`, `owner add`) are never touched.
struct GroupGrants {
    let principal: String
    let issuer: String
    let roles: [GroupRole]

    func apply(_ change: AuditedChange) throws -> [String] {
        let db = change.db
        let grantor = IdentityRules.grantor(issuer)
        var said: [String] = []
        let admin = roles.contains { $0.role == .admin }
        let grantedAdmin =
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM admins WHERE principal = ? AND added_by = ?"), arguments: [principal, grantor])
            ?? false
        if admin, try !RoleQueries.isAdmin(db, principal) {
            try db.cachedStatement(sql: "INSERT INTO admins (principal, added_at, added_by) VALUES (?, ?, ?)").execute(arguments: [
                principal, change.now, grantor,
            ])
            try record(change, .ssoGrant, "admin", principal, because: "admin")
            said.append("\(principal) is now a board admin (a group of \(issuer))")
        } else if !admin, grantedAdmin, try RoleQueries.adminCount(db) > 1 {
            try db.cachedStatement(sql: "DELETE FROM admins WHERE principal = ?").execute(arguments: [principal])
            try record(change, .ssoRevoke, "admin", principal, because: "admin")
            said.append("\(principal) is no longer a board admin (no group of \(issuer) maps to it)")
        }
        // Owner and maintainer roles, one per plug-in: the strongest a group gives.
        var wanted: [String: PluginOwner.Role] = [:]
        for role in roles {
            guard let plugin = role.pluginID, let owner = PluginOwner.Role(rawValue: role.role.rawValue) else { continue }
            if wanted[plugin] != .owner { wanted[plugin] = owner }
        }
        let granted = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT plugin_id, role FROM plugin_owners WHERE principal = ? AND added_by = ?"),
            arguments: [principal, grantor]
        ).map { (plugin: $0["plugin_id"] as String, role: $0["role"] as String) }
        for (plugin, role) in wanted.sorted(by: { $0.key < $1.key }) {
            let current = try RoleQueries.role(db, pluginID: plugin, principal: principal)
            let mine = granted.contains { $0.plugin == plugin }
            guard current == nil || (mine && current != role) else { continue }
            try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO plugin_owners (plugin_id, principal, role, added_at, added_by) VALUES (?, ?, ?, ?, ?)"
            ).execute(arguments: [plugin, principal, role.rawValue, change.now, grantor])
            try record(change, .ssoGrant, "plugin_owner", "\(plugin)/\(principal)", because: role.rawValue)
            said.append("\(principal) is now \(role.rawValue) of \(plugin) (a group of \(issuer))")
        }
        for row in granted where wanted[row.plugin] == nil {
            try db.cachedStatement(sql: "DELETE FROM plugin_owners WHERE plugin_id = ? AND principal = ?").execute(arguments: [
                row.plugin, principal,
            ])
            try record(change, .ssoRevoke, "plugin_owner", "\(row.plugin)/\(principal)", because: row.role)
            said.append("\(principal) is no longer \(row.role) of \(row.plugin) (no group of \(issuer) maps to it)")
        }
        return said
    }

    private func record(_ change: AuditedChange, _ action: AuditAction, _ type: String, _ id: String, because role: String) throws {
        let groups = roles.filter { $0.role.rawValue == role }.map(\.group).sorted()
        try change.record(
            AuditEntry(
                action: action, targetType: type, targetID: id,
                reason: action == .ssoGrant ? "groups of \(issuer)" : "no group of \(issuer) maps to \(role) any more",
                before: action == .ssoGrant ? nil : .object(["role": .string(role)]),
                after: action == .ssoGrant ? .object(["role": .string(role), "groups": .array(groups.map { .string($0) })]) : nil))
    }
}

/// The SQL of identities and group mappings.
enum IdentityQueries {
    static func principal(_ db: Database, issuer: String, subject: String) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT principal FROM identities WHERE issuer = ? AND subject = ?"), arguments: [issuer, subject])
    }

    static func insert(_ db: Database, issuer: String, subject: String, principal: String, by creator: String, at now: String) throws {
        try db.cachedStatement(sql: "INSERT INTO identities (issuer, subject, principal, created_at, created_by) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [issuer, subject, principal, now, creator])
    }

    static func link(_ row: Row) -> IdentityLink {
        IdentityLink(
            issuer: row["issuer"], subject: row["subject"], principal: row["principal"], createdAt: row["created_at"],
            createdBy: row["created_by"])
    }

    /// The mappings of `issuer` (or every issuer) for `groups` (or every group).
    static func groupRoles(_ db: Database, issuer: String?, groups: [String]?) throws -> [GroupRole] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT * FROM sso_group_roles WHERE (?1 IS NULL OR issuer = ?1)
                    AND (?2 IS NULL OR group_name IN (SELECT value FROM json_each(?2))) ORDER BY issuer, group_name, role, plugin_id
                    """),
            arguments: [issuer, groups.map { AuditJSON.array($0.map(AuditJSON.string)).canonicalText }]
        ).compactMap { row in
            guard let role = GroupRole.Role(rawValue: row["role"]) else { return nil }
            let plugin: String = row["plugin_id"]
            return GroupRole(
                issuer: row["issuer"], group: row["group_name"], role: role, pluginID: plugin.isEmpty ? nil : plugin,
                addedAt: row["added_at"],
                addedBy: row["added_by"])
        }
    }

    /// Whether no principal of the board has the name: no identity, role, token, group, approver or audit row names it.
    static func nameIsFree(_ db: Database, _ name: String) throws -> Bool {
        let taken = try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT 1 WHERE EXISTS (SELECT 1 FROM identities WHERE principal = ?1)
                    OR EXISTS (SELECT 1 FROM admins WHERE principal = ?1) OR EXISTS (SELECT 1 FROM plugin_owners WHERE principal = ?1)
                    OR EXISTS (SELECT 1 FROM access_tokens WHERE principal = ?1) OR EXISTS (SELECT 1 FROM principal_groups WHERE principal = ?1)
                    OR EXISTS (SELECT 1 FROM approvers WHERE principal = ?1) OR EXISTS (SELECT 1 FROM audit_log WHERE actor = ?1)
                    """), arguments: [name])
        return taken != true
    }

    /// A free principal name from the name the provider sent: its characters a principal may have, then `-2`, `-3`, ….
    static func freeName(_ db: Database, from name: String) throws -> String {
        var base = String(String.UnicodeScalarView(name.unicodeScalars.filter { $0.isASCII && IdentityQueries.allowed($0) }).prefix(100))
        while base.hasPrefix("-") { base.removeFirst() }
        if base.isEmpty || base.lowercased().hasPrefix(Validate.reservedPrincipalPrefix) { base = "person" }
        if try nameIsFree(db, base) { return base }
        for suffix in 2...10_000 where try nameIsFree(db, "\(base)-\(suffix)") { return "\(base)-\(suffix)" }
        throw BoardError.conflict("no free principal name for \(base); link the identity to a principal with plugboard principal link")
    }

    private static func allowed(_ scalar: Unicode.Scalar) -> Bool {
        CharacterSet.alphanumerics.contains(scalar) || "._@+-".unicodeScalars.contains(scalar)
    }
}
