import Crypto
import Foundation
import GRDB
import PlugboardVersioning

// The plug-in registry: every write is one transaction with its audit row; refusals for "not allowed" and
// "not found" are audited too (see `Board.change`).

extension Board {
    // MARK: Register

    /// Registers a version of a plug-in (and the plug-in itself, if new), optionally with an artifact file.
    ///
    /// A new plug-in may be registered by any board user, who becomes its owner; a new version of an existing
    /// plug-in needs its owner, a maintainer or an admin. Versions are immutable: registering an existing
    /// version is refused. With `artifactPath`, the file is copied into the content-addressed store beside the
    /// board and its SHA-256 recorded.
    public func register(_ manifest: PluginManifest, artifactPath: String? = nil, actor: Actor) throws(BoardError) -> ChangeResult {
        let store = ArtifactStore(root: artifactsPath)
        let staged = try artifactPath.map { path throws(BoardError) in try store.stage(path) }
        let versionText = manifest.version.description
        let target = "\(manifest.id)@\(versionText)"
        do {
            let result = try change(actor, refusal: AuditEntry(action: "plugin.register", targetType: "plugin_version", targetID: target)) {
                db in
                let now = Timestamp.now()
                let exists = try Bool.fetchOne(db, sql: "SELECT 1 FROM plugins WHERE id = ?", arguments: [manifest.id]) ?? false
                if exists {
                    try requirePluginRole(
                        db, actor: actor, pluginID: manifest.id, roles: [.owner, .maintainer], doing: "register a new version of")
                    if let existing = try Row.fetchOne(
                        db, sql: "SELECT registered_at, registered_by FROM plugin_versions WHERE plugin_id = ? AND version = ?",
                        arguments: [manifest.id, versionText])
                    {
                        throw BoardError.conflict(
                            "\(target) is already registered (on \(existing["registered_at"] as String) by \(existing["registered_by"] as String)); versions are immutable, so register a new version"
                        )
                    }
                } else {
                    try db.execute(
                        sql: "INSERT INTO plugins (id, name, description, created_at, created_by) VALUES (?, ?, ?, ?, ?)",
                        arguments: [manifest.id, manifest.name, manifest.description, now, actor.osUser])
                    try db.execute(
                        sql: "INSERT INTO plugin_owners (plugin_id, principal, role, added_at, added_by) VALUES (?, ?, 'owner', ?, ?)",
                        arguments: [manifest.id, actor.osUser, now, actor.osUser])
                }
                if let staged {
                    try db.execute(
                        sql: "INSERT OR IGNORE INTO artifacts (sha256, size_bytes, file_name, stored_at, stored_by) VALUES (?, ?, ?, ?, ?)",
                        arguments: [staged.sha256, staged.size, staged.fileName, now, actor.osUser])
                }
                let capabilities = AuditJSON.array(manifest.capabilities.map(AuditJSON.string)).canonicalText
                try db.execute(
                    sql: """
                        INSERT INTO plugin_versions (plugin_id, version, sort_key, is_prerelease, name, description, host_range, gate_flag,
                            entry_symbol, capabilities, manifest_json, artifact_sha256, registered_at, registered_by)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        manifest.id, versionText, manifest.version.precedenceKey, manifest.version.isPrerelease,
                        manifest.name, manifest.description, manifest.host?.description, manifest.gate, manifest.entry,
                        capabilities, manifest.source, staged?.sha256, now, actor.osUser,
                    ])
                for (dependency, range) in manifest.dependencies.sorted(by: { $0.key < $1.key }) {
                    try db.execute(
                        sql: "INSERT INTO plugin_dependencies (plugin_id, version, dependency_id, version_range) VALUES (?, ?, ?, ?)",
                        arguments: [manifest.id, versionText, dependency, range.description])
                }
                // The plug-in's name and description follow its highest registered version.
                let highest = try String.fetchOne(
                    db, sql: "SELECT version FROM plugin_versions WHERE plugin_id = ? ORDER BY sort_key DESC LIMIT 1",
                    arguments: [manifest.id])
                if exists, highest == versionText {
                    try db.execute(
                        sql: "UPDATE plugins SET name = ?, description = ? WHERE id = ?",
                        arguments: [manifest.name, manifest.description, manifest.id])
                }
                var after: [String: AuditJSON] = [
                    "id": .string(manifest.id), "version": .string(versionText), "name": .string(manifest.name),
                    "host": .optional(manifest.host?.description), "gate": .optional(manifest.gate), "entry": .optional(manifest.entry),
                    "capabilities": .array(manifest.capabilities.map(AuditJSON.string)),
                    "dependencies": .object(manifest.dependencies.mapValues { .string($0.description) }),
                    "artifact_sha256": .optional(staged?.sha256),
                    "manifest_sha256": .string(SHA256.hex(Data(manifest.source.utf8))),
                ]
                if !exists { after["owner"] = .string(actor.osUser) }
                try AuditLog.append(
                    db, actor: actor,
                    entry: AuditEntry(action: "plugin.register", targetType: "plugin_version", targetID: target, after: .object(after)),
                    at: now)
                if let staged { try store.commit(staged) }
                return ChangeResult(
                    changed: true,
                    exists
                        ? "Registered \(target)."
                        : "Registered the new plug-in \(manifest.id) at version \(versionText); \(actor.osUser) is its owner. It is disabled until you run plugboard plugin enable \(manifest.id)."
                )
            }
            return result
        } catch {
            if let staged { store.discard(staged) }
            throw error
        }
    }

    // MARK: Enable, disable, pin

    /// Enables or disables a plug-in in one environment (created if it does not exist yet).
    public func setEnabled(_ pluginID: String, _ enabled: Bool, environment: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        try Validate.environment(environment)
        let action = enabled ? "plugin.enable" : "plugin.disable"
        return try change(actor, refusal: AuditEntry(action: action, targetType: "plugin", targetID: pluginID, environment: environment)) {
            db in
            try requirePlugin(db, pluginID)
            try requirePluginRole(
                db, actor: actor, pluginID: pluginID, roles: [.owner, .maintainer], doing: enabled ? "enable" : "disable")
            let before = try environmentRow(db, pluginID, environment)
            if before.enabled == enabled {
                return ChangeResult(
                    changed: false, "\(pluginID) is already \(enabled ? "enabled" : "disabled") in \(environment); nothing changed.")
            }
            let now = Timestamp.now()
            try ensureEnvironment(db, environment, actor: actor, at: now)
            try upsertEnvironmentRow(db, pluginID, environment, enabled: enabled, pinned: before.pinned, actor: actor, at: now)
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: action, targetType: "plugin", targetID: pluginID, environment: environment,
                    before: before.json, after: EnvironmentRow(enabled: enabled, pinned: before.pinned).json), at: now)
            var notes: [String] = []
            if enabled, try isKilled(db, .plugin(pluginID)) {
                notes.append("A kill switch still covers \(pluginID); hosts will not load it until it is revived.")
            }
            return ChangeResult(changed: true, "\(enabled ? "Enabled" : "Disabled") \(pluginID) in \(environment).", notes: notes)
        }
    }

    /// Pins a plug-in to one version in one environment; hosts load that version instead of the highest.
    public func pin(_ pluginID: String, version: SemanticVersion, environment: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        try Validate.environment(environment)
        let versionText = version.description
        return try change(
            actor, refusal: AuditEntry(action: "plugin.pin", targetType: "plugin", targetID: pluginID, environment: environment)
        ) { db in
            try requirePlugin(db, pluginID)
            try requirePluginRole(db, actor: actor, pluginID: pluginID, roles: [.owner, .maintainer], doing: "pin")
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT yanked_at FROM plugin_versions WHERE plugin_id = ? AND version = ?",
                    arguments: [pluginID, versionText])
            else {
                throw BoardError.notFound("\(pluginID)@\(versionText) is not registered; see plugboard plugin show \(pluginID)")
            }
            if (row["yanked_at"] as String?) != nil {
                throw BoardError.conflict(
                    "\(pluginID)@\(versionText) is yanked and cannot be pinned; pin another version or unyank it first")
            }
            let before = try environmentRow(db, pluginID, environment)
            if before.pinned == versionText {
                return ChangeResult(changed: false, "\(pluginID) is already pinned to \(versionText) in \(environment); nothing changed.")
            }
            let now = Timestamp.now()
            try ensureEnvironment(db, environment, actor: actor, at: now)
            try upsertEnvironmentRow(db, pluginID, environment, enabled: before.enabled, pinned: versionText, actor: actor, at: now)
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "plugin.pin", targetType: "plugin", targetID: pluginID, environment: environment,
                    before: before.json, after: EnvironmentRow(enabled: before.enabled, pinned: versionText).json), at: now)
            return ChangeResult(changed: true, "Pinned \(pluginID) to \(versionText) in \(environment).")
        }
    }

    /// Removes a plug-in's version pin in one environment.
    public func unpin(_ pluginID: String, environment: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        try Validate.environment(environment)
        return try change(
            actor, refusal: AuditEntry(action: "plugin.unpin", targetType: "plugin", targetID: pluginID, environment: environment)
        ) { db in
            try requirePlugin(db, pluginID)
            try requirePluginRole(db, actor: actor, pluginID: pluginID, roles: [.owner, .maintainer], doing: "unpin")
            let before = try environmentRow(db, pluginID, environment)
            guard before.pinned != nil else {
                return ChangeResult(changed: false, "\(pluginID) is not pinned in \(environment); nothing changed.")
            }
            let now = Timestamp.now()
            try upsertEnvironmentRow(db, pluginID, environment, enabled: before.enabled, pinned: nil, actor: actor, at: now)
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "plugin.unpin", targetType: "plugin", targetID: pluginID, environment: environment,
                    before: before.json, after: EnvironmentRow(enabled: before.enabled, pinned: nil).json), at: now)
            return ChangeResult(changed: true, "Unpinned \(pluginID) in \(environment); hosts pick the highest eligible version.")
        }
    }

    // MARK: Yank

    /// Yanks a version (hosts no longer pick it) or, with `undo`, brings it back.
    public func yank(_ pluginID: String, version: SemanticVersion, reason: String?, undo: Bool = false, actor: Actor) throws(BoardError)
        -> ChangeResult
    {
        try Validate.pluginID(pluginID)
        if let reason { try Validate.reason(reason) } else if !undo { try Validate.reason("") }
        let versionText = version.description
        let target = "\(pluginID)@\(versionText)"
        let action = undo ? "plugin.unyank" : "plugin.yank"
        return try change(actor, refusal: AuditEntry(action: action, targetType: "plugin_version", targetID: target)) { db in
            try requirePlugin(db, pluginID)
            try requirePluginRole(db, actor: actor, pluginID: pluginID, roles: [.owner, .maintainer], doing: undo ? "unyank" : "yank")
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT yanked_at, yanked_by, yank_reason FROM plugin_versions WHERE plugin_id = ? AND version = ?",
                    arguments: [pluginID, versionText])
            else {
                throw BoardError.notFound("\(target) is not registered; see plugboard plugin show \(pluginID)")
            }
            let wasYanked = (row["yanked_at"] as String?) != nil
            if wasYanked != undo {
                return ChangeResult(changed: false, "\(target) is \(undo ? "not" : "already") yanked; nothing changed.")
            }
            let now = Timestamp.now()
            let before = AuditJSON.object(["yanked": .bool(wasYanked), "reason": .optional(row["yank_reason"])])
            if undo {
                try db.execute(
                    sql:
                        "UPDATE plugin_versions SET yanked_at = NULL, yanked_by = NULL, yank_reason = NULL WHERE plugin_id = ? AND version = ?",
                    arguments: [pluginID, versionText])
            } else {
                try db.execute(
                    sql: "UPDATE plugin_versions SET yanked_at = ?, yanked_by = ?, yank_reason = ? WHERE plugin_id = ? AND version = ?",
                    arguments: [now, actor.osUser, reason, pluginID, versionText])
            }
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: action, targetType: "plugin_version", targetID: target, reason: reason,
                    before: before, after: .object(["yanked": .bool(!undo), "reason": undo ? .null : .optional(reason)])), at: now)
            var notes: [String] = []
            if !undo {
                let pinnedIn = try String.fetchAll(
                    db, sql: "SELECT environment FROM plugin_environments WHERE plugin_id = ? AND pinned_version = ? ORDER BY environment",
                    arguments: [pluginID, versionText])
                if !pinnedIn.isEmpty {
                    notes.append(
                        "\(target) is still pinned in \(pinnedIn.joined(separator: ", ")), and a pin wins over a yank; unpin it or kill the version to stop hosts loading it."
                    )
                }
            }
            return ChangeResult(changed: true, undo ? "Unyanked \(target)." : "Yanked \(target); hosts no longer pick it.", notes: notes)
        }
    }

    // MARK: Kill switches

    /// Throws a kill switch over one plug-in, one version, or all plug-ins, in every environment.
    ///
    /// Killing all plug-ins needs a board admin; killing one plug-in or version needs its owner, a maintainer or an admin.
    public func kill(_ target: KillTarget, reason: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try validate(target)
        try Validate.reason(reason)
        return try change(actor, refusal: AuditEntry(action: "plugin.kill", targetType: "kill_switch", targetID: target.description)) {
            db in
            try requireKillTarget(db, target, actor: actor, doing: "kill")
            if let active = try activeKillSwitch(db, target) {
                return ChangeResult(
                    changed: false,
                    "\(target) is already killed (since \(active.killedAt) by \(active.killedBy): \(active.reason)); nothing changed.")
            }
            let now = Timestamp.now()
            try db.execute(
                sql: "INSERT INTO kill_switches (scope, plugin_id, version, reason, killed_at, killed_by) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [target.scope, target.pluginID, target.versionText, reason, now, actor.osUser])
            let id = db.lastInsertedRowID
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "plugin.kill", targetType: "kill_switch", targetID: target.description, reason: reason,
                    before: .object(["killed": .bool(false)]),
                    after: .object(["killed": .bool(true), "kill_switch_id": .int(Int(id)), "scope": .string(target.scope)])), at: now)
            return ChangeResult(
                changed: true,
                "Killed \(target) in every environment: hosts deactivate \(target == .all ? "them" : "it") at their next poll.")
        }
    }

    /// Revives (lifts) the active kill switch over a target; the row is kept with who revived it and why.
    public func revive(_ target: KillTarget, reason: String?, actor: Actor) throws(BoardError) -> ChangeResult {
        try validate(target)
        if let reason { try Validate.reason(reason) }
        return try change(actor, refusal: AuditEntry(action: "plugin.revive", targetType: "kill_switch", targetID: target.description)) {
            db in
            try requireKillTarget(db, target, actor: actor, doing: "revive")
            guard let active = try activeKillSwitch(db, target) else {
                return ChangeResult(changed: false, "\(target) is not killed; nothing changed.")
            }
            let now = Timestamp.now()
            try db.execute(
                sql: "UPDATE kill_switches SET revived_at = ?, revived_by = ?, revive_reason = ? WHERE id = ?",
                arguments: [now, actor.osUser, reason, active.id])
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "plugin.revive", targetType: "kill_switch", targetID: target.description, reason: reason,
                    before: .object(["killed": .bool(true), "kill_switch_id": .int(Int(active.id)), "kill_reason": .string(active.reason)]),
                    after: .object(["killed": .bool(false)])), at: now)
            var notes: [String] = []
            if target != .all, try isKilled(db, .all) {
                notes.append("A kill switch over all plug-ins is still active.")
            }
            return ChangeResult(changed: true, "Revived \(target).", notes: notes)
        }
    }

    // MARK: Owners and admins

    /// Adds an owner or maintainer to a plug-in, or changes the role of an existing one. Needs an owner or an admin.
    public func addOwner(_ pluginID: String, principal: String, role: PluginOwner.Role, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        try Validate.principal(principal)
        return try change(actor, refusal: AuditEntry(action: "owner.add", targetType: "plugin", targetID: pluginID)) { db in
            try requirePlugin(db, pluginID)
            try requirePluginRole(db, actor: actor, pluginID: pluginID, roles: [.owner], doing: "manage the owners of")
            let current = try String.fetchOne(
                db, sql: "SELECT role FROM plugin_owners WHERE plugin_id = ? AND principal = ?", arguments: [pluginID, principal])
            if current == role.rawValue {
                return ChangeResult(
                    changed: false,
                    "\(principal) is already \(role == .owner ? "an owner" : "a maintainer") of \(pluginID); nothing changed.")
            }
            if current == PluginOwner.Role.owner.rawValue, role != .owner { try requireAnotherOwner(db, pluginID, principal) }
            let now = Timestamp.now()
            try db.execute(
                sql: """
                    INSERT INTO plugin_owners (plugin_id, principal, role, added_at, added_by) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (plugin_id, principal) DO UPDATE SET role = excluded.role, added_at = excluded.added_at, added_by = excluded.added_by
                    """, arguments: [pluginID, principal, role.rawValue, now, actor.osUser])
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "owner.add", targetType: "plugin", targetID: pluginID,
                    before: .object(["principal": .string(principal), "role": .optional(current)]),
                    after: .object(["principal": .string(principal), "role": .string(role.rawValue)])), at: now)
            return ChangeResult(changed: true, "\(principal) is now \(role == .owner ? "an owner" : "a maintainer") of \(pluginID).")
        }
    }

    /// Removes an owner or maintainer from a plug-in. The last owner cannot be removed.
    public func removeOwner(_ pluginID: String, principal: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        try Validate.principal(principal)
        return try change(actor, refusal: AuditEntry(action: "owner.remove", targetType: "plugin", targetID: pluginID)) { db in
            try requirePlugin(db, pluginID)
            try requirePluginRole(db, actor: actor, pluginID: pluginID, roles: [.owner], doing: "manage the owners of")
            guard
                let current = try String.fetchOne(
                    db, sql: "SELECT role FROM plugin_owners WHERE plugin_id = ? AND principal = ?", arguments: [pluginID, principal])
            else {
                throw BoardError.notFound("\(principal) is not an owner or maintainer of \(pluginID); see plugboard owner list \(pluginID)")
            }
            if current == PluginOwner.Role.owner.rawValue { try requireAnotherOwner(db, pluginID, principal) }
            let now = Timestamp.now()
            try db.execute(sql: "DELETE FROM plugin_owners WHERE plugin_id = ? AND principal = ?", arguments: [pluginID, principal])
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "owner.remove", targetType: "plugin", targetID: pluginID,
                    before: .object(["principal": .string(principal), "role": .string(current)]),
                    after: .object(["principal": .string(principal), "role": .null])), at: now)
            return ChangeResult(changed: true, "Removed \(principal) from the owners of \(pluginID).")
        }
    }

    /// Makes a principal a board admin. Needs an admin.
    public func addAdmin(_ principal: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.principal(principal)
        return try change(actor, refusal: AuditEntry(action: "admin.add", targetType: "admin", targetID: principal)) { db in
            try requireAdmin(db, actor: actor, doing: "add admins")
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM admins WHERE principal = ?", arguments: [principal]) ?? false {
                return ChangeResult(changed: false, "\(principal) is already a board admin; nothing changed.")
            }
            let now = Timestamp.now()
            try db.execute(
                sql: "INSERT INTO admins (principal, added_at, added_by) VALUES (?, ?, ?)", arguments: [principal, now, actor.osUser])
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "admin.add", targetType: "admin", targetID: principal,
                    before: .object(["admin": .bool(false)]), after: .object(["admin": .bool(true)])), at: now)
            return ChangeResult(changed: true, "\(principal) is now a board admin.")
        }
    }

    /// Removes a board admin. Needs an admin; the last admin cannot be removed.
    public func removeAdmin(_ principal: String, actor: Actor) throws(BoardError) -> ChangeResult {
        try Validate.principal(principal)
        return try change(actor, refusal: AuditEntry(action: "admin.remove", targetType: "admin", targetID: principal)) { db in
            try requireAdmin(db, actor: actor, doing: "remove admins")
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM admins WHERE principal = ?", arguments: [principal]) ?? false else {
                throw BoardError.notFound("\(principal) is not a board admin; see plugboard admin list")
            }
            guard try Int.fetchOne(db, sql: "SELECT count(*) FROM admins") ?? 0 > 1 else {
                throw BoardError.conflict("\(principal) is the last board admin and cannot be removed; add another admin first")
            }
            let now = Timestamp.now()
            try db.execute(sql: "DELETE FROM admins WHERE principal = ?", arguments: [principal])
            try AuditLog.append(
                db, actor: actor,
                entry: AuditEntry(
                    action: "admin.remove", targetType: "admin", targetID: principal,
                    before: .object(["admin": .bool(true)]), after: .object(["admin": .bool(false)])), at: now)
            return ChangeResult(changed: true, "\(principal) is no longer a board admin.")
        }
    }

    // MARK: Reads

    /// Every plug-in with its state in `environment`, sorted by id.
    public func pluginSummaries(environment: String) throws(BoardError) -> [PluginSummary] {
        try Validate.environment(environment)
        return try read { db in
            try requireEnvironment(db, environment)
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT p.id, p.name, s.environment, s.enabled, s.killed, s.pinned_version, s.latest_version, s.active_version,
                           (SELECT count(*) FROM plugin_versions v WHERE v.plugin_id = p.id) AS version_count
                    FROM plugins p JOIN plugin_state s ON s.plugin_id = p.id AND s.environment = ?
                    ORDER BY p.id
                    """, arguments: [environment]
            ).map { row in
                PluginSummary(
                    id: row["id"], name: row["name"], environment: row["environment"], enabled: row["enabled"],
                    killed: row["killed"], pinnedVersion: row["pinned_version"], latestVersion: row["latest_version"],
                    activeVersion: row["active_version"], versionCount: row["version_count"])
            }
        }
    }

    /// Everything about one plug-in.
    public func pluginDetail(_ pluginID: String) throws(BoardError) -> PluginDetail {
        try Validate.pluginID(pluginID)
        return try read { db in
            guard let plugin = try Row.fetchOne(db, sql: "SELECT * FROM plugins WHERE id = ?", arguments: [pluginID]) else {
                throw BoardError.notFound("plug-in \(pluginID) is not registered; see plugboard plugin list")
            }
            let dependencies = Dictionary(
                grouping: try Row.fetchAll(
                    db, sql: "SELECT version, dependency_id, version_range FROM plugin_dependencies WHERE plugin_id = ?",
                    arguments: [pluginID])
            ) { $0["version"] as String }
            let killedVersions = Set(
                try String.fetchAll(
                    db, sql: "SELECT version FROM kill_switches WHERE scope = 'version' AND plugin_id = ? AND revived_at IS NULL",
                    arguments: [pluginID]))
            let versions = try Row.fetchAll(
                db, sql: "SELECT * FROM plugin_versions WHERE plugin_id = ? ORDER BY sort_key DESC", arguments: [pluginID]
            ).map { row in
                let version: String = row["version"]
                let capabilities = (try? JSONDecoder().decode([String].self, from: Data((row["capabilities"] as String).utf8))) ?? []
                return PluginVersionInfo(
                    version: version, name: row["name"], description: row["description"], hostRange: row["host_range"],
                    gate: row["gate_flag"],
                    entry: row["entry_symbol"], capabilities: capabilities,
                    dependencies: Dictionary(
                        uniqueKeysWithValues: (dependencies[version] ?? []).map {
                            ($0["dependency_id"] as String, $0["version_range"] as String)
                        }),
                    artifactSHA256: row["artifact_sha256"], registeredAt: row["registered_at"], registeredBy: row["registered_by"],
                    yankedAt: row["yanked_at"], yankedBy: row["yanked_by"], yankReason: row["yank_reason"],
                    killed: killedVersions.contains(version), manifest: row["manifest_json"])
            }
            let environments = try Row.fetchAll(
                db,
                sql:
                    "SELECT environment, enabled, pinned_version, active_version FROM plugin_state WHERE plugin_id = ? ORDER BY environment",
                arguments: [pluginID]
            ).map {
                EnvironmentState(
                    environment: $0["environment"], enabled: $0["enabled"], pinnedVersion: $0["pinned_version"],
                    activeVersion: $0["active_version"])
            }
            let owners = try fetchOwners(db, pluginID)
            let kills = try Row.fetchAll(
                db, sql: "SELECT * FROM kill_switches WHERE plugin_id = ? OR scope = 'all' ORDER BY id DESC", arguments: [pluginID]
            ).map(KillSwitch.init(row:))
            return PluginDetail(
                id: plugin["id"], name: plugin["name"], description: plugin["description"], createdAt: plugin["created_at"],
                createdBy: plugin["created_by"], versions: versions, environments: environments, owners: owners, killSwitches: kills)
        }
    }

    /// The owners and maintainers of a plug-in.
    public func owners(of pluginID: String) throws(BoardError) -> [PluginOwner] {
        try Validate.pluginID(pluginID)
        return try read { db in
            try requirePlugin(db, pluginID)
            return try fetchOwners(db, pluginID)
        }
    }

    /// The board admins.
    public func admins() throws(BoardError) -> [BoardAdmin] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM admins ORDER BY principal").map {
                BoardAdmin(principal: $0["principal"], addedAt: $0["added_at"], addedBy: $0["added_by"])
            }
        }
    }

    /// The environments of the board, sorted by name.
    public func environments() throws(BoardError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT name FROM environments ORDER BY name") }
    }

    /// Kill switches, active only unless `includeRevived`.
    public func killSwitches(includeRevived: Bool = false) throws(BoardError) -> [KillSwitch] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM kill_switches \(includeRevived ? "" : "WHERE revived_at IS NULL") ORDER BY id DESC")
                .map(KillSwitch.init(row:))
        }
    }

    /// A fact about the board itself (`board_id`, `created_at`, `created_by`).
    public func info(_ key: String) throws(BoardError) -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT value FROM board_info WHERE key = ?", arguments: [key]) }
    }
}

