import Foundation
import GRDB
import PlugboardFlags

/// The kinds of flag, with Unleash's expected lifetimes (after which a flag is "potentially stale").
public enum FlagType: String, Sendable, Hashable, Codable, CaseIterable {
    case release
    case experiment
    case operational
    case killSwitch = "kill-switch"
    case permission

    /// Days after creation when the flag becomes potentially stale; nil for flags meant to live forever.
    public var expectedLifetimeDays: Int? {
        switch self {
        case .release, .experiment: 40
        case .operational: 7
        case .killSwitch, .permission: nil
        }
    }
}

/// A row of `plugboard flag list`: one flag in one environment.
public struct FlagSummary: Sendable, Hashable, Codable {
    public let name: String
    public let type: String
    public let description: String?
    public let owner: String
    public let environment: String
    public let enabled: Bool
    public let strategyCount: Int
    public let variantCount: Int
    public let archived: Bool
    /// Older than its type's expected lifetime (Unleash's rule).
    public let potentiallyStale: Bool
    public let createdAt: String
    public let updatedAt: String
}

/// A flag's definition in one environment.
public struct FlagEnvironmentDefinition: Sendable, Hashable, Codable {
    public let environment: String
    public let enabled: Bool
    public let strategies: [Strategy]
    public let variants: [FeatureVariant]
}

/// Everything the board knows about one flag.
public struct FlagDetail: Sendable, Hashable, Codable {
    public let name: String
    public let type: String
    public let description: String?
    public let owner: String
    public let impressionData: Bool
    public let dependencies: [FeatureDependency]
    public let createdAt: String
    public let createdBy: String
    public let updatedAt: String
    public let archivedAt: String?
    public let potentiallyStale: Bool
    public let environments: [FlagEnvironmentDefinition]
}

extension Validate {
    /// A flag name: 1–255 characters with no whitespace or control characters (Unleash allows UTF-8 names).
    public static func flagName(_ name: String) throws(BoardError) {
        guard !name.isEmpty, name.utf8.count <= 255,
            !name.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control })
        else {
            throw .invalid(
                "flag name '\(printable(name))' is not valid: use 1-255 characters without spaces, for example checkout.new-flow")
        }
    }
}

extension Board {
    // MARK: Reads

    /// The Unleash client-API feature set of one environment: every flag that is not archived, and every segment.
    /// This is what hosts evaluate and what `plugboard flag export` prints.
    ///
    /// - Parameter requireExisting: Refuse an environment the board does not know (`.notFound`), so that an
    ///   operator's typo in `--env` is not taken for an environment where every flag is off. Hosts leave it
    ///   false: an environment nobody has configured yet has every flag off.
    public func featureSet(environment: String, requireExisting: Bool = false) throws(BoardError) -> FeatureSet {
        try Validate.environment(environment)
        return try read { db in
            if requireExisting { try requireEnvironment(db, environment) }
            return try FlagRows.featureSet(db, environment: environment)
        }
    }

    /// Flags with their state in `environment`, sorted by name.
    public func flagSummaries(environment: String, staleOnly: Bool = false, includeArchived: Bool = false) throws(BoardError)
        -> [FlagSummary]
    {
        try Validate.environment(environment)
        return try read { db in
            try requireEnvironment(db, environment)
            var sql = "SELECT s.*, f.description FROM flag_state s JOIN flags f ON f.name = s.name WHERE s.environment = ?"
            if !includeArchived { sql += " AND s.archived = 0" }
            if staleOnly { sql += " AND s.potentially_stale = 1" }
            return try Row.fetchAll(db, sql: sql + " ORDER BY s.name", arguments: [environment]).map { row in
                FlagSummary(
                    name: row["name"], type: row["type"], description: row["description"], owner: row["owner"],
                    environment: row["environment"],
                    enabled: row["enabled"], strategyCount: row["strategy_count"], variantCount: row["variant_count"],
                    archived: row["archived"], potentiallyStale: row["potentially_stale"], createdAt: row["created_at"],
                    updatedAt: row["updated_at"])
            }
        }
    }

