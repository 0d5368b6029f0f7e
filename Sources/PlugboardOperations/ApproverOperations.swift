public import ArgumentParser
import Foundation
public import PlugboardModel
package import PlugboardStore

/// Approver keys: `plugboard approver …`. Where an environment's policy requires signed approvals (`policy set --env
/// ENV --signed-approvals require`), an approval counts only with its approver's signature over the change's digest,
/// and hosts check those signatures before they load a plug-in enabled there.
public enum ApproverOperations {
    /// `plugboard approver …`, in the order its help lists them.
    package static let all: [any ParsedOperation.Type] = [AddApprover.self, ListApprovers.self, RevokeApprover.self]

    /// `approver add PRINCIPAL PUBLIC_KEY`.
    public struct AddApprover: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .approverAdd, .write,
            abstract: "Register a principal's Ed25519 public key as their approver key (admins).",
            discussion: """
                The key is made with plugboard signing-key generate; its holder approves with plugboard change approve N \
                --key FILE, which signs the change's digest on their machine. In an environment whose policy requires \
                signed approvals, only approvals signed by a registered, unrevoked key of the approving principal count, \
                and hosts load a plug-in enabled there only with enough such signatures.
                """, widens: .boardWide)
        @Argument(help: ArgumentHelp("Whose key it is: the principal whose approvals it signs.", valueName: "principal"))
        public var principal: String
        @Argument(help: ArgumentHelp("The public key, base64 of its 32 bytes.", valueName: "public-key")) public var publicKey: String
        public init() {}
        public init(principal: String, publicKey: String) {
            self.principal = principal
            self.publicKey = publicKey
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.addApprover(principal: principal, publicKey: publicKey, by: actor))
        }
    }

    /// `approver list`.
    public struct ListApprovers: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .approverList, .read, abstract: "List approver keys, revoked ones included.")
        public init() {}
        /// What it answers.
        public typealias Response = [Approver]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.approvers())
        }
        package static func text(_ approvers: [Approver]) -> String? {
            Table.listing(
                approvers, "KEY ID", "PRINCIPAL", "STATE", "ADDED", "PUBLIC KEY",
                empty: "No approver key is registered yet; an admin registers one with plugboard approver add PRINCIPAL PUBLIC_KEY."
            ) { approver in
                [
                    approver.keyID, approver.principal,
                    Table.revocation(approver.revokedAt, by: approver.revokedBy, approver.revokeReason, otherwise: "counts"),
                    "\(approver.addedAt) by \(approver.addedBy)", approver.publicKey,
                ]
            }
        }
    }

    /// `approver revoke KEY_ID --reason`: a stop.
    public struct RevokeApprover: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .approverRevoke, .stop,
            abstract:
                "Revoke an approver key (admins): no approval it signed counts any more, for the board or hosts, including earlier ones.")
        @Argument(help: "The key id (plugboard approver list).") public var keyID: KeyID
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(name: .long, help: "Why (kept in the board and the audit log).") public var reason: Reason
        public init() {}
        public init(keyID: KeyID, reason: Reason) {
            self.keyID = keyID
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.revokeApprover(keyID: keyID.text, reason: reason.text, by: actor))
        }
    }
}