// MARK: - Helpers shared by the operations above

struct EnvironmentRow {
    var enabled: Bool
    var pinned: String?
    var json: AuditJSON { .object(["enabled": .bool(enabled), "pinned_version": .optional(pinned)]) }
}

extension KillSwitch {
    init(row: Row) {
        self.init(
            id: row["id"], scope: row["scope"], pluginID: row["plugin_id"], version: row["version"], reason: row["reason"],
            killedAt: row["killed_at"], killedBy: row["killed_by"], revivedAt: row["revived_at"], revivedBy: row["revived_by"],
            reviveReason: row["revive_reason"])
    }
}

func fetchOwners(_ db: Database, _ pluginID: String) throws -> [PluginOwner] {
    try Row.fetchAll(db, sql: "SELECT * FROM plugin_owners WHERE plugin_id = ? ORDER BY role, principal", arguments: [pluginID]).map {
        PluginOwner(
            principal: $0["principal"], role: PluginOwner.Role(rawValue: $0["role"]) ?? .maintainer, addedAt: $0["added_at"],
            addedBy: $0["added_by"])
    }
}

func isAdmin(_ db: Database, _ principal: String) throws -> Bool {
    try Bool.fetchOne(db, sql: "SELECT 1 FROM admins WHERE principal = ?", arguments: [principal]) ?? false
}

