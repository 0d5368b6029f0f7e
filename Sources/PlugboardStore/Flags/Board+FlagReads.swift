package import PlugboardFlags
package import PlugboardModel

extension Board {
    /// The Unleash client-API feature set of one environment: every flag that is not archived, and every segment.
    /// This is what hosts evaluate and what `plugboard flag export` prints.
    ///
    /// - Parameter requireExisting: Refuse an environment the board does not know (`.notFound`), so that an
    ///   operator's typo in `--env` is not taken for an environment where every flag is off. Hosts leave it
    ///   false: an environment nobody has configured yet has every flag off.
    package func featureSet(environment: String, requireExisting: Bool = false) throws(BoardError) -> FeatureSet {
        try Validate.environment(environment)
        return try read { db in
            if requireExisting { try RegistryQueries.requireEnvironment(db, environment) }
            return try FlagQueries.featureSet(db, environment: environment)
        }
    }

    /// Flags with their state in `environment`, sorted by name.
    package func flagSummaries(environment: String, staleOnly: Bool = false, includeArchived: Bool = false) throws(BoardError)
        -> [FlagSummary]
    {
        try Validate.environment(environment)
        return try read { db in
            try RegistryQueries.requireEnvironment(db, environment)
            return try FlagQueries.summaries(db, environment: environment, staleOnly: staleOnly, includeArchived: includeArchived)
        }
    }

    /// One flag with its definition in every environment.
    package func flagDetail(_ name: String) throws(BoardError) -> FlagDetail {
        try Validate.flagName(name)
        let usage = try flagUsage(name)
        return try read { db in
            guard let flag = try FlagQueries.flag(db, name) else {
                throw BoardError.notFound("flag '\(name)' does not exist; see plugboard flag list")
            }
            let environments = try RegistryQueries.environments(db).map { environment in
                let definition = try FlagQueries.definition(db, flag: name, environment: environment)
                return FlagEnvironmentDefinition(
                    environment: environment, enabled: definition.enabled, strategies: definition.strategies, variants: definition.variants)
            }
            return FlagDetail(
                name: name, type: flag.type, description: flag.description, owner: flag.owner, impressionData: flag.impressionData,
                dependencies: try FlagQueries.decode(flag.dependenciesJSON, "dependencies_json", of: "flag '\(name)'"),
                createdAt: flag.createdAt, createdBy: flag.createdBy, updatedAt: flag.updatedAt, archivedAt: flag.archivedAt,
                potentiallyStale: try FlagQueries.isPotentiallyStale(db, name), environments: environments,
                usage: usage)
        }
    }
}
