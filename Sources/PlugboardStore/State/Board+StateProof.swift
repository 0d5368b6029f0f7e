import GRDB
package import PlugboardModel

extension Board {
    /// Proves the board as it is now from `anchor` (see ``HeadProof``): its structure, the audit log from the anchor to
    /// its head, the head's state root over the index of row digests, and every kill switch, key revocation and
    /// signature policy. Returns the head proven (the host's next anchor; nil for an empty log).
    ///
    /// - Parameter anchor: The newest audit row the caller accepted before (nil: the log is walked from its first row).
    /// - Throws: ``BoardError`` `.integrity` with one sentence naming the row or object when the board cannot be proven.
    package func proveHead(extending anchor: AuditCheckpoint?) throws(BoardError) -> AuditCheckpoint? {
        let proof = try read { db in try headProof(db, anchor: anchor) }
        if let problem = proof.problem { throw BoardError(.integrity, problem) }
        return proof.head
    }

    /// Checks, before a host loads `pluginID@version` in `environment`, that every row its decision rests on is a row
    /// the audit log recorded, proven by the log's head from `anchor` (see ``proveHead(extending:)``): the board as a
    /// whole (structure, chain, state root, every kill switch, revocation and policy), then the release's own rows:
    /// the plug-in, its enablement and pin, every version of it, the release's dependencies (all of them: one removed
    /// behind the log is named), its artifact, its gate flag with the flags it depends on, transitively, and the
    /// segments, and, under `warn` or `require`, the release's signatures and the trust rows of their keys. Returns one
    /// sentence per problem, naming the row; empty when proven, or for a board whose log never had the state proof.
    package func stateProblems(pluginID: String, version: String, environment: String, anchor: AuditCheckpoint? = nil) throws(BoardError)
        -> [String]
    {
        try read { db in
            let proof = try headProof(db, anchor: anchor)
            if let problem = proof.problem { return [problem] }
            guard proof.tracked else { return [] }
            func key(_ values: [any DatabaseValueConvertible]) throws -> String { try StateQueries.key(db, values) }
            var entities = [
                StateEntity(table: "plugins", key: try key([pluginID])),
                StateEntity(table: "plugin_environments", key: try key([pluginID, environment])),
            ]
            var ranges: [(table: String, prefix: [any DatabaseValueConvertible])] = [
                ("plugin_versions", [pluginID]), ("plugin_dependencies", [pluginID, version]),
            ]
            if let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT artifact_sha256, gate_flag FROM plugin_versions WHERE plugin_id = ? AND version = ?"),
                arguments: [pluginID, version])
            {
                if let sha: String = row[0] { entities.append(StateEntity(table: "artifacts", key: try key([sha]))) }
                if let gate: String = row[1] {
                    for flag in try flagClosure(db, gate) {
                        entities.append(StateEntity(table: "flags", key: try key([flag])))
                        entities.append(StateEntity(table: "flag_environments", key: try key([flag, environment])))
                    }
                    ranges.append(("segments", []))
                }
            }
            if try SignatureQueries.hasTables(db), try SignatureQueries.policy(db, environment) != .off {
                ranges.append(("release_signatures", [pluginID, version]))
                for signature in try SignatureQueries.signatures(db, pluginID, version) {
                    entities.append(StateEntity(table: "signers", key: try key([signature.keyID, pluginID])))
                    entities.append(StateEntity(table: "signers", key: try key([signature.keyID, Signer.everyPlugin])))
                }
            }
            var problems = try StateLedger.check(db, entities)
            for range in ranges { problems += try StateLedger.rangeProblems(db, table: range.table, prefix: range.prefix) }
            return problems
        }
    }

    /// The gate flag and every flag it depends on, transitively (Unleash's parent flags).
    private func flagClosure(_ db: Database, _ gate: String) throws -> [String] {
        try String.fetchAll(
            db.cachedStatement(
                sql: """
                    WITH RECURSIVE closure(name) AS (
                        SELECT ?
                        UNION SELECT json_extract(d.value, '$.feature')
                          FROM closure JOIN flags f ON f.name = closure.name, json_each(f.dependencies_json) d
                    ) SELECT name FROM closure WHERE name IS NOT NULL ORDER BY name
                    """), arguments: [gate])
    }

    /// ``HeadProof`` of the board as `db` sees it, made once per state of the file and anchor (a host checks many
    /// releases per reconciliation, and reconciles only when the board changed).
    func headProof(_ db: Database, anchor: AuditCheckpoint?) throws -> HeadProof {
        try headProofs.proof(db, key: "\(try changeCounter(db)).\(ownChangeCount)", anchor: anchor)
    }
}
