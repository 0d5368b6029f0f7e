import Crypto
import Foundation
import GRDB
package import PlugboardModel

extension Board {
    /// Registers `publicKey` (base64 of a raw Ed25519 public key, as `plugboard signing-key generate` prints it) as
    /// an approver key of `principal`: its signatures over a change's digest count as `principal`'s signed approvals
    /// (admins). A revoked key cannot be registered again. Audited.
    package func addApprover(principal: String, publicKey: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.principal(principal, field: "the approver")
        let raw = try SigningKeys.publicKey(base64: publicKey).rawRepresentation
        let keyID = SigningKeys.keyID(publicKey: raw)
        return try change(
            actor, refusal: AuditEntry(action: .approverAdd, targetType: "approver", targetID: keyID),
            requiring: .admin(doing: "register an approver key")
        ) { change in
            if let existing = try ApproverQueries.approver(change.db, keyID) {
                if let revokedAt = existing.revokedAt {
                    throw BoardError.conflict(
                        "approver key \(keyID) was revoked on \(revokedAt) by \(existing.revokedBy ?? "?") and cannot be registered again; generate a new key"
                    )
                }
                guard existing.principal == principal else {
                    throw BoardError.conflict(
                        "approver key \(keyID) is registered for \(existing.principal); a key belongs to one principal, so generate another for \(principal)"
                    )
                }
                return ChangeResult(changed: false, "Key \(keyID) is already an approver key of \(principal); nothing changed.")
            }
            try change.db.cachedStatement(
                sql: "INSERT INTO approvers (key_id, principal, public_key, added_at, added_by) VALUES (?, ?, ?, ?, ?)"
            ).execute(arguments: [keyID, principal, raw.base64EncodedString(), change.now, change.actor.osUser])
            try change.record(
                AuditEntry(
                    action: .approverAdd, targetType: "approver", targetID: keyID,
                    after: .object([
                        "key_id": .string(keyID), "principal": .string(principal), "public_key": .string(raw.base64EncodedString()),
                    ])))
            return ChangeResult(changed: true, "Registered key \(keyID) as an approver key of \(principal).")
        }
    }

    /// Revokes an approver key (admins): no approval it signed counts any more, for the board or for hosts, including
    /// those of changes already applied. A stop. Audited.
    package func revokeApprover(keyID: String, reason: String, by actor: Principal) throws(BoardError) -> ChangeResult {
        try SigningKeys.validateKeyID(keyID)
        try Validate.reason(reason)
        return try change(
            actor, refusal: AuditEntry(action: .approverRevoke, targetType: "approver", targetID: keyID),
            requiring: .admin(doing: "revoke an approver key")
        ) { change in
            guard let existing = try ApproverQueries.approver(change.db, keyID) else {
                throw BoardError.notFound("key \(keyID) is not a registered approver key; see plugboard approver list")
            }
            if let revokedAt = existing.revokedAt {
                return ChangeResult(changed: false, "Approver key \(keyID) was already revoked on \(revokedAt); nothing changed.")
            }
            try change.db.cachedStatement(sql: "UPDATE approvers SET revoked_at = ?, revoked_by = ?, revoke_reason = ? WHERE key_id = ?")
                .execute(arguments: [change.now, change.actor.osUser, reason, keyID])
            try change.record(
                AuditEntry(
                    action: .approverRevoke, targetType: "approver", targetID: keyID, reason: reason,
                    after: .object(["key_id": .string(keyID), "principal": .string(existing.principal), "revoked": .bool(true)])))
            return ChangeResult(
                changed: true,
                "Revoked approver key \(keyID) of \(existing.principal); no approval it signed counts any more, including earlier ones.")
        }
    }

    /// Every approver key, revoked ones included, by principal then key id.
    package func approvers() throws(BoardError) -> [Approver] {
        try read { db in try ApproverQueries.approvers(db) }
    }
}