package func requireAdmin(_ db: Database, actor: Actor, doing what: String) throws {
    guard try isAdmin(db, actor.osUser) else {
        throw BoardError.notAllowed("\(actor.osUser) may not \(what): only a board admin may (see plugboard admin list)")
    }
}

package func requirePlugin(_ db: Database, _ pluginID: String) throws {
    guard try Bool.fetchOne(db, sql: "SELECT 1 FROM plugins WHERE id = ?", arguments: [pluginID]) ?? false else {
        throw BoardError.notFound("plug-in \(pluginID) is not registered; see plugboard plugin list")
    }
}

func requireEnvironment(_ db: Database, _ environment: String) throws {
    guard try Bool.fetchOne(db, sql: "SELECT 1 FROM environments WHERE name = ?", arguments: [environment]) ?? false else {
        let known = try String.fetchAll(db, sql: "SELECT name FROM environments ORDER BY name")
        throw BoardError.notFound(
            "environment '\(environment)' does not exist (known: \(known.joined(separator: ", "))); it is created the first time a plug-in is enabled, disabled or pinned in it"
        )
    }
}

/// Passes for admins and for principals holding one of `roles` on the plug-in.
package func requirePluginRole(_ db: Database, actor: Actor, pluginID: String, roles: Set<PluginOwner.Role>, doing what: String) throws {
    if try isAdmin(db, actor.osUser) { return }
    if let role = try String.fetchOne(
        db, sql: "SELECT role FROM plugin_owners WHERE plugin_id = ? AND principal = ?", arguments: [pluginID, actor.osUser]),
        let parsed = PluginOwner.Role(rawValue: role), roles.contains(parsed)
    {
        return
    }
    let who = roles.contains(.maintainer) ? "its owners, its maintainers or a board admin" : "its owners or a board admin"
    throw BoardError.notAllowed(
        "\(actor.osUser) may not \(what) \(pluginID): only \(who) may; ask one of them (plugboard owner list \(pluginID))")
}

