import Foundation
import GRDB
package import PlugboardModel

/// What running an operation inside ``Board/rehearse(_:)`` gave: the rehearsal of its first audited change (rolled
/// back), or its answer when it changed nothing.
package enum RehearsalOutcome<T> {
    case rehearsed(Rehearsal)
    case unchanged(T)
}

extension Board {
    // MARK: Policies

    /// Every environment's approval policy, sorted by environment.
    package func approvalPolicies() throws(BoardError) -> [ApprovalPolicy] {
        try read { db in try ChangeRecords.policies(db) }
    }

    /// What a change in `environment` needs (nil: a board-wide change, protected when any environment is).
    package func protection(environment: String?) throws(BoardError) -> (required: Int, signed: Bool) {
        try read { db in try ChangeRecords.protection(db, environment: environment) }
    }

    /// Sets how many approvals a change that starts or widens what runs in `environment` needs, whether they must be
    /// signed, and who may approve them (`approvers`: `default`, `admins`, `owners` or a principal group) (admins). Any
    /// may be nil to keep it.
    package func setApprovalPolicy(
        approvals: Int?, signed: String?, approvers: String? = nil, environment: String, by actor: Principal
    ) throws(BoardError) -> ChangeResult {
        try Validate.environment(environment)
        if let approvals, !(0...10).contains(approvals) { throw BoardError.invalid("--approvals must be 0 to 10") }
        if let signed, !["off", "require"].contains(signed) { throw BoardError.invalid("--signed-approvals must be off or require") }
        if let approvers, !ApprovalRights.builtIn.contains(approvers) { try Validate.groupName(approvers) }
        return try change(
            actor,
            refusal: AuditEntry(action: .policySet, targetType: "approval_policy", targetID: environment, environment: environment),
            requiring: .admin(doing: "set the approval policy of \(environment)")
        ) { change in
            try change.ensureEnvironment(environment)
            if let approvers, !ApprovalRights.builtIn.contains(approvers), try !GroupQueries.exists(change.db, approvers) {
                throw BoardError.notFound(
                    "there is no group \(approvers); add its members first (plugboard group add \(approvers) PRINCIPAL), or give default, admins or owners"
                )
            }
            let before = try ChangeRecords.policies(change.db).first { $0.environment == environment }
            let oldApprovals = before?.approvals ?? 0
            let oldSigned = before?.signedApprovals ?? "off"
            let oldApprovers = before?.approvers ?? "default"
            let newApprovals = approvals ?? oldApprovals
            let newSigned = signed ?? oldSigned
            let newApprovers = approvers ?? oldApprovers
            if newApprovals == oldApprovals, newSigned == oldSigned, newApprovers == oldApprovers {
                return ChangeResult(
                    changed: false,
                    "\(environment) already needs \(newApprovals) approvals (signed: \(newSigned), approvers: \(newApprovers)); nothing changed."
                )
            }
            if newSigned == "require", newApprovals == 0 {
                throw BoardError.invalid("signed approvals need approvals: give --approvals N (1 or more) with --signed-approvals require")
            }
            try ChangeRecords.savePolicy(change, environment, approvals: newApprovals, signed: newSigned, approvers: newApprovers)
            // Protected from now on: what runs there is what runs now, and a release registered later needs a change.
            let takenIn =
                oldApprovals == 0 && newApprovals > 0
                ? try RegistryQueries.takeInNewestReleases(change.db, environment: environment, by: change.actor, at: change.now) : [:]
            var after: [String: AuditJSON] = [
                "approvals": .int(newApprovals), "signed_approvals": .string(newSigned), "approvers": .string(newApprovers),
            ]
            if !takenIn.isEmpty { after["approved_versions"] = .object(takenIn.mapValues { .string($0) }) }
            try change.record(
                AuditEntry(
                    action: .policySet, targetType: "approval_policy", targetID: environment, environment: environment,
                    before: .object([
                        "approvals": .int(oldApprovals), "signed_approvals": .string(oldSigned), "approvers": .string(oldApprovers),
                    ]),
                    after: .object(after)))
            let who = newApprovers == "default" ? "" : ", from \(ApprovalRights.describe(newApprovers))"
            let effect =
                newApprovals == 0
                ? "changes there are applied at once"
                : "a change that starts or widens what runs there needs \(newApprovals) approval\(newApprovals == 1 ? "" : "s") by other people\(newSigned == "require" ? ", signed" : "")\(who)"
            // What hosts of the environment stop running: enablements without enough signatures.
            let short =
                newSigned == "require" ? try ApproverQueries.unapproved(change.db, environment: environment, required: newApprovals) : []
            let notes = short.map {
                "hosts of \(environment) do not run \($0), enabled there without \(newApprovals) signed approvals; to run it, disable it and enable it again with approvers' signatures"
            }
            return ChangeResult(changed: true, "Set the approval policy of \(environment): \(effect).", notes: notes)
        }
    }

