import Foundation

/// Whether an environment is protected: how many people other than a change's author must approve a change that
/// starts or widens what runs there, and whether their approvals must be signed.
public struct ApprovalPolicy: Sendable, Hashable, Codable {
    /// The environment.
    public let environment: String
    /// Approvals a change needs (0: not protected).
    public let approvals: Int
    /// Whether approvals must carry the approver's Ed25519 signature over the change's digest (`off` or `require`).
    public let signedApprovals: String
    /// When it was last set, and by whom; nil when never set.
    public let updatedAt: String?
    public let updatedBy: String?
    /// Who may approve (and reject) its requests: `default` (board admins, and for a plug-in's change its owners and
    /// maintainers), `admins`, `owners` (board admins and the plug-in's owners), or the name of a principal group whose
    /// members approve when they also hold the default right.
    public let approvers: String

    /// A value with each stored property given.
    public init(
        environment: String, approvals: Int, signedApprovals: String, updatedAt: String?, updatedBy: String?, approvers: String = "default"
    ) {
        self.environment = environment
        self.approvals = approvals
        self.signedApprovals = signedApprovals
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.approvers = approvers
    }
}

/// One approval of a change request.
public struct ChangeApproval: Sendable, Hashable, Codable {
    /// Who approved.
    public let principal: String
    /// When.
    public let approvedAt: String
    /// The comment given, if any.
    public let comment: String?
    /// The change digest approved.
    public let digest: String
    /// The digest of the state of the rows the change touches, as the approval saw them.
    public let base: String
    /// Whether it counts: by someone who may approve it now, with a token nobody revoked, by a person other than the
    /// author's and every other counted approval's, of this digest and of the rows as they are now.
    public let current: Bool
    /// The approver key that signed it, for a signed approval.
    public let keyID: String?
    /// The access token it was given with (nil on the board's machine).
    public let token: String?
    /// The person behind it: the OS user who made the first token of its token's chain as themselves, or the OS user
    /// who approved on the board's machine; nil when its token's chain cannot be followed.
    public let person: String?
    /// Why it does not count, when that is not only that the rows moved since (a revoked token, a principal who lost
    /// the right to approve, the author's person or a person already counted); nil otherwise.
    public let void: String?

    /// A value with each stored property given.
    public init(
        principal: String, approvedAt: String, comment: String?, digest: String, base: String, current: Bool, keyID: String?,
        token: String? = nil, person: String? = nil, void: String? = nil
    ) {
        self.principal = principal
        self.approvedAt = approvedAt
        self.comment = comment
        self.digest = digest
        self.base = base
        self.current = current
        self.keyID = keyID
        self.token = token
        self.person = person
        self.void = void
    }
}

/// One row a change request would change: its table and key, and the audit entry a rehearsal wrote.
public struct ChangeRow: Sendable, Hashable, Codable {
    /// What the row says changes (`plugin.enable`).
    public let action: String
    /// The kind of thing and its id (`plugin` `com.example.pay`).
    public let targetType: String
    public let targetID: String?
    /// The environment, when the row is of one.
    public let environment: String?
    /// The state before and after, as the audit log records them (JSON text).
    public let before: String?
    public let after: String?

    /// A value with each stored property given.
    public init(action: String, targetType: String, targetID: String?, environment: String?, before: String?, after: String?) {
        self.action = action
        self.targetType = targetType
        self.targetID = targetID
        self.environment = environment
        self.before = before
        self.after = after
    }
}

