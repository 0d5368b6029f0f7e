import GRDB
import PlugboardModel

/// What narrows what runs, or who may act, on the board a restore replaces, beyond its stops (``StopRecords``): where
/// plug-ins are enabled, each environment's signature policy, the admins, the owners and maintainers of each plug-in,
/// and where flags are on. A restore reads it from the board it replaces and narrows the restored board to it, so that
/// going back in time never enables a plug-in, lowers a signature policy, re-admits a principal, switches a plug-in's
/// gate flag back on or gives it back strategies, constraints or variants it no longer has (a gate flag cut from 100% to
/// 0% since the backup stays at 0%).
///
/// A rollout aborted on the replaced board and running or paused in the backup is aborted: an abort stops a release.
/// An approval policy is raised to the replaced board's, and who approves narrowed to its approvers and the members its
/// groups have; a change request pending in the backup but applied, rejected or cancelled on the replaced board is
/// closed: a restore never applies a change again. An identity linked in the backup but unlinked (or linked to another
/// principal) on the replaced board is unlinked, and a group's mapping to a role it no longer has is taken away
/// (``IdentityNarrowings``). An advisory standing there stands on the restored board, with at least its document,
/// floor and action there (``AdvisoryNarrowings``); a subscribed advisory feed keeps at least the sequence it applied
/// there, so that an older feed is still refused (``AdvisoryFeedNarrowings``).
/// Pins, and rollouts' steps, are not narrowings: they choose which version runs, not whether one does (a pin to an
/// older release is not narrower than the newest); the versions that must not run are stopped by kill switches and
/// yanks, which are carried as stops.
struct Narrowings: Sendable {
    struct Place: Sendable, Hashable {
        let id: String
        let environment: String
    }

    /// The plug-ins the replaced board knows: only they are narrowed (the others stop nothing there).
    var plugins: Set<String> = []
    /// Where a plug-in is enabled on the replaced board.
    var enabled: Set<Place> = []
    /// The signature policy of each environment that has one.
    var policies: [String: SignaturePolicy] = [:]
    var admins: Set<String> = []
    /// The role of each principal on each plug-in.
    var roles: [String: [String: PluginOwner.Role]] = [:]
    /// The flags the replaced board knows, with the environments where each is on (none for an archived flag).
    var flagsOn: [String: Set<String>] = [:]
    /// The strategies (with their constraints) and variants, as stored, of each flag where it is on (`Place.id` is the
    /// flag's name).
    var flagDefinitions: [Place: FlagDefinition] = [:]

    struct FlagDefinition: Sendable, Equatable {
        let strategies: String
        let variants: String
    }
    /// The release of each rollout aborted on the replaced board.
    var aborted: [Place: String] = [:]
    /// Each environment's approval policy (approvals, signed) on the replaced board.
    var approvalPolicies: [String: (approvals: Int, signed: String)] = [:]
    /// Who approves in each environment on the replaced board (`default`, `admins`, `owners` or a group).
    var approvers: [String: String] = [:]
    /// The members of each principal group on the replaced board: a copy's member not among them is removed.
    var groups: [String: Set<String>] = [:]
    /// The state of each change request of the replaced board: a request pending in the copy that is not pending there
    /// (applied, rejected, cancelled, or unknown) is closed, so that a restore never applies it again.
    var requestStates: [Int64: String] = [:]
    /// Who signs in as whom, and what the provider's groups grant.
    var identities = IdentityNarrowings()
    /// The standing advisories, their actions and the environments' floors.
    var advisories = AdvisoryNarrowings()
    /// How far each subscribed advisory feed got.
    var advisoryFeeds = AdvisoryFeedNarrowings()
    /// When and by whom each narrowing was made, from the audit log.
    var made: [Made.Key: Made] = [:]