    // MARK: Rehearsing and applying

    /// Runs `body` (an operation) on a board whose first audited change is rolled back once it ran: what it would write
    /// and the rows it touches, or the operation's answer when it changed nothing. A refusal passes through. `body`
    /// performs the operation on the board it is given (the same board and connection, with a ``ChangeHook``).
    package func rehearse<T>(_ body: (Board) throws(BoardError) -> T) throws(BoardError) -> RehearsalOutcome<T> {
        let hook = ChangeHook(.rehearse)
        let result = Result { () throws(BoardError) in try body(Board(self, hook: hook)) }
        if let rehearsal = hook.rehearsal { return .rehearsed(rehearsal) }
        return .unchanged(try result.get())
    }

    /// Runs `body` (a change request's operation) on a board whose first audited change also checks and records
    /// `application`; answers with the body's answer and the request applied (nil when the operation changed nothing).
    /// `body` performs the operation on the board it is given.
    package func applying<T>(_ application: ChangeApplication, _ body: (Board) throws(BoardError) -> T) throws(BoardError) -> (T, Int64?) {
        let hook = ChangeHook(.apply(application))
        let value = try body(Board(self, hook: hook))
        return (value, hook.appliedID)
    }

    // MARK: The life of a request

    /// Opens a change request for an operation rehearsed as `rehearsal`.
    package func openChangeRequest(_ new: NewChangeRequest, rehearsal: Rehearsal, scheduledAt: String?, by actor: Principal)
        throws(BoardError) -> ChangeRequest
    {
        try change(actor, refusal: AuditEntry(action: .changeOpen, targetType: "change_request", environment: new.environment)) {
            change in
            if let pending = try ChangeRecords.pending(change.db, digest: new.digest) {
                throw BoardError.conflict(
                    "change request \(pending) already asks for this (\(new.summary)); approve it, or cancel it first (plugboard change show \(pending))"
                )
            }
            let id = try ChangeRecords.insert(
                change.db, new, author: actor, state: scheduledAt == nil ? "open" : "scheduled", base: rehearsal.base,
                rows: rehearsal.rows, scheduledAt: scheduledAt, now: change.now)
            var after: [String: AuditJSON] = [
                "operation": .string(new.operation), "digest": .string(new.digest), "summary": .string(new.summary),
                "required": .int(new.required), "base": .string(rehearsal.base.digest),
            ]
            if let scheduledAt { after["scheduled_at"] = .string(scheduledAt) }
            if let token = actor.accessToken { after["token"] = .string(token) }
            if let person = try ApprovalRights.person(change.db, principal: actor.osUser, token: actor.accessToken) {
                after["person"] = .string(person)
            }
            try change.record(
                AuditEntry(
                    action: .changeOpen, targetType: "change_request", targetID: String(id), environment: new.environment,
                    after: .object(after)))
            return try ChangeRecords.request(change.db, id)!
        }
    }

