import Foundation
import GRDB
import PlugboardModel
import PlugboardVersioning

/// One row of `advisories`, as the board reads it.
struct StoredAdvisory {
    let id: String
    let modified: String
    let published: String?
    let withdrawn: String?
    let aliases: [String]
    let summary: String?
    let severity: AdvisorySeverity
    let raw: String
    let source: String
    let importedAt: String
    let importedBy: String
    let withdrawnAt: String?
    let withdrawnBy: String?
    let withdrawReason: String?

    /// When it stopped standing: the publisher's withdrawal, else this board's.
    var withdrawal: String? { withdrawnAt ?? withdrawn }

    /// How the audit log shows it.
    var json: AuditJSON {
        .object([
            "modified": .string(modified), "severity": .string(severity.rawValue), "summary": .optional(summary),
            "aliases": .array(aliases.map(AuditJSON.string)), "withdrawn": .optional(withdrawal), "source": .string(source),
        ])
    }
}

/// The SQL of advisories: `advisories`, `advisory_ranges`, `advisory_actions` and `advisory_policies`.
enum AdvisoryQueries {
    /// Whether the board has the advisories' tables (a board migrated before them has not).
    static func hasTables(_ db: Database) throws -> Bool { try db.tableExists("advisories") }

    static func stored(_ db: Database, _ id: String) throws -> StoredAdvisory? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM advisories WHERE id = ?"), arguments: [id]).map(advisory)
    }

    /// Every advisory, by id.
    static func all(_ db: Database) throws -> [StoredAdvisory] {
        guard try hasTables(db) else { return [] }
        return try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM advisories ORDER BY id")).map(advisory)
    }

    /// Writes `document` in place of the advisory of its id (its ranges replaced; a withdrawal made on this board kept).
    /// Its statements are prepared once per connection: an import writes up to 200 documents in one change.
    static func save(_ db: Database, _ document: OSVDocument, source: String, at now: String, by actor: Principal) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO advisories (id, modified, published, withdrawn, aliases_json, summary, severity, raw_json, source,
                    imported_at, imported_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET modified = excluded.modified, published = excluded.published,
                    withdrawn = excluded.withdrawn, aliases_json = excluded.aliases_json, summary = excluded.summary,
                    severity = excluded.severity, raw_json = excluded.raw_json, source = excluded.source,
                    imported_at = excluded.imported_at, imported_by = excluded.imported_by
                """
        ).execute(
            arguments: [
                document.id, document.modified, document.published, document.withdrawn,
                AuditJSON.array(document.aliases.map(AuditJSON.string)).canonicalText, document.summary, document.severity.rawValue,
                document.raw, source, now, actor.osUser,
            ])
        try db.cachedStatement(sql: "DELETE FROM advisory_ranges WHERE advisory_id = ?").execute(arguments: [document.id])
        let insert = try db.cachedStatement(
            sql: "INSERT INTO advisory_ranges (advisory_id, plugin_id, ordinal, kind, values_json) VALUES (?, ?, ?, ?, ?)")
        for (pluginID, ranges) in document.affected.sorted(by: { $0.key < $1.key }) {
            for (ordinal, range) in ranges.enumerated() {
                let values: AuditJSON =
                    range.events.isEmpty
                    ? .array(range.versions.map(AuditJSON.string))
                    : .array(range.events.map { .object([$0.kind.rawValue: .string($0.version)]) })
                try insert.execute(
                    arguments: [document.id, pluginID, ordinal, range.events.isEmpty ? "versions" : "SEMVER", values.canonicalText])
            }
        }
    }

    static func withdraw(_ db: Database, _ id: String, reason: String, at now: String, by actor: Principal) throws {
        try db.cachedStatement(sql: "UPDATE advisories SET withdrawn_at = ?, withdrawn_by = ?, withdraw_reason = ? WHERE id = ?").execute(
            arguments: [now, actor.osUser, reason, id])
    }

    /// What each advisory affects: advisory id → plug-in id → ranges, in their order.
    static func ranges(_ db: Database, ids: [String]? = nil) throws -> [String: [String: [AdvisoryRange]]] {
        guard try hasTables(db) else { return [:] }
        let only = ids.map { _ in " WHERE advisory_id IN (SELECT value FROM json_each(?))" } ?? ""
        let arguments: StatementArguments = ids.map { [AuditJSON.array($0.map(AuditJSON.string)).canonicalText] } ?? []
        var result: [String: [String: [AdvisoryRange]]] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT * FROM advisory_ranges\(only) ORDER BY advisory_id, plugin_id, ordinal", arguments: arguments)
        {
            let text: String = row["values_json"]
            let values = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [Any] ?? []
            let range: AdvisoryRange
            if row["kind"] as String == "versions" {
                range = AdvisoryRange(versions: values.compactMap { $0 as? String })
            } else {
                range = AdvisoryRange(
                    events: values.compactMap { value in
                        guard let event = value as? [String: String], let (key, version) = event.first,
                            let kind = AdvisoryEvent.Kind(rawValue: key)
                        else { return nil }
                        return AdvisoryEvent(kind, version)
                    })
            }
            result[row["advisory_id"], default: [:]][row["plugin_id"], default: []].append(range)
        }
        return result
    }

    /// The actions chosen for one advisory, by environment.
    static func chosenActions(_ db: Database) throws -> [String: [String: AdvisoryAction]] {
        guard try hasTables(db) else { return [:] }
        var result: [String: [String: AdvisoryAction]] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT advisory_id, environment, action FROM advisory_actions")) {
            result[row["advisory_id"], default: [:]][row["environment"]] = AdvisoryAction(rawValue: row["action"])
        }
        return result
    }

    static func chosenAction(_ db: Database, _ id: String, environment: String) throws -> AdvisoryAction? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT action FROM advisory_actions WHERE advisory_id = ? AND environment = ?"),
            arguments: [id, environment]
        ).flatMap(AdvisoryAction.init(rawValue:))
    }

    static func saveAction(_ db: Database, _ id: String, environment: String, _ action: AdvisoryAction, at now: String, by actor: Principal)
        throws
    {
        try db.cachedStatement(
            sql: """
                INSERT INTO advisory_actions (advisory_id, environment, action, set_at, set_by) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (advisory_id, environment) DO UPDATE SET action = excluded.action, set_at = excluded.set_at,
                    set_by = excluded.set_by
                """
        ).execute(arguments: [id, environment, action.rawValue, now, actor.osUser])
    }

    /// Every environment's floor, where one was set.
    static func floors(_ db: Database) throws -> [String: AdvisoryAction] {
        guard try hasTables(db) else { return [:] }
        var result: [String: AdvisoryAction] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT environment, floor FROM advisory_policies")) {
            result[row["environment"]] = AdvisoryAction(rawValue: row["floor"])
        }
        return result
    }

    static func saveFloor(_ db: Database, _ environment: String, _ floor: AdvisoryAction, at now: String, by actor: Principal) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO advisory_policies (environment, floor, updated_at, updated_by) VALUES (?, ?, ?, ?)
                ON CONFLICT (environment) DO UPDATE SET floor = excluded.floor, updated_at = excluded.updated_at,
                    updated_by = excluded.updated_by
                """
        ).execute(arguments: [environment, floor.rawValue, now, actor.osUser])
    }

    /// The action of an advisory in an environment: the one chosen there, else its severity's, raised to the floor.
    static func effective(_ severity: AdvisorySeverity, chosen: AdvisoryAction?, floor: AdvisoryAction?) -> AdvisoryAction {
        max(chosen ?? severity.defaultAction, floor ?? .warn)
    }

    /// The standing advisories that name a plug-in of `pluginIDs`, with their action in `environment`: what a host reads
    /// with its registry.
    static func hostAdvisories(_ db: Database, environment: String, pluginIDs: Set<String>) throws -> [HostAdvisory] {
        guard try hasTables(db), !pluginIDs.isEmpty else { return [] }
        // One query for the advisories (not one per advisory): a host reads this at every change of the board.
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT a.id, a.summary, a.severity FROM advisories a
                    WHERE a.id IN (SELECT r.advisory_id FROM advisory_ranges r WHERE r.plugin_id IN (SELECT value FROM json_each(?)))
                        AND a.withdrawn IS NULL AND a.withdrawn_at IS NULL
                    ORDER BY a.id
                    """), arguments: [AuditJSON.array(pluginIDs.sorted().map(AuditJSON.string)).canonicalText])
        guard !rows.isEmpty else { return [] }
        let ids: [String] = rows.map { $0["id"] }
        let ranges = try self.ranges(db, ids: ids)
        let floor = try floors(db)[environment]
        let chosen = try chosenActions(db)
        return rows.map { row in
            let id: String = row["id"]
            let severity = AdvisorySeverity(rawValue: row["severity"]) ?? .unknown
            let action = effective(severity, chosen: chosen[id]?[environment], floor: floor)
            return HostAdvisory(id: id, summary: row["summary"], action: action, affected: ranges[id] ?? [:])
        }
    }

    /// The registered versions of `pluginIDs`, by plug-in, highest first.
    static func registeredVersions(_ db: Database, _ pluginIDs: [String]) throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(
                sql:
                    "SELECT plugin_id, version FROM plugin_versions WHERE plugin_id IN (SELECT value FROM json_each(?)) ORDER BY plugin_id, sort_key DESC"
            ),
            arguments: [AuditJSON.array(pluginIDs.map(AuditJSON.string)).canonicalText])
        {
            result[row["plugin_id"], default: []].append(row["version"])
        }
        return result
    }

    private static func advisory(_ row: Row) -> StoredAdvisory {
        let aliases: String = row["aliases_json"]
        return StoredAdvisory(
            id: row["id"], modified: row["modified"], published: row["published"], withdrawn: row["withdrawn"],
            aliases: (try? JSONSerialization.jsonObject(with: Data(aliases.utf8))) as? [String] ?? [], summary: row["summary"],
            severity: AdvisorySeverity(rawValue: row["severity"]) ?? .unknown, raw: row["raw_json"], source: row["source"],
            importedAt: row["imported_at"], importedBy: row["imported_by"], withdrawnAt: row["withdrawn_at"],
            withdrawnBy: row["withdrawn_by"], withdrawReason: row["withdraw_reason"])
    }
}