    /// Reads the narrowings of the board being replaced; a board made before signatures has no policies.
    static func read(_ db: Database) throws -> Narrowings {
        var records = Narrowings()
        records.plugins = Set(try String.fetchAll(db.cachedStatement(sql: "SELECT id FROM plugins")))
        records.enabled = Set(
            try Row.fetchAll(db.cachedStatement(sql: "SELECT plugin_id, environment FROM plugin_environments WHERE enabled = 1")).map {
                Place(id: $0[0], environment: $0[1])
            })
        if try db.tableExists("signature_policies") {
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT environment, signatures FROM signature_policies")) {
                records.policies[row[0]] = SignaturePolicy(rawValue: row[1]) ?? .off
            }
        }
        records.admins = Set(try RoleQueries.admins(db).map(\.principal))
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT plugin_id, principal, role FROM plugin_owners")) {
            records.roles[row[0], default: [:]][row[1]] = PluginOwner.Role(rawValue: row[2]) ?? .maintainer
        }
        if try db.tableExists("flags") {
            for name in try String.fetchAll(db.cachedStatement(sql: "SELECT name FROM flags")) { records.flagsOn[name] = [] }
            for row in try Row.fetchAll(
                db.cachedStatement(
                    sql:
                        "SELECT fe.flag_name, fe.environment, fe.strategies_json, fe.variants_json FROM flag_environments fe JOIN flags f ON f.name = fe.flag_name WHERE fe.enabled = 1 AND f.archived_at IS NULL"
                )
            ) {
                records.flagsOn[row[0], default: []].insert(row[1])
                records.flagDefinitions[Place(id: row[0], environment: row[1])] = FlagDefinition(strategies: row[2], variants: row[3])
            }
        }
        records.made = Dictionary(try Made.read(db).map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        if try db.tableExists("rollouts") {
            for row in try Row.fetchAll(
                db.cachedStatement(sql: "SELECT plugin_id, environment, version, ended_at, ended_by FROM rollouts WHERE state = 'aborted'"))
            {
                let place = Place(id: row[0], environment: row[1])
                records.aborted[place] = row[2]
                if let at: String = row[3], let by: String = row[4] {
                    records.made[.rollout(place.id, place.environment)] = Made(key: .rollout(place.id, place.environment), at: at, by: by)
                }
            }
        }
        if try db.tableExists("change_requests") {
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT environment, approvals, signed FROM approval_policies")) {
                records.approvalPolicies[row[0]] = (row[1], row[2])
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT id, state FROM change_requests")) {
                records.requestStates[row[0]] = row[1]
            }
        }
        if try db.tableExists("principal_groups") {
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT environment, approvers FROM approval_policies")) {
                records.approvers[row[0]] = row[1]
            }
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT name, principal FROM principal_groups")) {
                records.groups[row[0], default: []].insert(row[1])
            }
        }
        records.identities = try IdentityNarrowings.read(db)
        records.advisories = try AdvisoryNarrowings.read(db)
        records.advisoryFeeds = try AdvisoryFeedNarrowings.read(db)
        return records
    }

    /// Raises the copy's approval policies to the replaced board's, and closes the copy's pending change requests that
    /// are not pending on the replaced board.
    private func narrowChanges(
        _ change: AuditedChange, _ add: (String, String, String, String?, String, Made.Key, AuditJSON, AuditJSON) -> Void
    )
        throws
    {
        let db = change.db
        guard try db.tableExists("change_requests") else { return }
        for (environment, kept) in approvalPolicies.sorted(by: { $0.key < $1.key }) {
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT approvals, signed FROM approval_policies WHERE environment = ?"), arguments: [environment])
            let (approvals, signed): (Int, String) = (row?[0] ?? 0, row?[1] ?? "off")
            let raised = (max(approvals, kept.approvals), kept.signed == "require" ? "require" : signed)
            guard raised.0 != approvals || raised.1 != signed else { continue }
            try change.ensureEnvironment(environment)
            try ChangeRecords.savePolicy(change, environment, approvals: raised.0, signed: raised.1)
            add(
                "approval policy", "approval_policy", environment, environment, "\(kept.approvals) approvals on the replaced board",
                .policy(environment), .object(["approvals": .int(approvals), "signed_approvals": .string(signed)]),
                .object(["approvals": .int(raised.0), "signed_approvals": .string(raised.1)]))
        }
        try narrowApprovers(change, add)
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, state, environment FROM change_requests WHERE state IN ('open', 'scheduled') ORDER BY id"))
        {
            let (id, state, environment): (Int64, String, String?) = (row[0], row[1], row[2])
            let there = requestStates[id]
            guard there != "open", there != "scheduled" else { continue }
            let why = "\(there.map { "\($0) on the replaced board" } ?? "unknown to the replaced board")"
            try db.cachedStatement(
                sql: "UPDATE change_requests SET state = 'cancelled', closed_at = ?, closed_by = ?, close_reason = ? WHERE id = ?"
            ).execute(arguments: [change.now, change.actor.osUser, "closed by the restore: \(why)", id])
            add(
                "change request closed", "change_request", String(id), environment, why, .changeRequest(String(id)),
                .object(["state": .string(state)]), .object(["state": .string("cancelled")]))
        }
    }

    /// Narrows who approves on the copy to the replaced board's: each environment's approvers where the copy's may let
    /// someone approve who could not there, and no member of a group the replaced board does not have in it.
    private func narrowApprovers(
        _ change: AuditedChange, _ add: (String, String, String, String?, String, Made.Key, AuditJSON, AuditJSON) -> Void
    ) throws {
        let db = change.db
        guard try db.tableExists("principal_groups") else { return }
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT name, principal FROM principal_groups ORDER BY 1, 2")) {
            let (group, principal): (String, String) = (row[0], row[1])
            guard groups[group]?.contains(principal) != true else { continue }
            try db.cachedStatement(sql: "DELETE FROM principal_groups WHERE name = ? AND principal = ?").execute(arguments: [
                group, principal,
            ])
            add(
                "group member removal", "principal_group", "\(group)/\(principal)", nil, "not in the group \(group) on the replaced board",
                .group(group, principal), .object(["member": .bool(true)]), .object(["member": .bool(false)]))
        }
        for (environment, kept) in approvers.sorted(by: { $0.key < $1.key }) {
            guard
                let copy = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT approvers FROM approval_policies WHERE environment = ?"), arguments: [environment]),
                ApprovalRights.loosens(from: kept, to: copy)
            else { continue }
            try db.cachedStatement(sql: "UPDATE approval_policies SET approvers = ?, updated_at = ?, updated_by = ? WHERE environment = ?")
                .execute(arguments: [kept, change.now, change.actor.osUser, environment])
            add(
                "approvers", "approval_policy", environment, environment, "approvers \(kept) on the replaced board", .policy(environment),
                .object(["approvers": .string(copy)]), .object(["approvers": .string(kept)]))
        }
    }

    /// Narrows the board of `change` (the restored copy) to these records, each narrowing with a
    /// `restore.carried-forward` audit row that says when and by whom it was made on the replaced board. Keeps
    /// `change.actor`, an admin of the replaced board, an admin of the restored one.
    func narrow(_ change: AuditedChange) throws -> [CarriedStop] {
        let db = change.db
        var pending: [(kind: String, key: Made.Key, entry: AuditEntry)] = []
        func add(
            _ kind: String, _ type: String, _ target: String, environment: String? = nil, reason: String, key: Made.Key,
            before: AuditJSON, after: AuditJSON
        ) {
            let entry = AuditEntry(
                action: .restoreCarriedForward, targetType: type, targetID: target, environment: environment, reason: reason,
                before: before, after: after)
            pending.append((kind, key, entry))
        }
        // Disables: enabled in the copy, not on the replaced board.
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT plugin_id, environment FROM plugin_environments WHERE enabled = 1 ORDER BY 1, 2"))
        {
            let place = Place(id: row[0], environment: row[1])
            guard plugins.contains(place.id), !enabled.contains(place) else { continue }
            var state = try RegistryQueries.environmentRow(db, place.id, place.environment)
            state.enabled = false
            try RegistryQueries.saveEnvironmentRow(db, place.id, place.environment, state, by: change.actor, at: change.now)
            add(
                "disable", "plugin", place.id, environment: place.environment, reason: "disabled on the replaced board",
                key: .plugin(place.id, place.environment), before: .object(["enabled": .bool(true)]),
                after: .object(["enabled": .bool(false)]))
        }
        // Signature policies: raised on the replaced board.
        if try SignatureQueries.hasTables(db) {
            for (environment, policy) in policies.sorted(by: { $0.key < $1.key }) {
                let current = try SignatureQueries.policy(db, environment)
                guard policy.strictness > current.strictness else { continue }
                try change.ensureEnvironment(environment)
                try SignatureQueries.savePolicy(db, environment, policy, by: change.actor, at: change.now)
                add(
                    "signature policy", "environment", environment, environment: environment,
                    reason: "signatures \(policy.rawValue) on the replaced board", key: .policy(environment),
                    before: .object(["signatures": .string(current.rawValue)]), after: .object(["signatures": .string(policy.rawValue)]))
            }
        }
        // Admins: only those of the replaced board stay.
        for admin in try RoleQueries.admins(db) where !admins.contains(admin.principal) {
            try RoleQueries.deleteAdmin(db, admin.principal)
            add(
                "admin removal", "admin", admin.principal, reason: "not an admin of the replaced board", key: .admin(admin.principal),
                before: .object(["admin": .bool(true)]), after: .object(["admin": .bool(false)]))
        }
        // Owners and maintainers of the plug-ins the replaced board knows: none added, no role raised.
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT plugin_id, principal, role FROM plugin_owners ORDER BY 1, 2")) {
            let (pluginID, principal, role): (String, String, String) = (row[0], row[1], row[2])
            guard plugins.contains(pluginID) else { continue }
            let kept = roles[pluginID]?[principal]
            let target = "\(pluginID)/\(principal)"
            if kept == nil {
                try RoleQueries.deleteOwner(db, pluginID: pluginID, principal: principal)
                add(
                    role == "owner" ? "owner removal" : "maintainer removal", "plugin", target,
                    reason: "not an owner or maintainer of \(pluginID) on the replaced board", key: .owner(pluginID, principal),
                    before: .object(["principal": .string(principal), "role": .string(role)]),
                    after: .object(["principal": .string(principal), "role": .null]))
            } else if role == "owner", kept == .maintainer {
                try RoleQueries.saveOwner(
                    db, pluginID: pluginID, principal: principal, role: .maintainer, by: change.actor, at: change.now)
                add(
                    "owner demotion", "plugin", target, reason: "a maintainer of \(pluginID) on the replaced board",
                    key: .owner(pluginID, principal), before: .object(["principal": .string(principal), "role": .string(role)]),
                    after: .object(["principal": .string(principal), "role": .string("maintainer")]))
            }
        }
        // Gate flags: on in the copy, off (or archived) on the replaced board that knows them; or on there too, with other
        // strategies, constraints or variants: the replaced board's definition is carried.
        for row in try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT fe.flag_name, fe.environment, fe.strategies_json, fe.variants_json FROM flag_environments fe JOIN flags f ON f.name = fe.flag_name
                    WHERE fe.enabled = 1 AND f.archived_at IS NULL
                      AND fe.flag_name IN (SELECT gate_flag FROM plugin_versions WHERE gate_flag IS NOT NULL)
                    ORDER BY 1, 2
                    """))
        {
            let (flag, environment): (String, String) = (row[0], row[1])
            guard let on = flagsOn[flag] else { continue }
            if on.contains(environment) {
                let copy = FlagDefinition(strategies: row[2], variants: row[3])
                guard let kept = flagDefinitions[Place(id: flag, environment: environment)], kept != copy else { continue }
                try db.cachedStatement(
                    sql: """
                        UPDATE flag_environments SET strategies_json = ?, variants_json = ?, updated_at = ?, updated_by = ?
                        WHERE flag_name = ? AND environment = ?
                        """
                ).execute(arguments: [kept.strategies, kept.variants, change.now, change.actor.osUser, flag, environment])
                add(
                    "gate flag definition", "flag", flag, environment: environment,
                    reason: "its strategies, constraints or variants on the replaced board, and it gates a plug-in",
                    key: .flagDefinition(flag, environment), before: copy.json, after: kept.json)
                continue
            }
            try db.cachedStatement(
                sql: "UPDATE flag_environments SET enabled = 0, updated_at = ?, updated_by = ? WHERE flag_name = ? AND environment = ?"
            ).execute(arguments: [change.now, change.actor.osUser, flag, environment])
            add(
                "gate flag off", "flag", flag, environment: environment, reason: "off on the replaced board, and it gates a plug-in",
                key: .flag(flag, environment), before: .object(["enabled": .bool(true)]), after: .object(["enabled": .bool(false)]))
        }
        // Rollouts: aborted on the replaced board, of the same release.
        for record in try RolloutQueries.records(db, activeOnly: true) {
            let place = Place(id: record.pluginID, environment: record.environment)
            guard aborted[place] == record.rollout.version else { continue }
            let after = RolloutRules.ended(
                record, .aborted, by: change.actor.osUser, at: change.now, reason: "aborted on the replaced board")
            try RolloutQueries.save(db, after)
            add(
                "rollout abort", "rollout", "\(record.pluginID)@\(record.rollout.version)", environment: record.environment,
                reason: "aborted on the replaced board", key: .rollout(record.pluginID, record.environment), before: record.json,
                after: after.json)
        }
        for narrowing in [narrowChanges, identities.narrow, advisories.narrow, advisoryFeeds.narrow] {
            try narrowing(change) { kind, type, target, environment, reason, key, before, after in
                add(kind, type, target, environment: environment, reason: reason, key: key, before: before, after: after)
            }
        }
        var carried: [CarriedStop] = []
        for (kind, key, entry) in pending {
            var entry = entry
            let when = made[key]
            entry.after = .object([
                "carried": .bool(true), "made_at": .optional(when?.at), "made_by": .optional(when?.by), "state": entry.after ?? .null,
            ])
            try change.record(entry)
            carried.append(
                CarriedStop(
                    kind: kind, target: entry.targetID ?? "", environment: entry.environment, reason: entry.reason, madeAt: when?.at,
                    madeBy: when?.by))
        }
        if try !RoleQueries.isAdmin(db, change.actor.osUser) {
            try RoleQueries.insertAdmin(db, change.actor.osUser, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .adminAdd, targetType: "admin", targetID: change.actor.osUser,
                    reason: "an admin of the replaced board restored it", before: .object(["admin": .bool(false)]),
                    after: .object(["admin": .bool(true)])))
        }
        return carried
    }
}

extension Narrowings.FlagDefinition {
    /// The definition as an audit row shows it.
    var json: AuditJSON { .object(["strategies": .rawJSON(strategies), "variants": .rawJSON(variants)]) }
}