/// A change request: one operation, held until the people its environment's policy requires approved it.
public struct ChangeRequest: Sendable, Hashable, Codable {
    /// Its number.
    public let id: Int64
    /// The operation (`plugin.enable`) and its request as the operations API carries it (canonical JSON).
    public let operation: String
    public let body: String
    /// SHA-256 (hex) of `plugboard-change-v1\n` + operation + `\n` + body: what approvals name and sign.
    public let digest: String
    /// The environment; nil for a board-wide change.
    public let environment: String?
    /// What it does, in a few words (`plugin enable com.example.pay in production`).
    public let summary: String
    /// Who asked for it.
    public let author: String
    /// The access token its author opened it with (nil on the board's machine), and the person behind it (see
    /// ``ChangeApproval/person``): no approval by the same person counts.
    public let authorToken: String?
    public let authorPerson: String?
    /// `open`, `scheduled`, `applied`, `rejected` or `cancelled`.
    public let state: String
    /// Approvals needed, and whether they must be signed.
    public let required: Int
    public let signed: Bool
    /// Whether only its author may apply it (an operation whose answer is a secret, such as a new token).
    public let authorApplies: Bool
    /// When it is to be applied, once approved.
    public let scheduledAt: String?
    public let openedAt: String
    /// The audit log's head (its last `seq`) when it was opened: with its number, the moment an approver's signature
    /// binds (nil for a request opened before the board recorded it).
    public let openedSeq: Int64?
    /// When it was applied, rejected or cancelled, by whom, and why (a rejection's reason, an emergency's reason).
    public let closedAt: String?
    public let closedBy: String?
    public let closeReason: String?
    /// What applying it said, or why a due application was refused.
    public let result: String?
    /// Applied at once by an admin without the approvals, and who acknowledged it since.
    public let emergency: Bool
    public let acknowledgedAt: String?
    public let acknowledgedBy: String?
    /// The approvals given.
    public let approvals: [ChangeApproval]
    /// The rows it would change (or changed), with their state before and after, as rehearsed when it was opened.
    public let rows: [ChangeRow]

    /// Approvals that count (``ChangeApproval/current``).
    public var currentApprovals: Int { approvals.filter(\.current).count }

    /// The moment its approvers' signatures bind: its number and ``openedSeq`` (nil for a request from before it).
    public var approvalMoment: ApprovalMoment? { openedSeq.map { ApprovalMoment(changeID: id, openedSeq: $0) } }

    /// A request.
    public init(
        id: Int64, operation: String, body: String, digest: String, environment: String?, summary: String, author: String,
        state: String, required: Int, signed: Bool, authorApplies: Bool, scheduledAt: String?, openedAt: String, openedSeq: Int64? = nil,
        closedAt: String?, closedBy: String?, closeReason: String?, result: String?, emergency: Bool, acknowledgedAt: String?,
        acknowledgedBy: String?, approvals: [ChangeApproval], rows: [ChangeRow], authorToken: String? = nil, authorPerson: String? = nil
    ) {
        self.id = id
        self.authorToken = authorToken
        self.authorPerson = authorPerson
        self.operation = operation
        self.body = body
        self.digest = digest
        self.environment = environment
        self.summary = summary
        self.author = author
        self.state = state
        self.required = required
        self.signed = signed
        self.authorApplies = authorApplies
        self.scheduledAt = scheduledAt
        self.openedAt = openedAt
        self.openedSeq = openedSeq
        self.closedAt = closedAt
        self.closedBy = closedBy
        self.closeReason = closeReason
        self.result = result
        self.emergency = emergency
        self.acknowledgedAt = acknowledgedAt
        self.acknowledgedBy = acknowledgedBy
        self.approvals = approvals
        self.rows = rows
    }
}

/// What a change operation did: one sentence, and the request as it is now.
public struct ChangeRequestResult: Sendable, Hashable, Codable {
    /// One sentence (`change request 12 opened: plugin enable com.example.pay in production; needs 2 approvals`).
    public let message: String
    /// The request's number and state (repeated from ``request`` for scripts).
    public let id: Int64
    public let state: String
    /// The request.
    public let request: ChangeRequest
    /// The operation's own answer (JSON), when this applied it.
    public let answer: String?

    /// A result.
    public init(message: String, request: ChangeRequest, answer: String? = nil) {
        self.message = message
        id = request.id
        state = request.state
        self.request = request
        self.answer = answer
    }
}
