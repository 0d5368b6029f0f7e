import GRDB
package import PlugboardModel

extension Board {
    /// Reads a ``RegistrySnapshot`` of `environment` in one read transaction. An environment the board does
    /// not know yet simply has nothing enabled.
    ///
    /// - Parameter relevantTo: When given, the snapshot holds only what a host can act on: the plug-ins enabled in
    ///   the environment, the plug-ins named here (a host's compiled-in, active and reported ones), and every
    ///   plug-in their versions depend on, transitively. A host's work then follows what it runs, not the size of
    ///   the registry. When nil, every registered plug-in.
    package func registrySnapshot(environment: String, relevantTo: Set<String>? = nil) throws(BoardError) -> RegistrySnapshot {
        try Validate.environment(environment)
        // The version first: a change committed while the snapshot is read makes the next version() differ.
        let boardVersion = try version()
        return try read { db in try readRegistry(db, environment: environment, relevantTo: relevantTo, version: boardVersion) }
    }

    /// A ``RegistrySnapshot`` read in the same transaction as the proof of the board from `anchor` (see
    /// ``proveHead(extending:)``): what a host acts on, and the head that proves it (the host's next anchor).
    ///
    /// - Throws: ``BoardError`` `.integrity` naming the row or object when the board cannot be proven from `anchor`.
    package func provenRegistrySnapshot(environment: String, relevantTo: Set<String>? = nil, anchor: AuditCheckpoint?) throws(BoardError)
        -> (snapshot: RegistrySnapshot, head: AuditCheckpoint?)
    {
        try Validate.environment(environment)
        let boardVersion = try version()
        let (snapshot, proof) = try read { db in
            (
                try readRegistry(db, environment: environment, relevantTo: relevantTo, version: boardVersion),
                try headProof(db, anchor: anchor)
            )
        }
        if let problem = proof.problem { throw BoardError(.integrity, problem) }
        return (snapshot, proof.head)
    }

    private func readRegistry(_ db: Database, environment: String, relevantTo: Set<String>?, version boardVersion: BoardVersion) throws
        -> RegistrySnapshot
    {
        let kills = try RegistryQueries.activePluginKills(db)
        var versions: [String: [RegistrySnapshot.Version]]
        var ids: [String]?
        if let relevantTo {
            // The enabled and named plug-ins, then their dependencies until none is new.
            var seen = relevantTo.union(try RegistryQueries.enabledIDs(db, environment: environment))
            versions = try RegistryQueries.snapshotVersions(db, ids: seen.sorted())
            var frontier = Set(versions.values.joined().flatMap(\.dependencies.keys)).subtracting(seen)
            while !frontier.isEmpty {
                seen.formUnion(frontier)
                let more = try RegistryQueries.snapshotVersions(db, ids: frontier.sorted())
                versions.merge(more) { current, _ in current }
                frontier = Set(more.values.joined().flatMap(\.dependencies.keys)).subtracting(seen)
            }
            ids = seen.sorted()
        } else {
            versions = try RegistryQueries.snapshotVersions(db)
        }
        var plugins: [String: RegistrySnapshot.Plugin] = [:]
        let rollouts = try RolloutQueries.snapshotRollouts(db, environment: environment)
        // Where the environment is protected, hosts run no release newer than the one a change took in.
        let protected = try ApproverQueries.hasTables(db) && ChangeRecords.protection(db, environment: environment).required > 0
        for row in try RegistryQueries.snapshotEnablement(db, environment: environment, ids: ids) {
            plugins[row.id] = RegistrySnapshot.Plugin(
                id: row.id, enabled: row.enabled, pinnedVersion: row.pinned, killed: kills.plugins[row.id] != nil,
                killReason: kills.plugins[row.id], versions: versions[row.id] ?? [], rollout: rollouts[row.id],
                approvedVersion: protected ? row.approved : nil)
        }
        return RegistrySnapshot(
            environment: environment, allKilled: kills.all != nil, allKilledReason: kills.all, plugins: plugins,
            signaturePolicy: try SignatureQueries.policy(db, environment), version: boardVersion,
            quarantineReleases: try RegistryQueries.quarantineReleases(db, ids: ids),
            approvals: try ApproverQueries.evidence(
                db, environment: environment, enabled: plugins.values.filter(\.enabled).map(\.id)),
            approvedReleasesOnly: protected,
            advisories: try AdvisoryQueries.hostAdvisories(db, environment: environment, pluginIDs: Set(plugins.keys)))
    }
}
