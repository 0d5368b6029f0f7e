import GRDB

extension Board {
    /// Checks, before a host loads `pluginID@version` in `environment`, that the rows it relies on are the rows the
    /// audit log recorded: the plug-in, the version (manifest, artifact digest), its dependencies, its artifact, its
    /// enablement and pin, every kill switch that could cover it, its gate flag, the environment's signature policy
    /// and, under `warn` or `require`, the release's signatures and the trust and revocation rows of their keys
    /// (so that a signer row inserted with `sqlite3` never makes a release trusted). Returns one sentence per
    /// problem, for example "the board's row com.example.x@1.2.0 in plugin_versions does not match its audit log";
    /// empty when the rows are proven, or for a board from before the state proof.
    ///
    /// This compares the rows with the index of the log's digests kept beside it and checks the index against the
    /// state root of the last audit row; `audit verify` checks the index against the whole log.
    public func stateProblems(pluginID: String, version: String, environment: String) throws(BoardError) -> [String] {
        try read { db in
            guard try StateQueries.isTracked(db) else { return [] }
            func key(_ values: [any DatabaseValueConvertible]) throws -> String { try StateQueries.key(db, values) }
            var entities = [
                StateEntity(table: "plugins", key: try key([pluginID])),
                StateEntity(table: "plugin_versions", key: try key([pluginID, version])),
                StateEntity(table: "plugin_environments", key: try key([pluginID, environment])),
            ]
            for dependency in try String.fetchAll(
                db,
                sql: "SELECT json_array(plugin_id, version, dependency_id) FROM plugin_dependencies WHERE plugin_id = ? AND version = ?",
                arguments: [pluginID, version])
            {
                entities.append(StateEntity(table: "plugin_dependencies", key: dependency))
            }
            if let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT artifact_sha256, gate_flag FROM plugin_versions WHERE plugin_id = ? AND version = ?"),
                arguments: [pluginID, version])
            {
                if let sha: String = row[0] { entities.append(StateEntity(table: "artifacts", key: try key([sha]))) }
                if let gate: String = row[1] {
                    entities.append(StateEntity(table: "flags", key: try key([gate])))
                    entities.append(StateEntity(table: "flag_environments", key: try key([gate, environment])))
                }
            }
            if try SignatureQueries.hasTables(db) {
                entities.append(StateEntity(table: "signature_policies", key: try key([environment])))
                if try SignatureQueries.policy(db, environment) != .off {
                    for signature in try SignatureQueries.signatures(db, pluginID, version) {
                        let keyID = signature.keyID
                        entities.append(StateEntity(table: "release_signatures", key: try key([pluginID, version, keyID])))
                        entities.append(StateEntity(table: "signers", key: try key([keyID, pluginID])))
                        entities.append(StateEntity(table: "signers", key: try key([keyID, Signer.everyPlugin])))
                        entities.append(StateEntity(table: "signer_revocations", key: try key([keyID])))
                    }
                }
            }
            if let problem = try checkedIndex(db) { return [problem] }
            return try StateLedger.check(db, entities, killSwitchesOf: pluginID)
        }
    }

    /// ``StateLedger/indexProblem(_:)``, computed once per version of the board (a host checks many releases per
    /// reconciliation, and reconciles only when the board changed).
    private func checkedIndex(_ db: Database) throws -> String? {
        let version = try changeCounter(db)
        let key = "\(version).\(ownChangeCount)"
        if let cached = indexCheck.withLock({ $0 }), cached.key == key { return cached.problem }
        let problem = try StateLedger.indexProblem(db)
        indexCheck.withLock { $0 = (key, problem) }
        return problem
    }
}
