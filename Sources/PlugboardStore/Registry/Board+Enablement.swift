import GRDB
package import PlugboardModel
package import PlugboardVersioning

extension Board {
    /// Enables or disables a plug-in in one environment (created if it does not exist yet).
    ///
    /// Where the environment is protected, enabling takes in the plug-in's newest release (``EnvironmentRow/approved``):
    /// hosts there run nothing newer, so a release registered later runs only once a change takes it in, and enabling a
    /// plug-in that is already enabled takes in the newest release when it is newer than the one taken in.
    package func setEnabled(_ pluginID: String, _ enabled: Bool, environment: String, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.pluginID(pluginID)
        try Validate.environment(environment)
        let action: AuditAction = enabled ? .pluginEnable : .pluginDisable
        var takenIn: String?
        return try changeEnvironmentRow(
            pluginID, environment, action: action, doing: enabled ? "enable" : "disable", by: actor
        ) { before, db in
            var after = EnvironmentRow(enabled: enabled, pinned: before.pinned, approved: before.approved)
            if enabled {
                after.approved = try RegistryQueries.releaseTakenIn(db, pluginID, environment: environment, current: before.approved)
                if after.approved != before.approved { takenIn = after.approved }
            }
            if after == before {
                return .unchanged("\(pluginID) is already \(enabled ? "enabled" : "disabled") in \(environment); nothing changed.")
            }
            return .changed(after)
        } done: { change in
            var notes: [String] = []
            if enabled, try KillSwitchRules.isKilled(change.db, .plugin(pluginID)) {
                notes.append("A kill switch still covers \(pluginID); hosts will not load it until it is revived.")
            }
            let taken = takenIn.map { "; hosts there run releases up to \($0), the newest taken in" } ?? ""
            return ChangeResult(
                changed: true, "\(enabled ? "Enabled" : "Disabled") \(pluginID) in \(environment)\(taken).", notes: notes)
        }
    }

    /// Pins a plug-in to one version in one environment; hosts load that version instead of the highest.
    package func pin(_ pluginID: String, version: SemanticVersion, environment: String, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.pluginID(pluginID)
        try Validate.environment(environment)
        var versionText = version.description  // the registered text, build metadata included
        return try changeEnvironmentRow(pluginID, environment, action: .pluginPin, doing: "pin", by: actor) { before, db in
            guard let registered = try VersionLookup.registered(db, pluginID, version),
                let yank = try RegistryQueries.yankState(db, pluginID, registered)
            else {
                throw BoardError.notFound("\(pluginID)@\(version) is not registered; see plugboard plugin show \(pluginID)")
            }
            versionText = registered
            if yank.yanked {
                throw BoardError.conflict(
                    "\(pluginID)@\(versionText) is yanked and cannot be pinned; pin another version or unyank it first")
            }
            if before.pinned == versionText {
                return .unchanged("\(pluginID) is already pinned to \(versionText) in \(environment); nothing changed.")
            }
            return .changed(EnvironmentRow(enabled: before.enabled, pinned: versionText, approved: before.approved))
        } done: { _ in
            ChangeResult(changed: true, "Pinned \(pluginID) to \(versionText) in \(environment).")
        }
    }

    /// Removes a plug-in's version pin in one environment.
    package func unpin(_ pluginID: String, environment: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.pluginID(pluginID)
        try Validate.environment(environment)
        return try changeEnvironmentRow(pluginID, environment, action: .pluginUnpin, doing: "unpin", by: actor) { before, db in
            guard before.pinned != nil else { return .unchanged("\(pluginID) is not pinned in \(environment); nothing changed.") }
            // Unpinned where the environment is protected, hosts run releases up to the newest one, taken in now.
            let approved = try RegistryQueries.releaseTakenIn(db, pluginID, environment: environment, current: before.approved)
            return .changed(EnvironmentRow(enabled: before.enabled, pinned: nil, approved: approved))
        } done: { _ in
            ChangeResult(changed: true, "Unpinned \(pluginID) in \(environment); hosts pick the highest eligible version.")
        }
    }

