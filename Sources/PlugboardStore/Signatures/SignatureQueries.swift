import GRDB
import PlugboardModel

/// The SQL of signed plug-ins: trusted keys, revocations, the signatures of releases, policies per environment.
enum SignatureQueries {
    /// Whether the board has the signature tables (migration 0007 applied).
    static func hasTables(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'signature_policies')"))
            ?? false
    }

    // MARK: Signatures

    static func insertSignature(
        _ db: Database, _ pluginID: String, _ version: String, _ signature: ReleaseSignature, by actor: Principal, at now: String
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO release_signatures (plugin_id, version, key_id, algorithm, public_key, statement, signature, added_at, added_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            pluginID, version, signature.keyID, signature.algorithm, signature.publicKey, signature.statement, signature.signature, now,
            actor.osUser,
        ])
    }

    /// The signatures of one release, by key id.
    static func signatures(_ db: Database, _ pluginID: String, _ version: String) throws -> [ReleaseSignature] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM release_signatures WHERE plugin_id = ? AND version = ? ORDER BY key_id"),
            arguments: [pluginID, version]
        ).map(signature)
    }

    /// Every release's signatures, by `id@version` (one plug-in's with `pluginID`).
    static func allSignatures(_ db: Database, pluginID: String? = nil) throws -> [String: [ReleaseSignature]] {
        guard try hasTables(db) else { return [:] }
        var result: [String: [ReleaseSignature]] = [:]
        let rows = try Row.fetchAll(
            db, sql: "SELECT * FROM release_signatures \(pluginID == nil ? "" : "WHERE plugin_id = ?") ORDER BY plugin_id, version, key_id",
            arguments: pluginID.map { [$0] } ?? [])
        for row in rows {
            result["\(row["plugin_id"] as String)@\(row["version"] as String)", default: []].append(signature(row))
        }
        return result
    }

    private static func signature(_ row: Row) -> ReleaseSignature {
        ReleaseSignature(
            keyID: row["key_id"], algorithm: row["algorithm"], publicKey: row["public_key"], statement: row["statement"],
            signature: row["signature"])
    }

    /// The statement of a registered release as the board's rows describe it; nil when it is not registered.
    static func release(_ db: Database, _ pluginID: String, _ version: String) throws -> ReleaseStatement? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT manifest_json, artifact_sha256 FROM plugin_versions WHERE plugin_id = ? AND version = ?"),
            arguments: [pluginID, version]
        ).map {
            ReleaseStatement(
                pluginID: pluginID, version: version, manifestSHA256: ReleaseStatement.manifestSHA256($0["manifest_json"]),
                artifactSHA256: $0["artifact_sha256"])
        }
    }

    // MARK: Signers and revocations

    static func insertSigner(
        _ db: Database, keyID: String, pluginID: String, publicKey: String, name: String?, by actor: Principal, at now: String
    ) throws {
        try db.cachedStatement(
            sql: "INSERT INTO signers (key_id, plugin_id, public_key, name, added_at, added_by) VALUES (?, ?, ?, ?, ?, ?)"
        ).execute(arguments: [keyID, pluginID, publicKey, name, now, actor.osUser])
    }

    /// Trusted keys with their revocation, for one plug-in (its own and those trusted for every plug-in) or all.
    static func signers(_ db: Database, pluginID: String? = nil, keyID: String? = nil) throws -> [Signer] {
        var filter = SQLFilter()
        filter.add("(s.plugin_id = ? OR s.plugin_id = '*')", pluginID)
        filter.add("s.key_id = ?", keyID)
        return try Row.fetchAll(
            db,
            sql: """
                SELECT s.*, r.reason, r.revoked_at, r.revoked_by FROM signers s LEFT JOIN signer_revocations r ON r.key_id = s.key_id
                \(filter.clause) ORDER BY s.plugin_id, s.key_id
                """, arguments: filter.arguments
        ).map {
            Signer(
                keyID: $0["key_id"], pluginID: $0["plugin_id"], publicKey: $0["public_key"], name: $0["name"], addedAt: $0["added_at"],
                addedBy: $0["added_by"], revokedAt: $0["revoked_at"], revokedBy: $0["revoked_by"], revokeReason: $0["reason"])
        }
    }

    /// The revocation of a key, if it is revoked.
    static func revocation(_ db: Database, _ keyID: String) throws -> (reason: String, at: String, by: String)? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT reason, revoked_at, revoked_by FROM signer_revocations WHERE key_id = ?"), arguments: [keyID]
        )
        .map { ($0["reason"], $0["revoked_at"], $0["revoked_by"]) }
    }

    static func insertRevocation(_ db: Database, _ keyID: String, reason: String, by actor: Principal, at now: String) throws {
        try db.cachedStatement(sql: "INSERT INTO signer_revocations (key_id, reason, revoked_at, revoked_by) VALUES (?, ?, ?, ?)").execute(
            arguments: [keyID, reason, now, actor.osUser])
    }

    /// Whether any release carries a signature by the key.
    static func hasSigned(_ db: Database, _ keyID: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM release_signatures WHERE key_id = ?)"), arguments: [keyID])
            ?? false
    }

    /// Every trusted and revoked key, for signature checks.
    static func trust(_ db: Database) throws -> SignerTrust {
        guard try hasTables(db) else { return .empty }
        var keys: [String: (publicKey: String, plugins: Set<String>)] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT key_id, plugin_id, public_key FROM signers")) {
            let keyID: String = row[0]
            keys[keyID, default: (row[2], [])].plugins.insert(row[1])
        }
        var revoked: [String: String] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT key_id, reason FROM signer_revocations")) { revoked[row[0]] = row[1] }
        return SignerTrust(keys: keys.mapValues { SignerTrust.TrustedKey(publicKey: $0.publicKey, plugins: $0.plugins) }, revoked: revoked)
    }

    // MARK: Policies

    /// The policy of an environment (`off` without a row).
    static func policy(_ db: Database, _ environment: String) throws -> SignaturePolicy {
        guard try hasTables(db) else { return .off }
        return try String.fetchOne(
            db.cachedStatement(sql: "SELECT signatures FROM signature_policies WHERE environment = ?"), arguments: [environment]
        ).flatMap(SignaturePolicy.init(rawValue:)) ?? .off
    }

    static func savePolicy(_ db: Database, _ environment: String, _ policy: SignaturePolicy, by actor: Principal, at now: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO signature_policies (environment, signatures, updated_at, updated_by) VALUES (?, ?, ?, ?)
                ON CONFLICT (environment) DO UPDATE SET signatures = excluded.signatures, updated_at = excluded.updated_at,
                    updated_by = excluded.updated_by
                """
        ).execute(arguments: [environment, policy.rawValue, now, actor.osUser])
    }

    /// Every environment with its policy (`off` where none was set).
    static func policies(_ db: Database) throws -> [EnvironmentSignaturePolicy] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT e.name, ifnull(p.signatures, 'off') AS signatures, p.updated_at, p.updated_by
                    FROM environments e LEFT JOIN signature_policies p ON p.environment = e.name ORDER BY e.name
                    """)
        ).map {
            EnvironmentSignaturePolicy(
                environment: $0["name"], signatures: SignaturePolicy(rawValue: $0["signatures"]) ?? .off, updatedAt: $0["updated_at"],
                updatedBy: $0["updated_by"])
        }
    }
}