func requireAnotherOwner(_ db: Database, _ pluginID: String, _ principal: String) throws {
    let others =
        try Int.fetchOne(
            db, sql: "SELECT count(*) FROM plugin_owners WHERE plugin_id = ? AND role = 'owner' AND principal <> ?",
            arguments: [pluginID, principal]) ?? 0
    guard others > 0 else {
        throw BoardError.conflict("\(principal) is the last owner of \(pluginID) and cannot be removed or demoted; add another owner first")
    }
}

func environmentRow(_ db: Database, _ pluginID: String, _ environment: String) throws -> EnvironmentRow {
    let row = try Row.fetchOne(
        db, sql: "SELECT enabled, pinned_version FROM plugin_environments WHERE plugin_id = ? AND environment = ?",
        arguments: [pluginID, environment])
    return EnvironmentRow(enabled: row?["enabled"] ?? false, pinned: row?["pinned_version"])
}

func upsertEnvironmentRow(
    _ db: Database, _ pluginID: String, _ environment: String, enabled: Bool, pinned: String?, actor: Actor, at now: String
) throws {
    try db.execute(
        sql: """
            INSERT INTO plugin_environments (plugin_id, environment, enabled, pinned_version, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (plugin_id, environment) DO UPDATE SET enabled = excluded.enabled, pinned_version = excluded.pinned_version,
                updated_at = excluded.updated_at, updated_by = excluded.updated_by
            """, arguments: [pluginID, environment, enabled, pinned, now, actor.osUser])
}