    /// One flag with its definition in every environment.
    public func flagDetail(_ name: String) throws(BoardError) -> FlagDetail {
        try Validate.flagName(name)
        return try read { db in
            guard let flag = try Row.fetchOne(db, sql: "SELECT * FROM flags WHERE name = ?", arguments: [name]) else {
                throw BoardError.notFound("flag '\(name)' does not exist; see plugboard flag list")
            }
            let stale =
                try Bool.fetchOne(db, sql: "SELECT potentially_stale FROM flag_state WHERE name = ? LIMIT 1", arguments: [name]) ?? false
            let environments = try String.fetchAll(db, sql: "SELECT name FROM environments ORDER BY name").map { environment in
                let definition = try FlagRows.environmentDefinition(db, flag: name, environment: environment)
                return FlagEnvironmentDefinition(
                    environment: environment, enabled: definition.enabled, strategies: definition.strategies, variants: definition.variants)
            }
            return FlagDetail(
                name: name, type: flag["type"], description: flag["description"], owner: flag["owner"],
                impressionData: flag["impression_data"],
                dependencies: try FlagRows.decode(flag["dependencies_json"], "dependencies_json", of: "flag '\(name)'"),
                createdAt: flag["created_at"], createdBy: flag["created_by"], updatedAt: flag["updated_at"],
                archivedAt: flag["archived_at"], potentiallyStale: stale, environments: environments)
        }
    }

    // MARK: Changes

