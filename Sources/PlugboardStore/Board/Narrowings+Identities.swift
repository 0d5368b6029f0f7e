import GRDB
import PlugboardModel

/// Who signs in as whom, and what a provider's groups grant, on the board a restore replaces. A restored copy keeps
/// an identity's link only where the replaced board has the same link, and a group's mapping only where the replaced
/// board has it: going back in time never lets an unlinked account sign in as its principal again, nor brings back a
/// mapping that made a group's members admins, owners or maintainers.
struct IdentityNarrowings: Sendable {
    struct Mapping: Sendable, Hashable {
        let issuer: String
        let group: String
        let role: String
        let pluginID: String
    }

    /// The principal of each linked `(issuer, subject)`, keyed by its audit target.
    var links: [String: String] = [:]
    var mappings: Set<Mapping> = []

    /// Reads the links and mappings of the board being replaced; a board made before sign-in has none.
    static func read(_ db: Database) throws -> IdentityNarrowings {
        var records = IdentityNarrowings()
        guard try db.tableExists("identities") else { return records }
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT issuer, subject, principal FROM identities")) {
            records.links[IdentityRules.target(row[0], row[1])] = row[2]
        }
        records.mappings = Set(
            try Row.fetchAll(db.cachedStatement(sql: "SELECT issuer, group_name, role, plugin_id FROM sso_group_roles")).map(Mapping.init))
        return records
    }

    /// Unlinks, on the copy of `change`, each identity that the replaced board does not link to the same principal,
    /// and takes away each group mapping it does not have; `add` records each as a narrowing carried forward.
    func narrow(
        _ change: AuditedChange, _ add: (String, String, String, String?, String, Narrowings.Made.Key, AuditJSON, AuditJSON) -> Void
    ) throws {
        let db = change.db
        guard try db.tableExists("identities") else { return }
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT issuer, subject, principal FROM identities ORDER BY 1, 2")) {
            let (issuer, subject, principal): (String, String, String) = (row[0], row[1], row[2])
            let target = IdentityRules.target(issuer, subject)
            let kept = links[target]
            guard kept != principal else { continue }
            try db.cachedStatement(sql: "DELETE FROM identities WHERE issuer = ? AND subject = ?").execute(arguments: [issuer, subject])
            add(
                "identity unlink", "identity", target, nil,
                kept.map { "signs in as \($0) on the replaced board" } ?? "not linked on the replaced board", .identity(target),
                .object(["principal": .string(principal)]), .object(["principal": .null]))
        }
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT issuer, group_name, role, plugin_id FROM sso_group_roles ORDER BY 1, 2, 3, 4"))
        {
            let mapping = Mapping(row: row)
            guard !mappings.contains(mapping) else { continue }
            try db.cachedStatement(sql: "DELETE FROM sso_group_roles WHERE issuer = ? AND group_name = ? AND role = ? AND plugin_id = ?")
                .execute(arguments: [mapping.issuer, mapping.group, mapping.role, mapping.pluginID])
            let target = GroupMapping.target(
                issuer: mapping.issuer, group: mapping.group, role: mapping.role,
                pluginID: mapping.pluginID.isEmpty ? nil : mapping.pluginID)
            add(
                "group mapping removal", "sso_group", target, nil, "not mapped on the replaced board", .groupMapping(target),
                .object(["mapped": .bool(true)]), .object(["mapped": .bool(false)]))
        }
    }
}

extension IdentityNarrowings.Mapping {
    init(row: Row) { self.init(issuer: row[0], group: row[1], role: row[2], pluginID: row[3]) }
}
