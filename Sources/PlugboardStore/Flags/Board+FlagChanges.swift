import PlugboardFlags
package import PlugboardModel

extension Board {
    /// Creates a flag, disabled in every environment. Anyone who can write the board may; they become its owner.
    package func createFlag(_ name: String, type: FlagType = .release, description: String? = nil, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.newFlagName(name)
        if let description { try Validate.text(description, field: "the description", limit: 4000) }
        return try change(actor, refusal: AuditEntry(action: .flagCreate, targetType: "flag", targetID: name)) { change in
            if let existing = try FlagQueries.flag(change.db, name) {
                throw BoardError.conflict(
                    "flag '\(name)' already exists (created \(existing.createdAt) by \(existing.createdBy)); choose another name")
            }
            try FlagQueries.insertFlag(change.db, name: name, type: type, description: description, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .flagCreate, targetType: "flag", targetID: name,
                    after: .object([
                        "type": .string(type.rawValue), "description": .optional(description), "owner": .string(change.actor.osUser),
                    ])))
            return ChangeResult(
                changed: true,
                "Created the \(type.rawValue) flag '\(name)'; it is off in every environment until you run plugboard flag enable \(name).")
        }
    }

    /// Switches a flag on or off in one environment (created if new).
    package func setFlagEnabled(_ name: String, _ enabled: Bool, environment: String, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try changeFlagDefinition(name, environment: environment, action: enabled ? .flagEnable : .flagDisable, by: actor) {
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
    package func rolloutFlag(_ name: String, percent: Int, stickiness: String = "default", environment: String, by actor: Principal)
        throws(BoardError) -> ChangeResult
    {
        guard (0...100).contains(percent) else { throw .invalid("the rollout percentage \(percent) is not between 0 and 100") }
        try Validate.stickiness(stickiness)
        return try changeFlagDefinition(name, environment: environment, action: .flagRollout, by: actor) { definition in
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
    package func archiveFlag(_ name: String, archived: Bool, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.flagName(name)
        let action: AuditAction = archived ? .flagArchive : .flagUnarchive
        return try change(actor, refusal: AuditEntry(action: action, targetType: "flag", targetID: name)) { change in
            let flag = try FlagQueries.requireFlag(change.db, name)
            try requireFlagOwner(change, flag)
            if flag.isArchived == archived {
                return ChangeResult(changed: false, "flag '\(name)' is \(archived ? "already" : "not") archived; nothing changed.")
            }
            try FlagQueries.setArchived(change.db, name, archived, by: change.actor, at: change.now)
            try FlagQueries.validateAllEnvironments(change.db)
            try change.record(
                AuditEntry(
                    action: action, targetType: "flag", targetID: name, before: .object(["archived": .bool(flag.isArchived)]),
                    after: .object(["archived": .bool(archived)])))
            return ChangeResult(
                changed: true, archived ? "Archived flag '\(name)'; hosts no longer evaluate it (it is off)." : "Unarchived flag '\(name)'."
            )
        }
    }

    /// Applies `edit` to a flag's definition in one environment, validates the environment's whole feature set,
    /// and audits the before and after. `edit` returns a message when there is nothing to change.
    private func changeFlagDefinition(
        _ name: String, environment: String, action: AuditAction, by actor: Principal,
        edit: (inout FlagQueries.Definition) throws -> String?,
        done: (FlagQueries.Definition) -> String
    ) throws(BoardError) -> ChangeResult {
        try Validate.flagName(name)
        try Validate.environment(environment)
        return try change(actor, refusal: AuditEntry(action: action, targetType: "flag", targetID: name, environment: environment)) {
            change in
            let db = change.db
            let flag = try FlagQueries.requireFlag(db, name)
            try requireFlagOwner(change, flag)
            if flag.isArchived {
                throw BoardError.conflict("flag '\(name)' is archived; unarchive it first with plugboard flag unarchive \(name)")
            }
            var definition = try FlagQueries.definition(db, flag: name, environment: environment)
            if let unchanged = try edit(&definition) { return ChangeResult(changed: false, unchanged) }
            let before = try FlagQueries.auditState(db, flag: name, environment: environment)
            try change.ensureEnvironment(environment)
            try FlagQueries.saveDefinition(
                db, flag: name, environment: environment, definition: definition, by: change.actor, at: change.now)
            try FlagQueries.touchFlag(db, name, by: change.actor, at: change.now)
            try FlagQueries.validate(db, environment: environment)
            try change.record(
                AuditEntry(
                    action: action, targetType: "flag", targetID: name, environment: environment, before: before,
                    after: try FlagQueries.auditState(db, flag: name, environment: environment)))
            return ChangeResult(changed: true, done(definition))
        }
    }

    /// A flag changes only by its owner or a board admin.
    private func requireFlagOwner(_ change: AuditedChange, _ flag: FlagQueries.FlagRecord) throws {
        if try flag.owner == change.actor.osUser || RoleQueries.isAdmin(change.db, change.actor.osUser) { return }
        throw BoardError.notAllowed(
            "\(change.actor.osUser) may not change flag '\(flag.name)': only its owner (\(flag.owner)) or a board admin may")
    }
}
