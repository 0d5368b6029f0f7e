import Foundation
import GRDB
import PlugboardFlags
import PlugboardModel

/// The SQL of the flag store: flags, their definition per environment, and segments.
enum FlagQueries {
    /// A flag's board-wide row.
    struct FlagRecord {
        var name: String
        var type: String
        var description: String?
        var owner: String
        var impressionData: Bool
        var dependenciesJSON: String
        var createdAt: String
        var createdBy: String
        var updatedAt: String
        var archivedAt: String?

        var isArchived: Bool { archivedAt != nil }
    }

    /// A flag's definition in one environment.
    struct Definition: Equatable {
        var enabled: Bool
        var strategies: [Strategy]
        var variants: [FeatureVariant]
    }

    // MARK: Encoding

    /// Canonical JSON (sorted keys) of a definition part, as stored.
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    /// Decodes a JSON array column. Unreadable JSON (someone edited the board by hand) is an integrity error,
    /// never an empty list: an empty strategy list would turn an enabled flag on for everyone.
    static func decode<T: Decodable>(_ text: String?, _ column: String, of owner: String) throws -> [T] {
        guard let text else { return [] }
        do {
            return try JSONDecoder().decode([T].self, from: Data(text.utf8))
        } catch {
            throw BoardError(
                .integrity,
                "\(owner) has an unreadable \(column) in the board (it was edited outside Plugboard); re-import its definition with plugboard flag import"
            )
        }
    }

    // MARK: Flags