/// The SQL of approver keys and of the signed approvals hosts check.
enum ApproverQueries {
    static func approvers(_ db: Database) throws -> [Approver] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM approvers ORDER BY principal, key_id")).map(approver)
    }

    static func approver(_ db: Database, _ keyID: String) throws -> Approver? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM approvers WHERE key_id = ?"), arguments: [keyID]).map(approver)
    }

    private static func approver(_ row: Row) -> Approver {
        Approver(
            keyID: row["key_id"], principal: row["principal"], publicKey: row["public_key"], addedAt: row["added_at"],
            addedBy: row["added_by"], revokedAt: row["revoked_at"], revokedBy: row["revoked_by"], revokeReason: row["revoke_reason"])
    }

    /// Whether the board has the change-request tables (migration 0016 applied).
    static func hasTables(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'enablement_approvals')"))
            ?? false
    }

    /// The plug-ins enabled in `environment` whose enablement carries fewer than `required` signatures (counted as
    /// stored, not verified): what hosts that check signed approvals do not load there.
    static func unapproved(_ db: Database, environment: String, required: Int) throws -> [String] {
        guard try hasTables(db) else { return [] }
        return try String.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT e.plugin_id FROM plugin_environments e
                    LEFT JOIN enablement_approvals a ON a.plugin_id = e.plugin_id AND a.environment = e.environment
                    WHERE e.environment = ? AND e.enabled = 1 AND coalesce(json_array_length(a.signatures), 0) < ?
                    ORDER BY e.plugin_id
                    """), arguments: [environment, required])
    }

    /// What a host of `environment` checks signed approvals with, for the plug-ins `enabled` there: nil when the
    /// policy does not require signed approvals and none of them carries any.
    static func evidence(_ db: Database, environment: String, enabled: [String]) throws -> ApprovalEvidence? {
        guard try hasTables(db) else { return nil }
        let required =
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT approvals FROM approval_policies WHERE environment = ? AND signed = 'require'"),
                arguments: [environment])
            ?? 0
        let wanted = Set(enabled)
        var enablements: [String: EnablementApproval] = [:]
        // A signed approval counts for the enablement it was given for, never for one after a later disable: an enablement
        // whose request was opened before the plug-in's last disable in the environment is not evidence (signatures kept
        // from then, written back with their old request behind the log, enable nothing on a host that proves the log).
        let disabled = Dictionary(
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT target_id, max(seq) AS seq FROM audit_log
                        WHERE action = 'plugin.disable' AND outcome = 'ok' AND environment = ? GROUP BY target_id
                        """), arguments: [environment]
            ).map { ($0["target_id"] as String, $0["seq"] as Int64) }, uniquingKeysWith: max)
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM enablement_approvals WHERE environment = ?"), arguments: [environment])
        {
            let pluginID: String = row["plugin_id"]
            guard wanted.contains(pluginID) else { continue }
            let openedSeq: Int64? = row["opened_seq"]
            if let last = disabled[pluginID], (openedSeq ?? 0) < last { continue }
            let listed = (try? JSONSerialization.jsonObject(with: Data((row["signatures"] as String).utf8))) as? [[String: Any]] ?? []
            enablements[pluginID] = EnablementApproval(
                changeID: row["change_id"], openedSeq: openedSeq, operation: row["operation"], body: row["body"],
                signatures: listed.compactMap { entry in
                    guard let keyID = entry["key_id"] as? String, let signature = entry["signature"] as? String else { return nil }
                    return ApproverSignature(keyID: keyID, signature: signature)
                })
        }
        guard required > 0 || !enablements.isEmpty else { return nil }
        var keys: [String: ApprovalEvidence.Key] = [:]
        for approver in try approvers(db) where approver.revokedAt == nil {
            keys[approver.keyID] = ApprovalEvidence.Key(publicKey: approver.publicKey, principal: approver.principal)
        }
        return ApprovalEvidence(required: required, approvers: keys, enablements: enablements)
    }
}
