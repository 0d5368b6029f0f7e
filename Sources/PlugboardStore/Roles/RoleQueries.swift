import GRDB
import PlugboardModel

/// The SQL of who may do what: admins and the owners of plug-ins.
enum RoleQueries {
    static func isAdmin(_ db: Database, _ principal: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM admins WHERE principal = ?"), arguments: [principal]) ?? false
    }

    static func adminCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM admins")) ?? 0
    }

    static func admins(_ db: Database) throws -> [BoardAdmin] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM admins ORDER BY principal")).map {
            BoardAdmin(principal: $0["principal"], addedAt: $0["added_at"], addedBy: $0["added_by"])
        }
    }

    static func insertAdmin(_ db: Database, _ principal: String, by actor: Principal, at now: String) throws {
        try db.cachedStatement(sql: "INSERT INTO admins (principal, added_at, added_by) VALUES (?, ?, ?)").execute(arguments: [
            principal, now, actor.osUser,
        ])
    }

    static func deleteAdmin(_ db: Database, _ principal: String) throws {
        try db.cachedStatement(sql: "DELETE FROM admins WHERE principal = ?").execute(arguments: [principal])
    }

    /// The role of `principal` on a plug-in, if any.
    static func role(_ db: Database, pluginID: String, principal: String) throws -> PluginOwner.Role? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT role FROM plugin_owners WHERE plugin_id = ? AND principal = ?"),
            arguments: [pluginID, principal]
        )
        .flatMap(PluginOwner.Role.init(rawValue:))
    }

    /// Whether `principal` owns or maintains at least one plug-in.
    static func holdsPluginRole(_ db: Database, _ principal: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM plugin_owners WHERE principal = ? LIMIT 1"), arguments: [principal])
            ?? false
    }

    static func owners(_ db: Database, pluginID: String) throws -> [PluginOwner] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM plugin_owners WHERE plugin_id = ? ORDER BY role, principal"), arguments: [pluginID]
        ).map {
            PluginOwner(
                principal: $0["principal"], role: PluginOwner.Role(rawValue: $0["role"]) ?? .maintainer, addedAt: $0["added_at"],
                addedBy: $0["added_by"])
        }
    }

    /// How many owners (role `owner`) the plug-in has besides `principal`.
    static func otherOwnerCount(_ db: Database, pluginID: String, besides principal: String) throws -> Int {
        try Int.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) FROM plugin_owners WHERE plugin_id = ? AND role = 'owner' AND principal <> ?"),
            arguments: [pluginID, principal]) ?? 0
    }

    static func saveOwner(_ db: Database, pluginID: String, principal: String, role: PluginOwner.Role, by actor: Principal, at now: String)
        throws
    {
        try db.cachedStatement(
            sql: """
                INSERT INTO plugin_owners (plugin_id, principal, role, added_at, added_by) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (plugin_id, principal) DO UPDATE SET role = excluded.role, added_at = excluded.added_at, added_by = excluded.added_by
                """
        ).execute(arguments: [pluginID, principal, role.rawValue, now, actor.osUser])
    }

    static func deleteOwner(_ db: Database, pluginID: String, principal: String) throws {
        try db.cachedStatement(sql: "DELETE FROM plugin_owners WHERE plugin_id = ? AND principal = ?").execute(arguments: [
            pluginID, principal,
        ])
    }
}