    /// Creates a flag, disabled in every environment. Anyone who can write the board may; they become its owner.
    public func createFlag(_ name: String, type: FlagType = .release, description: String? = nil, actor: Actor) throws(BoardError)
        -> ChangeResult
    {
        try Validate.flagName(name)
        if let description { try Validate.text(description, field: "the description", limit: 4000) }
        return try write { db in
            if let existing = try Row.fetchOne(db, sql: "SELECT created_at, created_by FROM flags WHERE name = ?", arguments: [name]) {
                throw BoardError.conflict(
                    "flag '\(name)' already exists (created \(existing["created_at"] as String) by \(existing["created_by"] as String)); choose another name"
                )
            }
            let now = Timestamp.now()
            try db.execute(
                sql: """
                    INSERT INTO flags (name, type, description, owner, created_at, created_by, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [name, type.rawValue, description, actor.osUser, now, actor.osUser, now, actor.osUser])
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "flag.create", targetType: "flag", targetID: name,
                    after: .object(["type": .string(type.rawValue), "description": .optional(description), "owner": .string(actor.osUser)])),
                at: now)
            return ChangeResult(
                changed: true,
                "Created the \(type.rawValue) flag '\(name)'; it is off in every environment until you run plugboard flag enable \(name).")
        }
    }

    /// Switches a flag on or off in one environment (created if new).
    public func setFlagEnabled(_ name: String, _ enabled: Bool, environment: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try changeFlagDefinition(name, environment: environment, action: enabled ? "flag.enable" : "flag.disable", actor: actor) {
            definition in
            if definition.enabled == enabled {
                return "flag '\(name)' is already \(enabled ? "enabled" : "disabled") in \(environment); nothing changed."
            }
            definition.enabled = enabled
            return nil
        } done: { _ in
            "\(enabled ? "Enabled" : "Disabled") flag '\(name)' in \(environment)."
        }
    }

    /// Rolls a flag out to `percent` of users in one environment with a `flexibleRollout` strategy.
    ///
    /// With no strategies (or only a `default` one), the flag gets one `flexibleRollout`; with exactly one
    /// `flexibleRollout`, its percentage and stickiness change and its constraints, segments and variants stay.
    /// Anything more elaborate is refused, because a percentage would change what the other strategies mean:
    /// edit such a flag with `flag import`. The flag's enabled state is not changed.
    public func rolloutFlag(_ name: String, percent: Int, stickiness: String = "default", environment: String, actor: Actor)
        throws(BoardError) -> ChangeResult
    {
        guard (0...100).contains(percent) else { throw .invalid("the rollout percentage \(percent) is not between 0 and 100") }
        guard !stickiness.isEmpty, !stickiness.contains(where: \.isWhitespace) else {
            throw .invalid(
                "--stickiness '\(Validate.printable(stickiness))' is not valid: use default, userId, sessionId, random or a context field name"
            )
        }
        return try changeFlagDefinition(name, environment: environment, action: "flag.rollout", actor: actor) { definition in
            let rollout = definition.strategies.indices.filter { definition.strategies[$0].name == "flexibleRollout" }
            let others = definition.strategies.filter { $0.name != "flexibleRollout" && $0.name != "default" }
            if rollout.count == 1 && others.isEmpty && !definition.strategies.contains(where: { $0.name == "default" }) {
                var strategy = definition.strategies[rollout[0]]
                var parameters = strategy.parameters ?? [:]
                if parameters["rollout"] == String(percent) && parameters["stickiness"] == stickiness {
                    return "flag '\(name)' already rolls out to \(percent)% by \(stickiness) in \(environment); nothing changed."
                }
                parameters["rollout"] = String(percent)
                parameters["stickiness"] = stickiness
                parameters["groupId"] = parameters["groupId"] ?? name
                strategy.parameters = parameters
                definition.strategies[rollout[0]] = strategy
            } else if definition.strategies.allSatisfy({
                $0.name == "default" && ($0.constraints ?? []).isEmpty && ($0.segments ?? []).isEmpty
            }) {
                definition.strategies = [
                    Strategy(name: "flexibleRollout", parameters: ["rollout": String(percent), "stickiness": stickiness, "groupId": name])
                ]
            } else {
                throw BoardError.conflict(
                    "flag '\(name)' has \(definition.strategies.count) strategies in \(environment) (\(definition.strategies.map(\.name).joined(separator: ", "))); a percentage would change what they mean, so edit it with plugboard flag import"
                )
            }
            return nil
        } done: { definition in
            "Flag '\(name)' rolls out to \(percent)% of \(stickiness == "default" ? "users" : stickiness) in \(environment)\(definition.enabled ? "" : " (it is disabled there: run plugboard flag enable \(name))")."
        }
    }

    /// Archives a flag (it is no longer evaluated or exported) or brings it back.
    public func archiveFlag(_ name: String, archived: Bool, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.flagName(name)
        return try change(
            actor, refusal: AuditEntry(action: archived ? "flag.archive" : "flag.unarchive", targetType: "flag", targetID: name)
        ) { db in
            let row = try FlagRows.requireFlag(db, name)
            try FlagRows.requireFlagOwner(db, actor: actor, flag: name, owner: row["owner"])
            let isArchived = (row["archived_at"] as String?) != nil
            if isArchived == archived {
                return ChangeResult(changed: false, "flag '\(name)' is \(archived ? "already" : "not") archived; nothing changed.")
            }
            let now = Timestamp.now()
            try db.execute(
                sql: "UPDATE flags SET archived_at = ?, archived_by = ?, updated_at = ?, updated_by = ? WHERE name = ?",
                arguments: [archived ? now : nil, archived ? actor.osUser : nil, now, actor.osUser, name])
            try FlagRows.validateAllEnvironments(db)
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: archived ? "flag.archive" : "flag.unarchive", targetType: "flag", targetID: name,
                    before: .object(["archived": .bool(isArchived)]), after: .object(["archived": .bool(archived)])), at: now)
            return ChangeResult(
                changed: true, archived ? "Archived flag '\(name)'; hosts no longer evaluate it (it is off)." : "Unarchived flag '\(name)'."
            )
        }
    }

    /// Imports an Unleash client-API feature set into one environment, in one transaction.
    ///
    /// Flags in the file are created or replaced in that environment (type, description, dependencies and
    /// impression data are board-wide); flags not in the file are left alone; segments are created or replaced
    /// by id. An archived flag in the file is brought back (a note says so). Flags the file leaves as they were
    /// are not touched and get no audit row. The result must validate as a whole (no unknown operator, invalid
    /// regex/CIDR/semver, dependency cycle…), or nothing changes. Needs a board admin.
    public func importFlags(_ set: FeatureSet, environment: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.environment(environment)
        for feature in set.features {
            try Validate.flagName(feature.name)
            if let type = feature.type, FlagType(rawValue: type) == nil {
                throw .invalid(
                    "flag '\(feature.name)' type: '\(Validate.printable(type))' is not a flag type; use \(FlagType.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
        }
        var names = Set<String>()
        for feature in set.features where !names.insert(feature.name).inserted {
            throw .invalid("the features file defines flag '\(feature.name)' twice")
        }
        let report = set.validate()
        if let first = report.errors.first {
            throw .invalid(
                "the features file is invalid: \(first)"
                    + (report.errors.count > 1 ? " (and \(report.errors.count - 1) more problem(s))" : ""))
        }
        return try change(
            actor, refusal: AuditEntry(action: "flag.import", targetType: "flag_set", targetID: environment, environment: environment)
        ) { db in
            try requireAdmin(db, actor: actor, doing: "import flags")
            let now = Timestamp.now()
            try ensureEnvironment(db, environment, actor: actor, at: now)
            var changed = 0
            for segment in set.segments ?? [] {
                let constraints = FlagRows.encode(segment.constraints)
                let before = try Row.fetchOne(db, sql: "SELECT name, constraints_json FROM segments WHERE id = ?", arguments: [segment.id])
                if before?["name"] as String? == segment.name, before?["constraints_json"] as String? == constraints { continue }
                try db.execute(
                    sql: """
                        INSERT INTO segments (id, name, constraints_json, updated_at, updated_by) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET name = excluded.name, constraints_json = excluded.constraints_json,
                            updated_at = excluded.updated_at, updated_by = excluded.updated_by
                        """, arguments: [segment.id, segment.name, constraints, now, actor.osUser])
                try AuditLog.append(
                    db, actor: actor,
                    entry: AuditEntry(
                        action: "segment.import", targetType: "segment", targetID: String(segment.id),
                        before: before.map { .object(["name": .optional($0["name"]), "constraints": .rawJSON($0["constraints_json"])]) },
                        after: .object(["name": .optional(segment.name), "constraints": .rawJSON(constraints)])), at: now)
            }
            var unarchived: [String] = []
            for feature in set.features {
                let type = feature.type.flatMap(FlagType.init(rawValue:))
                let existing = try Row.fetchOne(db, sql: "SELECT * FROM flags WHERE name = ?", arguments: [feature.name])
                let before = try existing.map { _ in try FlagRows.auditState(db, flag: feature.name, environment: environment) }
                // Each flag in a savepoint: a flag the file leaves as it was is rolled back, so that its rows (and
                // their updated_at) stay untouched and no audit row is needed.
                var after: AuditJSON?
                try db.inSavepoint {
                    if existing == nil {
                        try db.execute(
                            sql: """
                                INSERT INTO flags (name, type, description, owner, impression_data, dependencies_json, created_at, created_by, updated_at, updated_by)
                                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                                """,
                            arguments: [
                                feature.name, (type ?? .release).rawValue, feature.description, actor.osUser,
                                feature.impressionData ?? false,
                                FlagRows.encode(feature.dependencies ?? []), now, actor.osUser, now, actor.osUser,
                            ])
                    } else {
                        try db.execute(
                            sql: """
                                UPDATE flags SET type = ?, description = ?, impression_data = ?, dependencies_json = ?, archived_at = NULL, archived_by = NULL,
                                    updated_at = ?, updated_by = ? WHERE name = ?
                                """,
                            arguments: [
                                (type ?? FlagType(rawValue: existing?["type"] ?? "") ?? .release).rawValue, feature.description,
                                feature.impressionData ?? false, FlagRows.encode(feature.dependencies ?? []), now, actor.osUser,
                                feature.name,
                            ])
                    }
                    try FlagRows.saveDefinition(
                        db, flag: feature.name, environment: environment,
                        definition: .init(enabled: feature.enabled, strategies: feature.strategies ?? [], variants: feature.variants ?? []),
                        actor: actor, at: now)
                    let state = try FlagRows.auditState(db, flag: feature.name, environment: environment)
                    if state == before { return .rollback }
                    after = state
                    return .commit
                }
                guard let after else { continue }
                changed += 1
                if (existing?["archived_at"] as String?) != nil { unarchived.append(feature.name) }
                try AuditLog.append(
                    db, actor: actor,
                    entry: AuditEntry(
                        action: "flag.import", targetType: "flag", targetID: feature.name, environment: environment, before: before,
                        after: after), at: now)
            }
            try FlagRows.validateAllEnvironments(db)
            let warnings =
                unarchived.map { "flag '\($0)' was archived; the import brought it back in every environment" }
                + report.warnings.map(\.description)
            return ChangeResult(
                changed: changed > 0,
                "Imported \(set.features.count) flag(s) and \((set.segments ?? []).count) segment(s) into \(environment): \(changed) flag(s) changed.",
                notes: warnings)
        }
    }

    /// Applies `edit` to a flag's definition in one environment, validates the environment's whole feature set,
    /// and audits the before and after. `edit` returns a message when there is nothing to change.
    private func changeFlagDefinition(
        _ name: String, environment: String, action: String, actor: Actor,
        edit: (inout FlagRows.Definition) throws -> String?,
        done: (FlagRows.Definition) -> String
    ) throws(BoardError) -> ChangeResult {
        try Validate.flagName(name)
        try Validate.environment(environment)
        return try change(actor, refusal: AuditEntry(action: action, targetType: "flag", targetID: name, environment: environment)) { db in
            let row = try FlagRows.requireFlag(db, name)
            try FlagRows.requireFlagOwner(db, actor: actor, flag: name, owner: row["owner"])
            if (row["archived_at"] as String?) != nil {
                throw BoardError.conflict("flag '\(name)' is archived; unarchive it first with plugboard flag unarchive \(name)")
            }
            var definition = try FlagRows.environmentDefinition(db, flag: name, environment: environment)
            if let unchanged = try edit(&definition) { return ChangeResult(changed: false, unchanged) }
            let now = Timestamp.now()
            let before = try FlagRows.auditState(db, flag: name, environment: environment)
            try ensureEnvironment(db, environment, actor: actor, at: now)
            try FlagRows.saveDefinition(db, flag: name, environment: environment, definition: definition, actor: actor, at: now)
            try db.execute(sql: "UPDATE flags SET updated_at = ?, updated_by = ? WHERE name = ?", arguments: [now, actor.osUser, name])
            try FlagRows.validate(db, environment: environment)
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: action, targetType: "flag", targetID: name, environment: environment,
                    before: before, after: try FlagRows.auditState(db, flag: name, environment: environment)), at: now)
            return ChangeResult(changed: true, done(definition))
        }
    }
}

/// Reading and writing flag rows; shared by the operations above.
enum FlagRows {
    struct Definition: Equatable {
        var enabled: Bool
        var strategies: [Strategy]
        var variants: [FeatureVariant]
    }

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

    static func requireFlag(_ db: Database, _ name: String) throws -> Row {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM flags WHERE name = ?", arguments: [name]) else {
            throw BoardError.notFound("flag '\(name)' does not exist; create it with plugboard flag create \(name)")
        }
        return row
    }

    static func requireFlagOwner(_ db: Database, actor: Actor, flag: String, owner: String) throws {
        if try owner == actor.osUser || isAdmin(db, actor.osUser) { return }
        throw BoardError.notAllowed("\(actor.osUser) may not change flag '\(flag)': only its owner (\(owner)) or a board admin may")
    }

    static func environmentDefinition(_ db: Database, flag: String, environment: String) throws -> Definition {
        let row = try Row.fetchOne(
            db, sql: "SELECT enabled, strategies_json, variants_json FROM flag_environments WHERE flag_name = ? AND environment = ?",
            arguments: [flag, environment])
        let owner = "flag '\(flag)' in \(environment)"
        return Definition(
            enabled: row?["enabled"] ?? false, strategies: try decode(row?["strategies_json"], "strategies_json", of: owner),
            variants: try decode(row?["variants_json"], "variants_json", of: owner))
    }

    static func saveDefinition(_ db: Database, flag: String, environment: String, definition: Definition, actor: Actor, at now: String)
        throws
    {
        try db.execute(
            sql: """
                INSERT INTO flag_environments (flag_name, environment, enabled, strategies_json, variants_json, updated_at, updated_by)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (flag_name, environment) DO UPDATE SET enabled = excluded.enabled, strategies_json = excluded.strategies_json,
                    variants_json = excluded.variants_json, updated_at = excluded.updated_at, updated_by = excluded.updated_by
                """,
            arguments: [
                flag, environment, definition.enabled, encode(definition.strategies), encode(definition.variants), now, actor.osUser,
            ])
    }

    /// The audit view of a flag in one environment: its board-wide fields and that environment's definition.
    static func auditState(_ db: Database, flag: String, environment: String) throws -> AuditJSON {
        let row = try requireFlag(db, flag)
        let env = try Row.fetchOne(
            db, sql: "SELECT enabled, strategies_json, variants_json FROM flag_environments WHERE flag_name = ? AND environment = ?",
            arguments: [flag, environment])
        return .object([
            "type": .string(row["type"]), "description": .optional(row["description"]),
            "archived": .bool((row["archived_at"] as String?) != nil),
            "impressionData": .bool(row["impression_data"]),
            "dependencies": .rawJSON(row["dependencies_json"]), "enabled": .bool(env?["enabled"] ?? false),
            "strategies": .rawJSON(env?["strategies_json"] ?? "[]"), "variants": .rawJSON(env?["variants_json"] ?? "[]"),
        ])
    }

    /// The client-API feature set of one environment: flags that are not archived, and all segments.
    static func featureSet(_ db: Database, environment: String) throws -> FeatureSet {
        let features = try Row.fetchAll(
            db,
            sql: """
                SELECT f.name, f.type, f.description, f.impression_data, f.dependencies_json,
                       ifnull(fe.enabled, 0) AS enabled, ifnull(fe.strategies_json, '[]') AS strategies_json, ifnull(fe.variants_json, '[]') AS variants_json
                FROM flags f LEFT JOIN flag_environments fe ON fe.flag_name = f.name AND fe.environment = ?
                WHERE f.archived_at IS NULL ORDER BY f.name
                """, arguments: [environment]
        ).map { row in
            let owner = "flag '\(row["name"] as String)'"
            let dependencies: [FeatureDependency] = try decode(row["dependencies_json"], "dependencies_json", of: owner)
            let variants: [FeatureVariant] = try decode(row["variants_json"], "variants_json", of: owner + " in \(environment)")
            return FeatureFlag(
                name: row["name"], type: row["type"], description: row["description"], project: "default",
                enabled: row["enabled"], stale: nil, impressionData: row["impression_data"],
                strategies: try decode(row["strategies_json"], "strategies_json", of: owner + " in \(environment)"), variants: variants,
                dependencies: dependencies.isEmpty ? nil : dependencies)
        }
        let segments = try Row.fetchAll(db, sql: "SELECT id, name, constraints_json FROM segments ORDER BY id").map { row in
            Segment(
                id: row["id"], name: row["name"],
                constraints: try decode(row["constraints_json"], "constraints_json", of: "segment \(row["id"] as Int)"))
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
        for environment in try String.fetchAll(db, sql: "SELECT name FROM environments") {
            try validate(db, environment: environment)
        }
    }
}
