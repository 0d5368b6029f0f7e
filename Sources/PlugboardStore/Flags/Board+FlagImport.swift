package import PlugboardFlags
package import PlugboardModel

extension Board {
    /// Imports an Unleash client-API feature set into one environment, in one transaction.
    ///
    /// Flags in the file are created or replaced in that environment (type, description, dependencies and
    /// impression data are board-wide); flags not in the file are left alone; segments are created or replaced
    /// by id. An archived flag in the file is brought back (a note says so). Flags the file leaves as they were
    /// are not touched and get no audit row. The result must validate as a whole (no unknown operator, invalid
    /// regex/CIDR/semver, dependency cycle…), or nothing changes. Needs a board admin.
    package func importFlags(_ set: FeatureSet, environment: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.environment(environment)
        let report = try Self.validateImport(set)
        return try change(
            actor, refusal: AuditEntry(action: .flagImport, targetType: "flag_set", targetID: environment, environment: environment),
            requiring: .admin(doing: "import flags")
        ) { change in
            try change.ensureEnvironment(environment)
            for segment in set.segments ?? [] { try importSegment(segment, change) }
            var changed = 0
            var unarchived: [String] = []
            for feature in set.features {
                guard let wasArchived = try importFlag(feature, environment: environment, change) else { continue }
                changed += 1
                if wasArchived { unarchived.append(feature.name) }
            }
            try FlagQueries.validateAllEnvironments(change.db)
            let notes =
                unarchived.map { "flag '\($0)' was archived; the import brought it back in every environment" }
                + report.warnings.map(\.description)
            return ChangeResult(
                changed: changed > 0,
                "Imported \(set.features.count) flag(s) and \((set.segments ?? []).count) segment(s) into \(environment): \(changed) flag(s) changed.",
                notes: notes)
        }
    }

    /// Checks the file before any transaction: names, types, duplicates, and the set's own validation.
    private static func validateImport(_ set: FeatureSet) throws(BoardError) -> FlagValidationReport {
        for feature in set.features {
            try Validate.newFlagName(feature.name)
            if let type = feature.type, FlagType(rawValue: type) == nil {
                let known = FlagType.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalid("flag '\(feature.name)' type: '\(Validate.printable(type))' is not a flag type; use \(known)")
            }
        }
        var names = Set<String>()
        for feature in set.features where !names.insert(feature.name).inserted {
            throw .invalid("the features file defines flag '\(feature.name)' twice")
        }
        let report = set.validate()
        if let first = report.errors.first {
            let more = report.errors.count > 1 ? " (and \(report.errors.count - 1) more problem(s))" : ""
            throw .invalid("the features file is invalid: \(first)\(more)")
        }
        return report
    }

    /// Creates or replaces a segment, audited, unless it is unchanged.
    private func importSegment(_ segment: Segment, _ change: AuditedChange) throws {
        let constraints = FlagQueries.encode(segment.constraints)
        let before = try FlagQueries.segment(change.db, id: segment.id)
        if let before, before.name == segment.name, before.constraintsJSON == constraints { return }
        try FlagQueries.saveSegment(
            change.db, id: segment.id, name: segment.name, constraintsJSON: constraints, by: change.actor, at: change.now)
        try change.record(
            AuditEntry(
                action: .segmentImport, targetType: "segment", targetID: String(segment.id),
                before: before.map { .object(["name": .optional($0.name), "constraints": .rawJSON($0.constraintsJSON)]) },
                after: .object(["name": .optional(segment.name), "constraints": .rawJSON(constraints)])))
    }

    /// Creates or replaces one flag in `environment`, audited; returns nil when the file leaves it as it was (its
    /// rows, and their `updated_at`, stay untouched), else whether it was archived before.
    private func importFlag(_ feature: FeatureFlag, environment: String, _ change: AuditedChange) throws -> Bool? {
        let db = change.db
        let existing = try FlagQueries.flag(db, feature.name)
        let before = try existing.map { _ in try FlagQueries.auditState(db, flag: feature.name, environment: environment) }
        let type = feature.type.flatMap(FlagType.init(rawValue:)) ?? existing.flatMap { FlagType(rawValue: $0.type) } ?? .release
        let dependencies = FlagQueries.encode(feature.dependencies ?? [])
        var after: AuditJSON?
        try change.savepoint {
            if existing == nil {
                try FlagQueries.insertFlag(
                    db, name: feature.name, type: type, description: feature.description, impressionData: feature.impressionData ?? false,
                    dependenciesJSON: dependencies, by: change.actor, at: change.now)
            } else {
                try FlagQueries.replaceFlag(
                    db, name: feature.name, type: type, description: feature.description, impressionData: feature.impressionData ?? false,
                    dependenciesJSON: dependencies, by: change.actor, at: change.now)
            }
            let definition = FlagQueries.Definition(
                enabled: feature.enabled, strategies: feature.strategies ?? [], variants: feature.variants ?? [])
            try FlagQueries.saveDefinition(
                db, flag: feature.name, environment: environment, definition: definition, by: change.actor, at: change.now)
            let state = try FlagQueries.auditState(db, flag: feature.name, environment: environment)
            if state == before { return false }
            after = state
            return true
        }
        guard let after else { return nil }
        try change.record(
            AuditEntry(
                action: .flagImport, targetType: "flag", targetID: feature.name, environment: environment, before: before, after: after))
        return existing?.isArchived ?? false
    }
}
