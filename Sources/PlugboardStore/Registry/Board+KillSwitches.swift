import GRDB
package import PlugboardModel

extension Board {
    /// Throws a kill switch over one plug-in, one version, or all plug-ins, in every environment.
    ///
    /// Killing all plug-ins needs a board admin; killing one plug-in or version needs its owner, a maintainer or an admin.
    package func kill(_ target: KillTarget, reason: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try KillSwitchRules.validate(target)
        try Validate.reason(reason)
        return try change(actor, refusal: AuditEntry(action: .pluginKill, targetType: "kill_switch", targetID: target.description)) {
            change in
            let resolved = try KillSwitchRules.requireTarget(change, target, doing: "kill")
            if let active = try RegistryQueries.activeKillSwitch(change.db, resolved) {
                return ChangeResult(
                    changed: false,
                    "\(resolved) is already killed (since \(active.killedAt) by \(active.killedBy): \(active.reason)); nothing changed.")
            }
            let id = try RegistryQueries.insertKillSwitch(change.db, resolved, reason: reason, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .pluginKill, targetType: "kill_switch", targetID: resolved.description, reason: reason,
                    before: .object(["killed": .bool(false)]),
                    after: .object(["killed": .bool(true), "kill_switch_id": .int(Int(id)), "scope": .string(resolved.scope)])))
            return ChangeResult(
                changed: true,
                "Killed \(resolved) in every environment: hosts deactivate \(resolved == .all ? "them" : "it") at their next poll.")
        }
    }

    /// Revives (lifts) the active kill switch over a target; the row is kept with who revived it and why.
    package func revive(_ target: KillTarget, reason: String?, by actor: Principal) throws(BoardError) -> ChangeResult {
        try KillSwitchRules.validate(target)
        if let reason { try Validate.reason(reason) }
        return try change(actor, refusal: AuditEntry(action: .pluginRevive, targetType: "kill_switch", targetID: target.description)) {
            change in
            let resolved = try KillSwitchRules.requireTarget(change, target, doing: "revive")
            guard let active = try RegistryQueries.activeKillSwitch(change.db, resolved) else {
                return ChangeResult(changed: false, "\(resolved) is not killed; nothing changed.")
            }
            try RegistryQueries.reviveKillSwitch(change.db, id: active.id, reason: reason, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .pluginRevive, targetType: "kill_switch", targetID: resolved.description, reason: reason,
                    before: .object(["killed": .bool(true), "kill_switch_id": .int(Int(active.id)), "kill_reason": .string(active.reason)]),
                    after: .object(["killed": .bool(false)])))
            var notes: [String] = []
            if resolved != .all, try KillSwitchRules.isKilled(change.db, .all) {
                notes.append("A kill switch over all plug-ins is still active.")
            }
            return ChangeResult(changed: true, "Revived \(resolved).", notes: notes)
        }
    }

    /// Kill switches, active only unless `includeRevived`.
    package func killSwitches(includeRevived: Bool = false) throws(BoardError) -> [KillSwitch] {
        try read { db in try RegistryQueries.killSwitches(db, includeRevived: includeRevived) }
    }
}

/// Which kill switches apply, and who may throw them.
enum KillSwitchRules {
    static func validate(_ target: KillTarget) throws(BoardError) {
        if let id = target.pluginID { try Validate.pluginID(id) }
    }

    /// True when an active kill switch covers `target` (for a plug-in: its own or `all`).
    static func isKilled(_ db: Database, _ target: KillTarget) throws -> Bool {
        if try RegistryQueries.activeKillSwitch(db, .all) != nil { return true }
        switch target {
        case .all: return false
        case .plugin: return try RegistryQueries.activeKillSwitch(db, target) != nil
        case .version(let id, _):
            return try RegistryQueries.activeKillSwitch(db, .plugin(id)) != nil || RegistryQueries.activeKillSwitch(db, target) != nil
        }
    }

    /// All plug-ins need an admin; one plug-in or version its owners or maintainers, and it must be registered.
    ///
    /// Returns the target as registered: a version is the registered one with its precedence (see ``VersionLookup``).
    static func requireTarget(_ change: AuditedChange, _ target: KillTarget, doing what: String) throws -> KillTarget {
        switch target {
        case .all:
            try RequiredRole.check(.admin(doing: "\(what) all plug-ins"), change.db, by: change.actor)
        case .plugin(let id):
            try RequiredRole.check(.pluginMaintainers(id, doing: what), change.db, by: change.actor)
        case .version(let id, let version):
            try RequiredRole.check(.pluginMaintainers(id, doing: what), change.db, by: change.actor)
            guard let registered = try VersionLookup.registeredVersion(change.db, id, version) else {
                throw BoardError.notFound("\(id)@\(version) is not registered; see plugboard plugin show \(id)")
            }
            return .version(id, registered)
        }
        return target
    }
}
