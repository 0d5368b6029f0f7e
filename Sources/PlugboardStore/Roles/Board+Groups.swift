import GRDB
package import PlugboardModel

extension Board {
    /// Adds `principal` to the principal group `group` (created with its first member): admins. A group an approval
    /// policy names says who approves change requests there, among those who hold the right (``ApprovalRights``).
    package func addGroupMember(_ group: String, _ principal: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.groupName(group)
        try Validate.personPrincipal(principal)
        return try changeMembership(.group(group, principal), adding: true, .groupAdd, doing: "change groups", by: actor) { change in
            try GroupQueries.insert(change.db, group, principal, by: change.actor, at: change.now)
        }
    }

    /// Removes `principal` from the principal group `group`: admins. A group that loses its last member is gone, and
    /// an approval policy that names it lets nobody approve until it names another.
    package func removeGroupMember(_ group: String, _ principal: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.groupName(group)
        try Validate.principal(principal)
        return try changeMembership(.group(group, principal), adding: false, .groupRemove, doing: "change groups", by: actor) { change in
            try change.db.cachedStatement(sql: "DELETE FROM principal_groups WHERE name = ? AND principal = ?").execute(arguments: [
                group, principal,
            ])
        }
    }

    /// The members of every principal group (or of one), sorted by group and principal.
    package func groupMembers(_ group: String? = nil) throws(BoardError) -> [GroupMember] {
        try read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM principal_groups WHERE ?1 IS NULL OR name = ?1 ORDER BY name, principal"),
                arguments: [group]
            ).map { GroupMember(group: $0["name"], principal: $0["principal"], addedAt: $0["added_at"], addedBy: $0["added_by"]) }
        }
    }
}

/// The SQL of principal groups.
enum GroupQueries {
    static func exists(_ db: Database, _ group: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM principal_groups WHERE name = ? LIMIT 1"), arguments: [group]) ?? false
    }

    static func insert(_ db: Database, _ group: String, _ principal: String, by actor: Principal, at now: String) throws {
        try db.cachedStatement(sql: "INSERT INTO principal_groups (name, principal, added_at, added_by) VALUES (?, ?, ?, ?)").execute(
            arguments: [group, principal, now, actor.osUser])
    }
}

extension Membership {
    /// `principal` as a member of the principal group `group`.
    static func group(_ group: String, _ principal: String) -> Membership {
        Membership(
            principal: principal, targetType: "principal_group", targetID: "\(group)/\(principal)", key: "member",
            standing: "in the group \(group)", listCommand: "plugboard group list",
            isMember: { change in try ApprovalRights.member(change.db, group: group, principal: principal) })
    }
}
