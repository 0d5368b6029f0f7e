import GRDB
import PlugboardModel

/// What advisories deny on the board a restore replaces. A restored copy keeps everything an advisory standing there
/// denies: the advisory itself, imported into the copy when the backup lacks it, its document brought up to the
/// replaced board's when the backup's is older, a withdrawal the backup has taken back; each environment's floor
/// (`plugboard policy set --advisories`) raised to the replaced board's; and each advisory's action in an environment
/// raised to the one it has on the replaced board. Going back in time never lets a host load or keep a release an
/// advisory refuses or stops there.
struct AdvisoryNarrowings: Sendable {
    /// Each advisory that stands on the replaced board: its row and its ranges' rows, as stored.
    var standing: [String: (advisory: [String: DatabaseValue], ranges: [[String: DatabaseValue]])] = [:]
    /// The severity of each standing advisory.
    var severities: [String: AdvisorySeverity] = [:]
    /// The actions chosen per advisory and environment.
    var chosen: [String: [String: AdvisoryAction]] = [:]
    var floors: [String: AdvisoryAction] = [:]

    /// Reads the advisories of the board being replaced; a board made before advisories has none.
    static func read(_ db: Database) throws -> AdvisoryNarrowings {
        var records = AdvisoryNarrowings()
        guard try AdvisoryQueries.hasTables(db) else { return records }
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM advisories WHERE withdrawn IS NULL AND withdrawn_at IS NULL")) {
            let id: String = row["id"]
            let ranges = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM advisory_ranges WHERE advisory_id = ?"), arguments: [id])
            records.standing[id] = (Self.values(row), ranges.map(Self.values))
            records.severities[id] = AdvisorySeverity(rawValue: row["severity"]) ?? .unknown
        }
        records.chosen = try AdvisoryQueries.chosenActions(db)
        records.floors = try AdvisoryQueries.floors(db)
        return records
    }

    /// Narrows the copy of `change` to these records; `add` records each as a narrowing carried forward.
    func narrow(
        _ change: AuditedChange, _ add: (String, String, String, String?, String, Narrowings.Made.Key, AuditJSON, AuditJSON) -> Void
    ) throws {
        let db = change.db
        guard try AdvisoryQueries.hasTables(db) else { return }
        for (id, kept) in standing.sorted(by: { $0.key < $1.key }) {
            let copy = try AdvisoryQueries.stored(db, id)
            let modified: String = kept.advisory["modified"].flatMap { String.fromDatabaseValue($0) } ?? ""
            let why: String
            if let copy {
                if copy.withdrawal != nil {
                    why = "standing on the replaced board, withdrawn in the backup"
                } else if let was = Timestamp.parse(copy.modified), let now = Timestamp.parse(modified), was < now {
                    why = "modified \(modified) on the replaced board, \(copy.modified) in the backup"
                } else {
                    continue
                }
            } else {
                why = "imported on the replaced board after the backup"
            }
            try Self.save(db, kept.advisory, ranges: kept.ranges)
            add(
                "advisory", "advisory", id, nil, why, .advisory(id), copy?.json ?? .null,
                try AdvisoryQueries.stored(db, id)?.json ?? .null)
        }
        let copyFloors = try AdvisoryQueries.floors(db)
        for (environment, floor) in floors.sorted(by: { $0.key < $1.key }) where (copyFloors[environment] ?? .warn) < floor {
            try change.ensureEnvironment(environment)
            try AdvisoryQueries.saveFloor(db, environment, floor, at: change.now, by: change.actor)
            add(
                "advisory floor", "environment", environment, environment, "advisories at least \(floor.rawValue) on the replaced board",
                .policy(environment), .object(["advisories": .optional(copyFloors[environment]?.rawValue)]),
                .object(["advisories": .string(floor.rawValue)]))
        }
        let floors = try AdvisoryQueries.floors(db)
        let copyChosen = try AdvisoryQueries.chosenActions(db)
        let places = Set(
            (chosen.flatMap { id, actions in actions.keys.map { [id, $0] } })
                + copyChosen.flatMap { id, actions in actions.keys.map { [id, $0] } })
        for place in places.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let (id, environment) = (place[0], place[1])
            guard let severity = severities[id], let copy = try AdvisoryQueries.stored(db, id), copy.withdrawal == nil else { continue }
            let there = AdvisoryQueries.effective(severity, chosen: chosen[id]?[environment], floor: self.floors[environment])
            let before = copyChosen[id]?[environment]
            let here = AdvisoryQueries.effective(copy.severity, chosen: before, floor: floors[environment])
            guard here < there else { continue }
            try change.ensureEnvironment(environment)
            try AdvisoryQueries.saveAction(db, id, environment: environment, there, at: change.now, by: change.actor)
            add(
                "advisory action", "advisory", id, environment, "\(there.rawValue) in \(environment) on the replaced board",
                .advisoryAction(id, environment), .object(["action": .optional(before?.rawValue), "effective": .string(here.rawValue)]),
                .object(["action": .string(there.rawValue), "effective": .string(there.rawValue)]))
        }
    }

    /// Writes the replaced board's row of an advisory in place of the copy's, with its ranges.
    private static func save(_ db: Database, _ advisory: [String: DatabaseValue], ranges: [[String: DatabaseValue]]) throws {
        let columns = advisory.keys.sorted()
        let updates = columns.filter { $0 != "id" }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        try db.execute(
            sql: """
                INSERT INTO advisories (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))
                ON CONFLICT (id) DO UPDATE SET \(updates)
                """, arguments: StatementArguments(columns.map { advisory[$0] }))
        try db.cachedStatement(sql: "DELETE FROM advisory_ranges WHERE advisory_id = ?").execute(arguments: [advisory["id"]])
        for range in ranges {
            let columns = range.keys.sorted()
            try db.execute(
                sql:
                    "INSERT INTO advisory_ranges (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
                arguments: StatementArguments(columns.map { range[$0] }))
        }
    }

    private static func values(_ row: Row) -> [String: DatabaseValue] {
        Dictionary(uniqueKeysWithValues: row.columnNames.map { ($0, row[$0] as DatabaseValue) })
    }
}
