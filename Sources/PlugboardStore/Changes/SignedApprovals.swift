import Crypto
import Foundation
import GRDB
import PlugboardModel

/// Signed approvals: what a host checks before it loads a release enabled in an environment whose policy requires
/// them.
enum SignedApprovals {
    /// Checks that `signature` is by a registered, unrevoked approver key of `principal` and verifies over `request`'s
    /// digest and the moment it was opened (``ApprovalStatement/text(digest:moment:)``).
    static func check(_ db: Database, _ signature: ApprovalSignature, request: ChangeRequest, principal: String) throws {
        try SigningKeys.validateKeyID(signature.keyID)
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM approvers WHERE key_id = ?"), arguments: [signature.keyID])
        else {
            throw BoardError.notAllowed(
                "the key \(signature.keyID) is not a registered approver key; an admin registers it with plugboard approver add \(principal) PUBLIC_KEY"
            )
        }
        guard (row["revoked_at"] as String?) == nil else { throw BoardError.notAllowed("the approver key \(signature.keyID) is revoked") }
        guard (row["principal"] as String) == principal else {
            throw BoardError.notAllowed(
                "the approver key \(signature.keyID) is registered for \(row["principal"] as String), not \(principal)")
        }
        let statement = ApprovalStatement.text(digest: request.digest, moment: request.approvalMoment)
        guard ApprovalStatement.verifies(signature.signature, publicKey: row["public_key"], statement: statement) else {
            throw BoardError.invalid(
                "the signature does not verify with the approver key \(signature.keyID) over the approval of change request \(request.id) (its digest and the moment it was opened)"
            )
        }
    }

    /// Keeps, beside the enablement a signed request applies, the request and its approvers' signatures, for hosts.
    static func recordEnablement(_ db: Database, request: ChangeRequest, counted: [ChangeApproval]) throws {
        guard request.operation == AuditAction.pluginEnable.name, let environment = request.environment else { return }
        let signatures = try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT key_id, signature FROM change_approvals WHERE change_id = ? AND key_id IS NOT NULL ORDER BY key_id"),
            arguments: [request.id]
        ).filter { row in counted.contains { $0.keyID == row["key_id"] } }
            .map { ["key_id": $0["key_id"] as String, "signature": $0["signature"] as String] }
        let text = try ChangeRecords.jsonText(signatures)
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body.utf8)) as? [String: Any],
            let pluginID = body["id"] as? String
        else { return }
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO enablement_approvals (plugin_id, environment, change_id, opened_seq, operation, body, digest, signatures)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [pluginID, environment, request.id, request.openedSeq, request.operation, request.body, request.digest, text])
    }
}
