import Foundation
import GRDB
import PlugboardModel

/// The SQL of change requests, their approvals and the environments' approval policies.
enum ChangeRecords {
    /// The tables a change request's own bookkeeping writes: not part of what the request changes.
    static let ownTables: Set<String> = ["change_requests", "change_approvals", "enablement_approvals"]

    /// The states of a request that may still be applied.
    static let pending = ["open", "scheduled"]

    // MARK: Policies

    static func policies(_ db: Database) throws -> [ApprovalPolicy] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT e.name AS environment, p.approvals, p.signed, p.updated_at, p.updated_by, p.approvers
                    FROM environments e LEFT JOIN approval_policies p ON p.environment = e.name ORDER BY e.name
                    """)
        ).map {
            ApprovalPolicy(
                environment: $0["environment"], approvals: $0["approvals"] ?? 0, signedApprovals: $0["signed"] ?? "off",
                updatedAt: $0["updated_at"], updatedBy: $0["updated_by"], approvers: $0["approvers"] ?? "default")
        }
    }

    /// Sets `environment`'s approval policy in `change`, as its actor, now; nil `approvers` keeps who approves.
    static func savePolicy(_ change: AuditedChange, _ environment: String, approvals: Int, signed: String, approvers: String? = nil)
        throws
    {
        try change.db.cachedStatement(
            sql: """
                INSERT INTO approval_policies (environment, approvals, signed, approvers, updated_at, updated_by)
                VALUES (?1, ?2, ?3, coalesce(?4, 'default'), ?5, ?6)
                ON CONFLICT (environment) DO UPDATE SET approvals = excluded.approvals, signed = excluded.signed,
                    approvers = coalesce(?4, approvers), updated_at = excluded.updated_at, updated_by = excluded.updated_by
                """
        ).execute(arguments: [environment, approvals, signed, approvers, change.now, change.actor.osUser])
    }

    /// What a change in `environment` (nil: board-wide, protected when any environment is) needs: the approvals and
    /// whether they must be signed.
    static func protection(_ db: Database, environment: String?) throws -> (required: Int, signed: Bool) {
        let row: Row?
        if let environment {
            row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT approvals, signed = 'require' AS signed FROM approval_policies WHERE environment = ?"),
                arguments: [environment])
        } else {
            row = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT max(approvals) AS approvals, max(signed = 'require') AS signed FROM approval_policies WHERE approvals > 0")
            )
        }
        return (row?["approvals"] ?? 0, (row?["signed"] as Int?) == 1)
    }

    // MARK: Requests

    static func request(_ db: Database, _ id: Int64, base: ChangeBase? = nil) throws -> ChangeRequest? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM change_requests WHERE id = ?"), arguments: [id]) else {
            return nil
        }
        return try request(db, row, base: base)
    }

    /// Request `id` (its approvals counted against `base` when given) when it is open or scheduled and its digest
    /// matches its change; else the refusal says that only such a request can be `doing` ("approved", "applied", …).
    static func pendingRequest(_ db: Database, _ id: Int64, base: ChangeBase? = nil, doing: String) throws -> ChangeRequest {
        guard let request = try request(db, id, base: base) else { throw BoardError.notFound("there is no change request \(id)") }
        guard pending.contains(request.state) else {
            throw BoardError.conflict("change request \(id) is \(request.state); only an open or scheduled request can be \(doing)")
        }
        try checkDigest(request)
        return request
    }

    static func requests(_ db: Database, state: String?, limit: Int) throws -> [ChangeRequest] {
        let rows =
            if let state {
                try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT * FROM change_requests WHERE state = ? ORDER BY id DESC LIMIT ?"),
                    arguments: [state, limit])
            } else {
                try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM change_requests ORDER BY id DESC LIMIT ?"), arguments: [limit])
            }
        return try rows.map { try request(db, $0, base: nil) }
    }

    /// The oldest open or scheduled request of `digest`: a change is requested once at a time.
    static func pending(_ db: Database, digest: String) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(
                sql: "SELECT id FROM change_requests WHERE digest = ? AND state IN ('open', 'scheduled') ORDER BY id LIMIT 1"),
            arguments: [digest])
    }

    /// Scheduled requests whose time came, oldest first.
    static func due(_ db: Database, now: String) throws -> [Int64] {
        try Int64.fetchAll(
            db.cachedStatement(
                sql: "SELECT id FROM change_requests WHERE state = 'scheduled' AND scheduled_at <= ? ORDER BY scheduled_at, id"),
            arguments: [now])
    }

    private static func request(_ db: Database, _ row: Row, base: ChangeBase?) throws -> ChangeRequest {
        let id: Int64 = row["id"]
        let author: String = row["author"]
        let authorToken: String? = row["author_token"]
        let digest: String = row["digest"]
        let current = base ?? ChangeBase(text: row["base"])
        let rows = (try? JSONDecoder().decode([ChangeRow].self, from: Data((row["diff"] as String).utf8))) ?? []
        let authorPerson = try ApprovalRights.person(db, principal: author, token: authorToken)
        // A request still to be applied is judged by the rights and tokens of now; a closed one by who approved it.
        let open = pending.contains(row["state"] as String)
        // Whether each approval counts is decided now: the principal's right, its token, and its person, at this moment.
        var counted: [String: String] = [:]
        let approvals = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM change_approvals WHERE change_id = ? ORDER BY approved_at, principal"), arguments: [id]
        ).map { approval in
            let approvedBase = ChangeBase(text: approval["base"])
            let principal: String = approval["principal"]
            let token: String? = approval["token"]
            let (person, revocation) = try ApprovalRights.standing(db, principal: principal, token: token)
            var void: String?
            if principal == author {
                void = "\(principal) opened the request"
            } else if authorPerson == nil {
                void =
                    "the access token '\(author)/\(authorToken ?? "")' the request was opened with was not made by a person on the board's machine, as far as its chain goes"
            } else if open, let revocation {
                void = revocation
            } else if open,
                let refusal = try ApprovalRights.refusal(db, principal: principal, id: id, environment: row["environment"], rows: rows)
            {
                void = refusal
            } else if let person {
                if person == authorPerson {
                    void = "\(principal)'s approval is \(person)'s, who is behind the request too"
                } else if let other = counted[person] {
                    void = "\(principal)'s approval is \(person)'s, who is behind \(other)'s already: a person counts once"
                }
            } else {
                void =
                    "the access token '\(principal)/\(token ?? "")' was not made by a person on the board's machine, as far as its chain goes"
            }
            let counts = void == nil && approval["digest"] == digest && approvedBase == current
            if counts, let person { counted[person] = principal }
            return ChangeApproval(
                principal: principal, approvedAt: approval["approved_at"], comment: approval["comment"], digest: approval["digest"],
                base: approvedBase.digest, current: counts, keyID: approval["key_id"], token: token, person: person, void: void)
        }
        return ChangeRequest(
            id: id, operation: row["operation"], body: row["body"], digest: digest, environment: row["environment"],
            summary: row["summary"], author: author, state: row["state"], required: row["required"], signed: row["signed"],
            authorApplies: row["author_applies"], scheduledAt: row["scheduled_at"], openedAt: row["opened_at"],
            openedSeq: row["opened_seq"],
            closedAt: row["closed_at"],
            closedBy: row["closed_by"], closeReason: row["close_reason"], result: row["result"], emergency: row["emergency"],
            acknowledgedAt: row["acknowledged_at"], acknowledgedBy: row["acknowledged_by"], approvals: approvals, rows: rows,
            authorToken: authorToken, authorPerson: authorPerson)
    }

    /// `value` as JSON text with sorted keys: how a request's rows and an enablement's signatures are stored.
    static func jsonText(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func insert(
        _ db: Database, _ new: NewChangeRequest, author: Principal, state: String, base: ChangeBase, rows: [ChangeRow],
        scheduledAt: String?, now: String
    ) throws -> Int64 {
        try db.cachedStatement(
            sql: """
                INSERT INTO change_requests (operation, body, digest, environment, summary, author, author_token, required, signed,
                    author_applies, state, base, diff, scheduled_at, opened_at, opened_seq)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) FROM audit_log))
                """
        ).execute(arguments: [
            new.operation, new.body, new.digest, new.environment, new.summary, author.osUser, author.accessToken, new.required,
            new.signed, new.authorApplies, state, base.text, try jsonText(rows), scheduledAt, now,
        ])
        return db.lastInsertedRowID
    }

    /// Refuses a request whose stored digest is not the one of its stored operation and body: edited in the file,
    /// behind the log. Every step of a request checks it (the operations' layer checks its summary too).
    static func checkDigest(_ request: ChangeRequest) throws {
        let digest = ChangeDigest.of(operation: request.operation, body: request.body)
        guard digest == request.digest else {
            throw BoardError(
                .integrity,
                "change request \(request.id) was edited outside plugboard: its operation and body give the digest \(digest.prefix(12))…, not the \(request.digest.prefix(12))… it states; it cannot be approved, scheduled or applied (plugboard audit verify names the edited row)"
            )
        }
    }

    /// Refuses to apply `request` when it would now take in another release than the one its approvers were shown (a
    /// newer release registered since it was opened): what runs in a protected environment is what was approved.
    static func checkReleasesTakenIn(_ request: ChangeRequest, applying rows: [ChangeRow]) throws {
        /// The release a row takes in: its `approved_version` after, when the row changes it.
        func taken(_ row: ChangeRow) -> String? {
            func approved(_ json: String?) -> String? {
                guard let json, let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
                return object["approved_version"] as? String
            }
            let after = approved(row.after)
            return after == approved(row.before) ? nil : after
        }
        for row in rows {
            guard let now = taken(row) else { continue }
            let shown = request.rows.first { $0.action == row.action && $0.targetID == row.targetID && $0.environment == row.environment }
            let approved = shown.flatMap(taken)
            guard approved == now else {
                let target = row.targetID ?? "the plug-in"
                throw BoardError.conflict(
                    "change request \(request.id) would now take in \(target)@\(now)\(row.environment.map { " in \($0)" } ?? ""), not \(approved.map { "\(target)@\($0)" } ?? "what") its approvers were shown: a newer release was registered since it was opened; cancel it and ask again"
                )
            }
        }
    }

    // MARK: Applying

    /// Records that `application` is applied by the change in progress, whose own work touched the rows of `base`
    /// and recorded `rows` audit rows: checks the approvals against the digest and the rows as they were before the
    /// change, and records the request's end and its `change.apply` (or `change.emergency`) audit row.
    static func apply(_ application: ChangeApplication, base: ChangeBase, rows: Int, _ change: AuditedChange) throws -> Int64 {
        let db = change.db
        switch application {
        case .approved(let id, let appliedBy):
            let request = try pendingRequest(db, id, base: base, doing: "applied")
            try checkReleasesTakenIn(request, applying: change.recordedEntries.map(\.changeRow))
            let counted = request.approvals.filter(\.current)
            if counted.count < request.required {
                // Approvals that no longer count whatever the rows: say why, and the request waits.
                let void = request.approvals.compactMap(\.void).filter { !$0.hasSuffix("opened the request") }
                if !void.isEmpty {
                    throw BoardError.conflict(
                        "change request \(id) has \(counted.count) of the \(request.required) approvals it needs, and was not applied: \(void.joined(separator: "; ")); it waits for approvals that count"
                    )
                }
                let stale = try Row.fetchAll(
                    db.cachedStatement(
                        sql: "SELECT principal, base FROM change_approvals WHERE change_id = ? AND principal <> ? ORDER BY approved_at"),
                    arguments: [id, request.author]
                ).filter { ChangeBase(text: $0["base"]) != base }
                if let first = stale.first {
                    let moved = ChangeBase(text: first["base"]).moved(to: base)
                    let names = stale.map { $0["principal"] as String }.joined(separator: ", ")
                    throw BoardError.conflict(
                        "change request \(id) was not applied: \(moved.joined(separator: ", ")) moved since \(names) approved it; it needs \(request.required) approvals of the board as it is now, so approve it again to renew it"
                    )
                }
                throw BoardError.conflict(
                    "change request \(id) has \(counted.count) of the \(request.required) approvals it needs; nothing was changed")
            }
            try db.cachedStatement(sql: "UPDATE change_requests SET state = 'applied', closed_at = ?, closed_by = ?, base = ? WHERE id = ?")
                .execute(arguments: [change.now, appliedBy, base.text, id])
            if request.signed { try SignedApprovals.recordEnablement(db, request: request, counted: counted) }
            try change.record(
                AuditEntry(
                    action: .changeApply, targetType: "change_request", targetID: String(id), environment: request.environment,
                    after: .object([
                        "operation": .string(request.operation), "digest": .string(request.digest),
                        "approvals": .array(counted.map { .string($0.principal) }), "required": .int(request.required),
                        "rows": .int(rows), "applied_by": .string(appliedBy), "author": .string(request.author),
                    ])))
            return id
        case .emergency(let new, let reason):
            try RequiredRole.check(.admin(doing: "apply a protected change as an emergency"), db, by: change.actor)
            let id = try insert(
                db, new, author: change.actor, state: "applied", base: base, rows: change.recordedEntries.map(\.changeRow),
                scheduledAt: nil, now: change.now)
            try db.cachedStatement(
                sql: "UPDATE change_requests SET emergency = 1, closed_at = ?, closed_by = ?, close_reason = ? WHERE id = ?"
            ).execute(arguments: [change.now, change.actor.osUser, reason, id])
            try change.record(
                AuditEntry(
                    action: .changeEmergency, targetType: "change_request", targetID: String(id), environment: new.environment,
                    reason: reason,
                    after: .object([
                        "operation": .string(new.operation), "digest": .string(new.digest), "required": .int(new.required),
                        "rows": .int(rows), "summary": .string(new.summary),
                    ])))
            return id
        }
    }
}