    /// Yanks a version (hosts no longer pick it) or, with `undo`, brings it back.
    package func yank(_ pluginID: String, version: SemanticVersion, reason: String?, undo: Bool = false, by actor: Principal)
        throws(BoardError)
        -> ChangeResult
    {
        try Validate.pluginID(pluginID)
        if let reason { try Validate.reason(reason) } else if !undo { try Validate.reason("") }
        let action: AuditAction = undo ? .pluginUnyank : .pluginYank
        return try change(
            actor, refusal: AuditEntry(action: action, targetType: "plugin_version", targetID: "\(pluginID)@\(version)"),
            requiring: .pluginMaintainers(pluginID, doing: undo ? "unyank" : "yank")
        ) { change in
            let db = change.db
            guard let versionText = try VersionLookup.registered(db, pluginID, version),
                let state = try RegistryQueries.yankState(db, pluginID, versionText)
            else {
                throw BoardError.notFound("\(pluginID)@\(version) is not registered; see plugboard plugin show \(pluginID)")
            }
            let target = "\(pluginID)@\(versionText)"
            if state.yanked != undo {
                return ChangeResult(changed: false, "\(target) is \(undo ? "not" : "already") yanked; nothing changed.")
            }
            try RegistryQueries.setYank(db, pluginID, versionText, reason: undo ? nil : reason, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: action, targetType: "plugin_version", targetID: target, reason: reason,
                    before: .object(["yanked": .bool(state.yanked), "reason": .optional(state.reason)]),
                    after: .object(["yanked": .bool(!undo), "reason": undo ? .null : .optional(reason)])))
            var notes: [String] = []
            let pinnedIn = undo ? [] : try RegistryQueries.environmentsPinning(db, pluginID, versionText)
            if !pinnedIn.isEmpty {
                notes.append(
                    "\(target) is still pinned in \(pinnedIn.joined(separator: ", ")), and a pin wins over a yank; unpin it or kill the version to stop hosts loading it."
                )
            }
            return ChangeResult(changed: true, undo ? "Unyanked \(target)." : "Yanked \(target); hosts no longer pick it.", notes: notes)
        }
    }

    /// What an edit of a plug-in's environment row decided.
    private enum RowEdit {
        case unchanged(String)
        case changed(EnvironmentRow)
    }

    /// Applies `edit` to a plug-in's row in one environment (creating the environment if needed) and audits the
    /// row before and after; needs the plug-in's owners or maintainers.
    private func changeEnvironmentRow(
        _ pluginID: String, _ environment: String, action: AuditAction, doing what: String, by actor: Principal,
        edit: (EnvironmentRow, Database) throws -> RowEdit, done: (AuditedChange) throws -> ChangeResult
    ) throws(BoardError) -> ChangeResult {
        try change(
            actor, refusal: AuditEntry(action: action, targetType: "plugin", targetID: pluginID, environment: environment),
            requiring: .pluginMaintainers(pluginID, doing: what)
        ) { change in
            let before = try RegistryQueries.environmentRow(change.db, pluginID, environment)
            switch try edit(before, change.db) {
            case .unchanged(let message):
                return ChangeResult(changed: false, message)
            case .changed(let after):
                try change.ensureEnvironment(environment)
                try RegistryQueries.saveEnvironmentRow(change.db, pluginID, environment, after, by: change.actor, at: change.now)
                try change.record(
                    AuditEntry(
                        action: action, targetType: "plugin", targetID: pluginID, environment: environment, before: before.json,
                        after: after.json))
                return try done(change)
            }
        }
    }
}

extension AuditedChange {
    /// Creates an environment the first time a change names it, with its own audit row.
    func ensureEnvironment(_ environment: String) throws {
        if try RegistryQueries.environmentExists(db, environment) { return }
        try RegistryQueries.insertEnvironment(db, environment, by: actor, at: now)
        try record(
            AuditEntry(
                action: .environmentCreate, targetType: "environment", targetID: environment,
                after: .object(["name": .string(environment)])))
    }
}
