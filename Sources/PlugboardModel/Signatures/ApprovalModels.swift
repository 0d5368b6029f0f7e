public import Crypto
import Foundation

/// What an approver signs, and the digest of the change it names.
///
/// A change's digest is the SHA-256, in lower-case hex, of `plugboard-change-v1\n` + operation + `\n` + body (the
/// operation's name and its canonical JSON body, as the operations API carries them). An approver signs, with
/// Ed25519, the UTF-8 of `plugboard-approval-v2\n` + digest + `\n` + request number + `\n` + the audit sequence at
/// which the request was opened + `\n` (``text(digest:moment:)``).
public enum ApprovalStatement {
    /// The digest of a change: what approvals name and approvers sign.
    public static func changeDigest(operation: String, body: String) -> String {
        SHA256.hash(data: Data("plugboard-change-v1\n\(operation)\n\(body)".utf8)).hex
    }

    /// The text an approver signs for the change whose digest is `digest`, opened at `moment`:
    /// `plugboard-approval-v2\n` + digest + `\n` + request number + `\n` + opening sequence + `\n`, so that a signature
    /// kept from one request never counts for another, even for the same change. Without a moment (a request opened
    /// before the board recorded one), `plugboard-approval-v1\n` + digest + `\n`.
    public static func text(digest: String, moment: ApprovalMoment?) -> String {
        guard let moment else { return "plugboard-approval-v1\n\(digest)\n" }
        return "plugboard-approval-v2\n\(digest)\n\(moment.changeID)\n\(moment.openedSeq)\n"
    }

    /// Base64 of `key`'s signature of ``text(digest:moment:)``.
    public static func sign(digest: String, moment: ApprovalMoment?, with key: Curve25519.Signing.PrivateKey) throws(BoardError)
        -> String
    {
        do { return try key.signature(for: Data(text(digest: digest, moment: moment).utf8)).base64EncodedString() } catch {
            throw BoardError(.io, "cannot sign the approval: \(error)")
        }
    }

    /// Whether `signature` (base64) is `publicKey`'s (base64) signature of `statement` (``text(digest:moment:)``).
    public static func verifies(_ signature: String, publicKey: String, statement: String) -> Bool {
        guard let key = try? SigningKeys.publicKey(base64: publicKey), let raw = Data(base64Encoded: signature), raw.count == 64 else {
            return false
        }
        return key.isValidSignature(raw, for: Data(statement.utf8))
    }
}

/// The moment a change request was opened, which its approvers' signatures bind: its number and the audit log's head
/// then. No two requests share one.
public struct ApprovalMoment: Sendable, Hashable, Codable {
    /// The change request's number.
    public let changeID: Int64
    /// The audit log's last `seq` when it was opened.
    public let openedSeq: Int64

    /// Creates a value from its fields.
    public init(changeID: Int64, openedSeq: Int64) {
        self.changeID = changeID
        self.openedSeq = openedSeq
    }
}

/// A key registered on the board whose signatures over a change's digest count as signed approvals.
public struct Approver: Sendable, Hashable, Codable {
    /// The key id (see ``SigningKeys``).
    public let keyID: String
    /// Whose key it is: the principal whose approvals it signs.
    public let principal: String
    /// Base64 of the raw 32-byte Ed25519 public key.
    public let publicKey: String
    public let addedAt: String
    public let addedBy: String
    /// When the key was revoked (nil while it counts).
    public let revokedAt: String?
    public let revokedBy: String?
    public let revokeReason: String?

    /// A value with each stored property given.
    package init(
        keyID: String, principal: String, publicKey: String, addedAt: String, addedBy: String, revokedAt: String?, revokedBy: String?,
        revokeReason: String?
    ) {
        self.keyID = keyID
        self.principal = principal
        self.publicKey = publicKey
        self.addedAt = addedAt
        self.addedBy = addedBy
        self.revokedAt = revokedAt
        self.revokedBy = revokedBy
        self.revokeReason = revokeReason
    }
}

/// One approver's signature over a change's digest, as an enablement carries it.
public struct ApproverSignature: Sendable, Hashable, Codable {
    /// The approver key's id.
    public let keyID: String
    /// Base64 of the 64-byte Ed25519 signature of ``ApprovalStatement/text(digest:moment:)``.
    public let signature: String

    /// Creates a value from its fields.
    public init(keyID: String, signature: String) {
        self.keyID = keyID
        self.signature = signature
    }
}

/// The signed approvals of the change request that enabled a plug-in in an environment: the change as approved
/// (operation and body, from which a host recomputes the digest) and the approvers' signatures.
public struct EnablementApproval: Sendable, Hashable, Codable {
    /// The change request's number.
    public let changeID: Int64
    /// The audit log's head when the request was opened (nil for a request from before the board recorded it): with
    /// ``changeID``, what the signatures bind.
    public let openedSeq: Int64?
    /// The operation approved (`plugin.enable`).
    public let operation: String
    /// Its canonical JSON body.
    public let body: String
    /// The signatures of the approvals that counted.
    public let signatures: [ApproverSignature]

    /// What the signatures bind besides the change's digest.
    public var moment: ApprovalMoment? { openedSeq.map { ApprovalMoment(changeID: changeID, openedSeq: $0) } }

    /// A value with each stored property given.
    package init(changeID: Int64, openedSeq: Int64?, operation: String, body: String, signatures: [ApproverSignature]) {
        self.changeID = changeID
        self.openedSeq = openedSeq
        self.operation = operation
        self.body = body
        self.signatures = signatures
    }
}