    /// Records `actor`'s approval of request `id` as of `base` (the rows as a rehearsal found them now), replacing an
    /// earlier approval of theirs. The author cannot approve; a signed request needs a valid signature.
    package func approveChangeRequest(
        _ id: Int64, comment: String?, base: ChangeBase, signature: ApprovalSignature?, by actor: Principal
    ) throws(BoardError) -> ChangeRequest {
        if let comment { try Validate.reason(comment) }
        return try change(actor, refusal: AuditEntry(action: .changeApprove, targetType: "change_request", targetID: String(id))) {
            change in
            let request = try ChangeRecords.pendingRequest(change.db, id, doing: "approved")
            guard request.author != actor.osUser else {
                throw BoardError.notAllowed("\(actor.osUser) opened change request \(id) and cannot approve it; another person must")
            }
            try ApprovalRights.requireApprover(change.db, actor, request)
            if request.signed {
                guard let signature else {
                    throw BoardError.invalid(
                        "change request \(id) needs signed approvals: approve it with plugboard change approve \(id) --key FILE (your approver key)"
                    )
                }
                try SignedApprovals.check(change.db, signature, request: request, principal: actor.osUser)
            }
            try change.db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO change_approvals (change_id, principal, digest, base, comment, key_id, signature, approved_at, token)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                id, actor.osUser, request.digest, base.text, comment, signature?.keyID, signature?.signature, change.now,
                actor.accessToken,
            ])
            try change.db.cachedStatement(sql: "UPDATE change_requests SET base = ? WHERE id = ?").execute(arguments: [base.text, id])
            var after: [String: AuditJSON] = ["digest": .string(request.digest), "base": .string(base.digest)]
            if let signature { after["key_id"] = .string(signature.keyID) }
            if let token = actor.accessToken { after["token"] = .string(token) }
            if let person = try ApprovalRights.person(change.db, principal: actor.osUser, token: actor.accessToken) {
                after["person"] = .string(person)
            }
            try change.record(
                AuditEntry(
                    action: .changeApprove, targetType: "change_request", targetID: String(id), environment: request.environment,
                    reason: comment, after: .object(after)))
            return try ChangeRecords.request(change.db, id, base: base)!
        }
    }

    /// Ends request `id` without applying it: rejected (with a reason) or cancelled, by its author or by someone who may
    /// approve it now (``ApprovalRights``). With `note`, the board closes it itself (nothing was left to change), saying
    /// so.
    package func closeChangeRequest(_ id: Int64, rejecting reason: String?, by actor: Principal, because note: String? = nil)
        throws(BoardError) -> ChangeRequest
    {
        let action: AuditAction = reason == nil ? .changeCancel : .changeReject
        if let reason { try Validate.reason(reason) }
        return try change(actor, refusal: AuditEntry(action: action, targetType: "change_request", targetID: String(id))) { change in
            // Closed by an apply that found nothing left to change: a refusal names the apply the user asked for.
            let doing = note != nil ? "applied" : reason == nil ? "cancelled" : "rejected"
            let request = try ChangeRecords.pendingRequest(change.db, id, doing: doing)
            if note == nil, request.author != actor.osUser,
                let refusal = try ApprovalRights.refusal(
                    change.db, principal: actor.osUser, request: request, doing: reason == nil ? "cancel" : "reject")
            {
                throw BoardError.notAllowed("\(refusal), besides \(request.author), who opened it")
            }
            let state = reason == nil ? "cancelled" : "rejected"
            try change.db.cachedStatement(
                sql: "UPDATE change_requests SET state = ?, closed_at = ?, closed_by = ?, close_reason = ? WHERE id = ?"
            ).execute(arguments: [state, change.now, actor.osUser, reason ?? note.map { String($0.prefix(1000)) }, id])
            try change.record(
                AuditEntry(
                    action: action, targetType: "change_request", targetID: String(id), environment: request.environment,
                    reason: reason ?? note.map { String($0.prefix(1000)) },
                    before: .object(["state": .string(request.state)]), after: .object(["state": .string(state)])))
            return try ChangeRecords.request(change.db, id)!
        }
    }

    /// Sets (or, with nil, clears) when request `id` is applied once approved: its author or an admin.
    package func scheduleChangeRequest(_ id: Int64, at time: String?, by actor: Principal) throws(BoardError) -> ChangeRequest {
        try change(actor, refusal: AuditEntry(action: .changeSchedule, targetType: "change_request", targetID: String(id))) { change in
            let request = try ChangeRecords.pendingRequest(change.db, id, doing: "scheduled")
            if request.author != actor.osUser, try !RoleQueries.isAdmin(change.db, actor.osUser) {
                throw BoardError.notAllowed("only \(request.author), who opened change request \(id), or a board admin may schedule it")
            }
            if request.authorApplies, time != nil {
                throw BoardError.conflict(
                    "change request \(id) answers with a secret, so only its author applies it; it cannot be scheduled")
            }
            try change.db.cachedStatement(sql: "UPDATE change_requests SET state = ?, scheduled_at = ?, result = NULL WHERE id = ?")
                .execute(arguments: [time == nil ? "open" : "scheduled", time, id])
            try change.record(
                AuditEntry(
                    action: .changeSchedule, targetType: "change_request", targetID: String(id), environment: request.environment,
                    before: .object(["scheduled_at": .optional(request.scheduledAt)]), after: .object(["scheduled_at": .optional(time)])))
            return try ChangeRecords.request(change.db, id)!
        }
    }

    /// Records that another admin saw emergency change `id`.
    package func acknowledgeChangeRequest(_ id: Int64, by actor: Principal) throws(BoardError) -> ChangeRequest {
        try change(
            actor, refusal: AuditEntry(action: .changeAcknowledge, targetType: "change_request", targetID: String(id)),
            requiring: .admin(doing: "acknowledge an emergency change")
        ) { change in
            guard let request = try ChangeRecords.request(change.db, id) else {
                throw BoardError.notFound("there is no change request \(id)")
            }
            guard request.emergency else {
                throw BoardError.conflict("change request \(id) was not an emergency; there is nothing to acknowledge")
            }
            if let by = request.acknowledgedBy { throw BoardError.conflict("change request \(id) was already acknowledged by \(by)") }
            guard request.closedBy != actor.osUser else {
                throw BoardError.notAllowed("\(actor.osUser) applied emergency change \(id); another admin must acknowledge it")
            }
            try change.db.cachedStatement(sql: "UPDATE change_requests SET acknowledged_at = ?, acknowledged_by = ? WHERE id = ?").execute(
                arguments: [change.now, actor.osUser, id])
            try change.record(
                AuditEntry(
                    action: .changeAcknowledge, targetType: "change_request", targetID: String(id), environment: request.environment))
            return try ChangeRecords.request(change.db, id)!
        }
    }

    /// Records why scheduled request `id` was not applied when due; it goes back to open, so that it is not tried again
    /// until renewed or scheduled again.
    package func noteRefusedChange(_ id: Int64, because message: String, by actor: Principal) throws(BoardError) -> ChangeRequest {
        try change(actor, refusal: AuditEntry(action: .changeRefused, targetType: "change_request", targetID: String(id))) { change in
            let request = try ChangeRecords.pendingRequest(change.db, id, doing: "noted")
            try change.db.cachedStatement(sql: "UPDATE change_requests SET state = 'open', result = ? WHERE id = ?").execute(arguments: [
                String(message.prefix(1000)), id,
            ])
            try change.record(
                AuditEntry(
                    action: .changeRefused, targetType: "change_request", targetID: String(id), environment: request.environment,
                    reason: String(message.prefix(1000)), before: .object(["state": .string(request.state)]),
                    after: .object(["state": .string("open")])))
            return try ChangeRecords.request(change.db, id)!
        }
    }

    // MARK: Reads

    /// Request `id`; its approvals count against `base` when given (the rows as a rehearsal found them now).
    package func changeRequest(_ id: Int64, base: ChangeBase? = nil) throws(BoardError) -> ChangeRequest {
        guard let request = try read({ db in try ChangeRecords.request(db, id, base: base) }) else {
            throw BoardError.notFound("there is no change request \(id); see plugboard change list")
        }
        return request
    }

    /// The newest requests (at most `limit`), of one state when given.
    package func changeRequests(state: String?, limit: Int = 500) throws(BoardError) -> [ChangeRequest] {
        try read { db in try ChangeRecords.requests(db, state: state, limit: limit) }
    }

    /// Scheduled requests whose time has come.
    package func dueChangeRequests() throws(BoardError) -> [Int64] {
        let now = clock.timestamp()
        return try read { db in try ChangeRecords.due(db, now: now) }
    }

    /// The open or scheduled request that already asks for the change of `digest`, if any.
    package func pendingChangeRequest(digest: String) throws(BoardError) -> Int64? {
        try read { db in try ChangeRecords.pending(db, digest: digest) }
    }

    /// The person behind `principal` acting with access token `token` (nil: an OS user on the board's machine): the OS
    /// user who made the first token of its chain as themselves; nil when its chain cannot be followed to one.
    package func person(principal: String, token: String?) throws(BoardError) -> String? {
        try read { db in try ApprovalRights.person(db, principal: principal, token: token) }
    }

    /// The access token the applied request that started the rollout of `pluginID` in `environment` was opened with, by
    /// `author`: the rollout's steps are requested in that token's name, so that the person behind them is the
    /// starter's person. Nil when the rollout did not start through a request, or not with a token.
    package func rolloutStartToken(pluginID: String, environment: String, author: String) throws(BoardError) -> String? {
        try read { db in
            try String.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT author_token FROM change_requests
                        WHERE operation = 'rollout.start' AND state = 'applied' AND environment = ? AND author = ?
                            AND json_extract(body, '$.id') = ?
                        ORDER BY id DESC LIMIT 1
                        """), arguments: [environment, author, pluginID])
        }
    }

    /// Emergency changes no other admin acknowledged yet.
    package func unacknowledgedEmergencies() throws(BoardError) -> [ChangeRequest] {
        try read { db in
            try Int64.fetchAll(
                db.cachedStatement(sql: "SELECT id FROM change_requests WHERE emergency = 1 AND acknowledged_at IS NULL ORDER BY id")
            )
            .compactMap { try ChangeRecords.request(db, $0) }
        }
    }
}

/// An approver's Ed25519 signature over a change's digest.
package struct ApprovalSignature: Sendable, Hashable {
    /// The approver key's id (16 hex digits).
    package let keyID: String
    /// Base64 of the 64-byte signature of ``ApprovalSignature/statement(digest:moment:)``.
    package let signature: String

    package init(keyID: String, signature: String) {
        self.keyID = keyID
        self.signature = signature
    }

    /// What an approver signs (``ApprovalStatement/text(digest:moment:)``).
    package static func statement(digest: String, moment: ApprovalMoment?) -> String {
        ApprovalStatement.text(digest: digest, moment: moment)
    }
}