/// Creates an environment the first time a change names it, with its own audit row.
func ensureEnvironment(_ db: Database, _ environment: String, actor: Actor, at now: String) throws {
    if try Bool.fetchOne(db, sql: "SELECT 1 FROM environments WHERE name = ?", arguments: [environment]) ?? false { return }
    try db.execute(
        sql: "INSERT INTO environments (name, created_at, created_by) VALUES (?, ?, ?)", arguments: [environment, now, actor.osUser])
    try AuditLog.append(
        db, actor: actor,
        entry: AuditEntry(
            action: "environment.create", targetType: "environment", targetID: environment,
            after: .object(["name": .string(environment)])), at: now)
}

func activeKillSwitch(_ db: Database, _ target: KillTarget) throws -> KillSwitch? {
    try Row.fetchOne(
        db,
        sql: """
            SELECT * FROM kill_switches WHERE revived_at IS NULL AND scope = ? AND ifnull(plugin_id, '') = ? AND ifnull(version, '') = ?
            """, arguments: [target.scope, target.pluginID ?? "", target.versionText ?? ""]
    ).map(KillSwitch.init(row:))
}

/// True when an active kill switch covers `target` (for a plug-in: its own or `all`).
func isKilled(_ db: Database, _ target: KillTarget) throws -> Bool {
    if try activeKillSwitch(db, .all) != nil { return true }
    switch target {
    case .all: return false
    case .plugin: return try activeKillSwitch(db, target) != nil
    case .version(let id, _): return try activeKillSwitch(db, .plugin(id)) != nil || activeKillSwitch(db, target) != nil
    }
}

extension Board {
    func validate(_ target: KillTarget) throws(BoardError) {
        if let id = target.pluginID { try Validate.pluginID(id) }
    }
}

func requireKillTarget(_ db: Database, _ target: KillTarget, actor: Actor, doing what: String) throws {
    switch target {
    case .all:
        try requireAdmin(db, actor: actor, doing: "\(what) all plug-ins")
    case .plugin(let id):
        try requirePlugin(db, id)
        try requirePluginRole(db, actor: actor, pluginID: id, roles: [.owner, .maintainer], doing: what)
    case .version(let id, let version):
        try requirePlugin(db, id)
        try requirePluginRole(db, actor: actor, pluginID: id, roles: [.owner, .maintainer], doing: what)
        guard
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM plugin_versions WHERE plugin_id = ? AND version = ?", arguments: [id, version.description]) ?? false
        else {
            throw BoardError.notFound("\(id)@\(version) is not registered; see plugboard plugin show \(id)")
        }
    }
}