/// What a host checks signed approvals with, as the board's rows give it: the environment's policy, the board's
/// registered, unrevoked approver keys, and the signed approvals of each enabled plug-in's enablement.
public struct ApprovalEvidence: Sendable, Hashable, Codable {
    /// One registered approver key.
    public struct Key: Sendable, Hashable, Codable {
        /// Base64 of the raw 32-byte public key.
        public let publicKey: String
        /// Whose key it is.
        public let principal: String

        /// Creates a value from its fields.
        package init(publicKey: String, principal: String) {
            self.publicKey = publicKey
            self.principal = principal
        }
    }

    /// The signed approvals the environment's policy requires (0 when it does not require signed approvals).
    public let required: Int
    /// The registered, unrevoked approver keys, by key id.
    public let approvers: [String: Key]
    /// The signed approvals of each plug-in's enablement in the environment, by plug-in id.
    public let enablements: [String: EnablementApproval]

    /// A value with each stored property given.
    package init(required: Int, approvers: [String: Key], enablements: [String: EnablementApproval]) {
        self.required = required
        self.approvers = approvers
        self.enablements = enablements
    }
}

/// The approver keys a host trusts itself, kept apart from the board, and how many of their signatures an
/// enablement needs (see `HostConfiguration.approvals`).
///
/// A host with an anchor counts only these keys, and needs at least ``required`` of them (or more, when the board's
/// policy asks for more): a writer who can change the board's approvers, its policy, its audit log and its state proof
/// still cannot make such a host load a plug-in enabled without those signatures.
public struct ApprovalAnchor: Sendable, Hashable {
    /// The trusted public keys (base64 of their raw 32 bytes), by key id.
    public let keys: [String: String]
    /// Valid signatures, by distinct keys, an enablement needs (at least 1).
    public let required: Int

    /// An anchor of `publicKeys` (base64, as `plugboard signing-key generate` prints them) needing `required`
    /// signatures.
    ///
    /// - Throws: ``BoardError`` `.invalidInput` for a key that is not an Ed25519 public key, or a count below 1 or
    ///   above the number of keys.
    public init(publicKeys: [String], required: Int) throws(BoardError) {
        var keys: [String: String] = [:]
        for text in publicKeys {
            let raw = try SigningKeys.publicKey(base64: text).rawRepresentation
            keys[SigningKeys.keyID(publicKey: raw)] = raw.base64EncodedString()
        }
        guard required >= 1, required <= keys.count else {
            throw .invalid(
                "the host's approval anchor needs between 1 and \(keys.count) signatures (it has \(keys.count) distinct key\(keys.count == 1 ? "" : "s")), not \(required)"
            )
        }
        self.keys = keys
        self.required = required
    }
}

/// Decides whether a plug-in's enablement carries the signed approvals a host needs. Pure: the host calls it before
/// any of the plug-in's code loads.
public enum ApprovalCheck {
    /// Why `pluginID`, enabled in `environment`, must not load for want of signed approvals; nil when it may.
    ///
    /// Without `anchor`, the board's policy decides (`evidence.required`; none when the board sends no evidence) and
    /// its registered, unrevoked approver keys count, one per principal. With `anchor`, only its keys count, one per
    /// key, and at least its count is needed (more when the board's policy asks for more). The change's digest is
    /// recomputed from the operation and body carried; a signature counts only over a `plugin.enable` of exactly
    /// `pluginID` in `environment`, of the request and the moment it was opened that the enablement carries (so a
    /// signature given for one request counts for no other). `verifies` checks one signature over a statement
    /// (``ApprovalStatement/verifies(_:publicKey:statement:)``, or a memo of it).
    public static func problem(
        pluginID: String, environment: String, evidence: ApprovalEvidence?, anchor: ApprovalAnchor?,
        verifies: (_ signature: String, _ publicKey: String, _ statement: String) -> Bool = ApprovalStatement.verifies
    ) -> String? {
        let required: Int
        let keys: [String: (publicKey: String, holder: String)]
        if let anchor {
            required = max(anchor.required, evidence?.required ?? 0)
            keys = anchor.keys.reduce(into: [:]) { $0[$1.key] = ($1.value, $1.key) }
        } else if let evidence, evidence.required > 0 {
            required = evidence.required
            keys = evidence.approvers.mapValues { ($0.publicKey, $0.principal) }
        } else {
            return nil
        }
        let trusted = anchor == nil ? "registered approver keys" : "approver keys this host trusts"
        let needs = "\(environment) requires \(required) signed approval\(required == 1 ? "" : "s") by \(trusted)"
        guard let enablement = evidence?.enablements[pluginID] else {
            return "\(pluginID) was enabled in \(environment) without signed approvals; \(needs)"
        }
        guard enablement.operation == AuditAction.pluginEnable.name,
            let body = try? JSONSerialization.jsonObject(with: Data(enablement.body.utf8)),
            let fields = body as? [String: Any], fields["id"] as? String == pluginID, fields["env"] as? String == environment
        else {
            return
                "the signed approvals on \(pluginID)'s enablement in \(environment) are for another change (change request \(enablement.changeID)); \(needs)"
        }
        let digest = ApprovalStatement.changeDigest(operation: enablement.operation, body: enablement.body)
        let statement = ApprovalStatement.text(digest: digest, moment: enablement.moment)
        var holders: Set<String> = []
        for signature in enablement.signatures {
            guard let key = keys[signature.keyID], verifies(signature.signature, key.publicKey, statement)
            else { continue }
            holders.insert(key.holder)
        }
        guard holders.count >= required else {
            return
                "\(pluginID)'s enablement in \(environment) (change request \(enablement.changeID)) carries \(holders.count) valid signed approval\(holders.count == 1 ? "" : "s"); \(needs)"
        }
        return nil
    }
}