    static func flag(_ db: Database, _ name: String) throws -> FlagRecord? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM flags WHERE name = ?"), arguments: [name]).map { row in
            FlagRecord(
                name: row["name"], type: row["type"], description: row["description"], owner: row["owner"],
                impressionData: row["impression_data"],
                dependenciesJSON: row["dependencies_json"], createdAt: row["created_at"], createdBy: row["created_by"],
                updatedAt: row["updated_at"],
                archivedAt: row["archived_at"])
        }
    }

    static func requireFlag(_ db: Database, _ name: String) throws -> FlagRecord {
        guard let flag = try flag(db, name) else {
            throw BoardError.notFound("flag '\(name)' does not exist; create it with plugboard flag create \(name)")
        }
        return flag
    }

    /// Inserts a flag; `owner` and the creator are the actor.
    static func insertFlag(
        _ db: Database, name: String, type: FlagType, description: String?, impressionData: Bool = false, dependenciesJSON: String = "[]",
        by actor: Principal, at now: String
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO flags (name, type, description, owner, impression_data, dependencies_json, created_at, created_by, updated_at, updated_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            name, type.rawValue, description, actor.osUser, impressionData, dependenciesJSON, now, actor.osUser, now, actor.osUser,
        ])
    }

    /// Replaces a flag's board-wide fields as an import does, bringing it back if it was archived.
    static func replaceFlag(
        _ db: Database, name: String, type: FlagType, description: String?, impressionData: Bool, dependenciesJSON: String,
        by actor: Principal, at now: String
    ) throws {
        try db.cachedStatement(
            sql: """
                UPDATE flags SET type = ?, description = ?, impression_data = ?, dependencies_json = ?, archived_at = NULL, archived_by = NULL,
                    updated_at = ?, updated_by = ? WHERE name = ?
                """
        ).execute(arguments: [type.rawValue, description, impressionData, dependenciesJSON, now, actor.osUser, name])
    }

    static func touchFlag(_ db: Database, _ name: String, by actor: Principal, at now: String) throws {
        try db.cachedStatement(sql: "UPDATE flags SET updated_at = ?, updated_by = ? WHERE name = ?").execute(arguments: [
            now, actor.osUser, name,
        ])
    }

    static func setArchived(_ db: Database, _ name: String, _ archived: Bool, by actor: Principal, at now: String) throws {
        try db.cachedStatement(sql: "UPDATE flags SET archived_at = ?, archived_by = ?, updated_at = ?, updated_by = ? WHERE name = ?")
            .execute(arguments: [archived ? now : nil, archived ? actor.osUser : nil, now, actor.osUser, name])
    }

    static func isPotentiallyStale(_ db: Database, _ name: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT potentially_stale FROM flag_state WHERE name = ? LIMIT 1"), arguments: [name])
            ?? false
    }

    static func summaries(_ db: Database, environment: String, staleOnly: Bool, includeArchived: Bool) throws -> [FlagSummary] {
        var sql = "SELECT s.*, f.description FROM flag_state s JOIN flags f ON f.name = s.name WHERE s.environment = ?"
        if !includeArchived { sql += " AND s.archived = 0" }
        if staleOnly { sql += " AND s.potentially_stale = 1" }
        return try Row.fetchAll(db, sql: sql + " ORDER BY s.name", arguments: [environment]).map { row in
            FlagSummary(
                name: row["name"], type: row["type"], description: row["description"], owner: row["owner"], environment: row["environment"],
                enabled: row["enabled"], strategyCount: row["strategy_count"], variantCount: row["variant_count"],
                archived: row["archived"],
                potentiallyStale: row["potentially_stale"], createdAt: row["created_at"], updatedAt: row["updated_at"])
        }
    }

    // MARK: Definitions per environment

    static func definition(_ db: Database, flag: String, environment: String) throws -> Definition {
        let row = try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT enabled, strategies_json, variants_json FROM flag_environments WHERE flag_name = ? AND environment = ?"),
            arguments: [flag, environment])
        let owner = "flag '\(flag)' in \(environment)"
        return Definition(
            enabled: row?["enabled"] ?? false, strategies: try decode(row?["strategies_json"], "strategies_json", of: owner),
            variants: try decode(row?["variants_json"], "variants_json", of: owner))
    }

    static func saveDefinition(
        _ db: Database, flag: String, environment: String, definition: Definition, by actor: Principal, at now: String
    )
        throws
    {
        try db.cachedStatement(
            sql: """
                INSERT INTO flag_environments (flag_name, environment, enabled, strategies_json, variants_json, updated_at, updated_by)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (flag_name, environment) DO UPDATE SET enabled = excluded.enabled, strategies_json = excluded.strategies_json,
                    variants_json = excluded.variants_json, updated_at = excluded.updated_at, updated_by = excluded.updated_by
                """
        ).execute(arguments: [
            flag, environment, definition.enabled, encode(definition.strategies), encode(definition.variants), now, actor.osUser,
        ])
    }

    /// The audit view of a flag in one environment: its board-wide fields and that environment's definition.
    static func auditState(_ db: Database, flag: String, environment: String) throws -> AuditJSON {
        let record = try requireFlag(db, flag)
        let env = try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT enabled, strategies_json, variants_json FROM flag_environments WHERE flag_name = ? AND environment = ?"),
            arguments: [flag, environment])
        return .object([
            "type": .string(record.type), "description": .optional(record.description), "archived": .bool(record.isArchived),
            "impressionData": .bool(record.impressionData), "dependencies": .rawJSON(record.dependenciesJSON),
            "enabled": .bool(env?["enabled"] ?? false), "strategies": .rawJSON(env?["strategies_json"] ?? "[]"),
            "variants": .rawJSON(env?["variants_json"] ?? "[]"),
        ])
    }

    // MARK: Segments

    static func segment(_ db: Database, id: Int) throws -> (name: String?, constraintsJSON: String)? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT name, constraints_json FROM segments WHERE id = ?"), arguments: [id]).map {
            ($0["name"], $0["constraints_json"])
        }
    }

    static func saveSegment(_ db: Database, id: Int, name: String?, constraintsJSON: String, by actor: Principal, at now: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO segments (id, name, constraints_json, updated_at, updated_by) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET name = excluded.name, constraints_json = excluded.constraints_json,
                    updated_at = excluded.updated_at, updated_by = excluded.updated_by
                """
        ).execute(arguments: [id, name, constraintsJSON, now, actor.osUser])
    }

    // MARK: The feature set

    /// The client-API feature set of one environment: flags that are not archived, and all segments. A `REGEX` pattern
    /// stored in `values` (boards accepted that before) is read into `value`, where every client looks
    /// (``Constraint/regexPatternInValue``).
    static func featureSet(_ db: Database, environment: String) throws -> FeatureSet {
        let features = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT f.name, f.type, f.description, f.impression_data, f.dependencies_json,
                           ifnull(fe.enabled, 0) AS enabled, ifnull(fe.strategies_json, '[]') AS strategies_json, ifnull(fe.variants_json, '[]') AS variants_json
                    FROM flags f LEFT JOIN flag_environments fe ON fe.flag_name = f.name AND fe.environment = ?
                    WHERE f.archived_at IS NULL ORDER BY f.name
                    """), arguments: [environment]
        ).map { row in
            let owner = "flag '\(row["name"] as String)'"
            let dependencies: [FeatureDependency] = try decode(row["dependencies_json"], "dependencies_json", of: owner)
            let variants: [FeatureVariant] = try decode(row["variants_json"], "variants_json", of: owner + " in \(environment)")
            var strategies: [Strategy] = try decode(row["strategies_json"], "strategies_json", of: owner + " in \(environment)")
            for index in strategies.indices { strategies[index].constraints = strategies[index].constraints?.map(\.regexPatternInValue) }
            return FeatureFlag(
                name: row["name"], type: row["type"], description: row["description"], project: "default",
                enabled: row["enabled"], stale: nil, impressionData: row["impression_data"], strategies: strategies, variants: variants,
                dependencies: dependencies.isEmpty ? nil : dependencies)
        }
        let segments = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, name, constraints_json FROM segments ORDER BY id")).map { row in
            let constraints: [Constraint] = try decode(row["constraints_json"], "constraints_json", of: "segment \(row["id"] as Int)")
            return Segment(id: row["id"], name: row["name"], constraints: constraints.map(\.regexPatternInValue))
        }
        return FeatureSet(version: 2, features: features, segments: segments)
    }

    /// Refuses (rolls back) a change that leaves an environment's feature set invalid.
    static func validate(_ db: Database, environment: String) throws {
        let report = try featureSet(db, environment: environment).validate()
        if let first = report.errors.first {
            throw BoardError.invalid("the change would leave the flags of \(environment) invalid: \(first)")
        }
    }

    static func validateAllEnvironments(_ db: Database) throws {
        for environment in try RegistryQueries.environments(db) {
            try validate(db, environment: environment)
        }
    }
}
