public import ArgumentParser
import Foundation
public import PlugboardModel
package import PlugboardStore

/// Change requests: `plugboard change …`. In an environment whose approval policy requires approvals, a change that
/// starts or widens what runs waits as a request until other people approve it; stopping never waits.
public enum ChangeOperations {
    /// `plugboard change …`, in the order its help lists them.
    package static let all: [any ParsedOperation.Type] = [
        List.self, Show.self, Approve.self, Reject.self, Cancel.self, Apply.self, Schedule.self, ApplyDue.self, Acknowledge.self,
    ]

    /// A request's number, as the commands take it.
    public struct RequestID: BoardField, IntegerField {
        public let value: Int64
        public init(validating text: String) throws(BoardError) {
            guard let value = Int64(text), value > 0 else {
                throw BoardError.invalid(
                    "'\(Validate.printable(String(text.prefix(40))))' is not a change request number; see plugboard change list")
            }
            self.value = value
        }
        public var description: String { String(value) }
        package var integer: Int64 { value }
    }

    /// Which requests to list.
    public enum RequestState: String, Sendable, CaseIterable, ExpressibleByArgument {
        case open, scheduled, applied, rejected, cancelled
    }

    /// `change list [--state S]`.
    public struct List: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .changeList, .read, abstract: "List change requests, newest first (at most 500).")
        @Option(help: "Only requests in this state: open, scheduled, applied, rejected or cancelled.") public var state: RequestState?
        public init() {}
        public init(state: RequestState?) { self.state = state }
        /// What it answers.
        public typealias Response = [ChangeRequest]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.changeRequests(state: state?.rawValue))
        }
        package func text(for requests: [ChangeRequest]) -> String? {
            Table.listing(
                requests, "ID", "STATE", "CHANGE", "BY", "APPROVALS", "WHEN",
                empty: "No change request\(state.map { " is \($0.rawValue)" } ?? " yet")."
            ) { request in
                [
                    String(request.id), request.emergency ? "\(request.state) (emergency)" : request.state, request.summary, request.author,
                    "\(request.currentApprovals)/\(request.required)", request.scheduledAt ?? request.closedAt ?? request.openedAt,
                ]
            }
        }
    }

    /// `change show N`.
    public struct Show: ParsedOperation, RequestOperation {
        public static let declaration = OperationDeclaration(
            .changeShow, .read, abstract: "Show a change request: every row it would change, before and after, and its approvals.")
        @OptionGroup public var target: RequestTarget
        public init() {}
        /// What it answers.
        public typealias Response = ChangeRequest
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let request = try board.changeRequest(id.value)
            guard ["open", "scheduled"].contains(request.state) else { return OperationReply(request) }
            // Approvals count against the rows as they are now.
            let base = try? ChangeRequests.currentBase(request, on: board)
            return OperationReply(try board.changeRequest(id.value, base: base))
        }
        package static func text(_ request: ChangeRequest) -> String? { ChangeText.show(request) }
    }

    /// `change approve N [--comment TEXT]`.
    public struct Approve: ParsedOperation, RequestTargeted {
        public static let declaration = OperationDeclaration(
            .changeApprove, .write, abstract: "Approve a change request (not your own); the last approval needed applies it.",
            discussion: """
                An approval names the change's digest and the state of the rows it touches now: if they move before the \
                change is applied, the approval no longer counts. A scheduled request is applied at its time.
                """)
        @OptionGroup public var target: RequestTarget
        @Option(help: "A comment, kept with the approval.") public var comment: Reason?
        @Option(name: .long, help: "The approver key's id, for a signed approval.") public var keyID: KeyID?
        @Option(name: .long, help: "Base64 of the approver key's Ed25519 signature of the change's approval statement.")
        public var signature: String?
        public init() {}
        public init(id: RequestID, comment: Reason? = nil, keyID: KeyID? = nil, signature: String? = nil) {
            self.id = id
            self.comment = comment
            self.keyID = keyID
            self.signature = signature
        }
        public func validate() throws {
            if (keyID == nil) != (signature == nil) { throw ValidationError("--key-id and --signature go together") }
            if let signature, signature.utf8.count > 200 { throw ValidationError("--signature is longer than a signature") }
        }
        /// What it answers.
        public typealias Response = ChangeRequestResult
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let change = try ChangeRequests.intact(try board.changeRequest(id.value))
            let base = try ChangeRequests.currentBase(change, on: board)
            let signed = keyID.map { ApprovalSignature(keyID: $0.text, signature: signature ?? "") }
            let approved = try board.approveChangeRequest(id.value, comment: comment?.text, base: base, signature: signed, by: actor)
            let count = "\(approved.currentApprovals) of \(approved.required) approvals"
            // Short of approvals because some no longer count: applying says which rows moved.
            let stale = approved.approvals.contains { !$0.current && $0.principal != approved.author }
            guard approved.currentApprovals >= approved.required || (stale && approved.scheduledAt == nil) else {
                return OperationReply(
                    ChangeRequestResult(message: "change request \(id) approved by \(actor.osUser); \(count)", request: approved))
            }
            if let at = approved.scheduledAt {
                return OperationReply(
                    ChangeRequestResult(
                        message: "change request \(id) approved by \(actor.osUser); \(count); it applies at \(at)", request: approved))
            }
            if approved.authorApplies, approved.currentApprovals >= approved.required {
                return OperationReply(
                    ChangeRequestResult(
                        message:
                            "change request \(id) approved by \(actor.osUser); \(count); \(approved.author) applies it with plugboard change apply \(id)",
                        request: approved))
            }
            do throws(BoardError) {
                let applied = try ChangeRequests.apply(id.value, on: board, by: actor, reusing: change)
                return OperationReply(
                    ChangeRequestResult(
                        message:
                            "change request \(id) approved by \(actor.osUser) and applied: \(applied.message.drop { $0 != ":" }.dropFirst(2))",
                        request: applied.request, answer: applied.answer))
            } catch {
                return OperationReply(
                    ChangeRequestResult(
                        message: "change request \(id) approved by \(actor.osUser); \(ChangeRequests.why(error.message, id: id.value))",
                        request: approved))
            }
        }
    }

    /// `change reject N --reason TEXT`: a stop, never waiting.
    public struct Reject: ParsedOperation, RequestTargeted {
        public static let declaration = OperationDeclaration(
            .changeReject, .stop, abstract: "Reject a change request you may approve (or your own): it is never applied.")
        @OptionGroup public var target: RequestTarget
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why (kept in the request and the audit log).") public var reason: Reason
        public init() {}
        public init(id: RequestID, reason: Reason) {
            self.id = id
            self.reason = reason
        }
        /// What it answers.
        public typealias Response = ChangeRequestResult
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let request = try board.closeChangeRequest(id.value, rejecting: reason.text, by: actor)
            return OperationReply(
                ChangeRequestResult(message: "change request \(id) rejected by \(actor.osUser): \(reason)", request: request))
        }
    }

    /// `change cancel N`: its author (or an admin) withdraws it.
    public struct Cancel: ParsedOperation, RequestOperation {
        public static let declaration = OperationDeclaration(
            .changeCancel, .stop, abstract: "Withdraw your change request (or one you may approve).")
        @OptionGroup public var target: RequestTarget
        public init() {}
        /// What it answers.
        public typealias Response = ChangeRequestResult
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let request = try board.closeChangeRequest(id.value, rejecting: nil, by: actor)
            return OperationReply(ChangeRequestResult(message: "change request \(id) cancelled by \(actor.osUser)", request: request))
        }
    }

    /// `change apply N`.
    public struct Apply: ParsedOperation, RequestOperation {
        public static let declaration = OperationDeclaration(
            .changeApply, .write,
            abstract: "Apply a change request whose approvals are met, for the rows as they are now.",
            discussion: "A request whose answer is a secret (a new token) is applied by its author, who receives the secret.")
        @OptionGroup public var target: RequestTarget
        public init() {}
        /// What it answers.
        public typealias Response = ChangeRequestResult
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try ChangeRequests.apply(id.value, on: board, by: actor))
        }
        package static func text(_ result: ChangeRequestResult) -> String? {
            [result.message, result.answer.flatMap(ChangeText.secret)].compactMap { $0 }.joined(separator: "\n")
        }
    }

    /// `change schedule N --at TIME`.
    public struct Schedule: ParsedOperation, RequestTargeted {
        public static let declaration = OperationDeclaration(
            .changeSchedule, .write,
            abstract: "Apply a change request at a time once approved (its author or an admin); --at now-less clears it.",
            discussion: "plugboard serve applies due, approved requests within 5 seconds; plugboard change apply-due does it from cron.")
        @OptionGroup public var target: RequestTarget
        @Option(help: "When (ISO-8601, for example 2026-12-01T09:00:00Z).") public var at: String?
        @Flag(help: "Clear the schedule: the request applies on its last approval.") public var clear = false
        public init() {}
        public init(id: RequestID, at: String?) {
            self.id = id
            self.at = at
            clear = at == nil
        }
        public func validate() throws {
            if (at == nil) == !clear { throw ValidationError("give --at TIME, or --clear") }
        }
        /// What it answers.
        public typealias Response = ChangeRequestResult
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let time = try at.map { text throws(BoardError) in try ChangeRequests.time(text) }
            try ChangeRequests.checkIntact(try board.changeRequest(id.value))
            let request = try board.scheduleChangeRequest(id.value, at: time, by: actor)
            let when = time.map { "scheduled for \($0)" } ?? "no longer scheduled"
            return OperationReply(ChangeRequestResult(message: "change request \(id) \(when)", request: request))
        }
    }

    /// `change apply-due`: for cron, on a board that is not served.
    public struct ApplyDue: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .changeApplyDue, .write,
            abstract: "Apply every scheduled change request whose time came and whose approvals are met (for cron).",
            discussion: "A due request whose rows moved since its approvals is not applied: it goes back to open and says why.")
        public init() {}
        /// What it answers.
        public typealias Response = [ChangeRequestResult]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try ChangeRequests.applyDue(on: board, by: actor))
        }
        package static func text(_ results: [ChangeRequestResult]) -> String? {
            results.isEmpty ? "No change request is due." : results.map(\.message).joined(separator: "\n")
        }
    }

    /// `change acknowledge N`: another admin saw an emergency change.
    public struct Acknowledge: ParsedOperation, RequestOperation {
        public static let declaration = OperationDeclaration(
            .changeAcknowledge, .write, abstract: "Acknowledge an emergency change another admin applied (admins).")
        @OptionGroup public var target: RequestTarget
        public init() {}
        /// What it answers.
        public typealias Response = ChangeRequestResult
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let request = try board.acknowledgeChangeRequest(id.value, by: actor)
            return OperationReply(ChangeRequestResult(message: "change request \(id) acknowledged by \(actor.osUser)", request: request))
        }
    }
}

extension ParsedOperation where Response == ChangeRequestResult {
    /// Its sentence.
    package static func text(_ result: ChangeRequestResult) -> String? { result.message }
}

/// The text of change requests without `--json`.
enum ChangeText {
    static func show(_ request: ChangeRequest) -> String {
        var lines = [
            "change request \(request.id): \(request.summary)",
            "  state \(request.state)\(request.emergency ? " (emergency)" : ""); opened \(request.openedAt) by \(Validate.escaped(request.author))",
            "  needs \(request.required) approval\(request.required == 1 ? "" : "s")\(request.signed ? ", signed" : ""); has \(request.currentApprovals) that count",
            "  digest \(request.digest)",
        ]
        if let at = request.scheduledAt { lines.append("  scheduled for \(at)") }
        if let closed = request.closedAt {
            lines.append(
                "  \(request.state) \(closed) by \(Validate.escaped(request.closedBy ?? "-"))\(request.closeReason.map { ": \(Validate.escaped($0))" } ?? "")"
            )
        }
        if let result = request.result { lines.append("  note: \(Validate.escaped(result))") }
        if request.emergency {
            lines.append(
                request.acknowledgedBy.map { "  acknowledged \(request.acknowledgedAt ?? "") by \(Validate.escaped($0))" }
                    ?? "  not acknowledged yet: another admin runs plugboard change acknowledge \(request.id)")
        }
        if let person = request.authorPerson, person != request.author {
            lines.append("  the person behind it: \(Validate.escaped(person)), who made the first token of its author's token")
        }
        for approval in request.approvals {
            let counts =
                approval.current ? "" : " (no longer counts: \(approval.void.map { Validate.escaped($0) } ?? "the rows moved since"))"
            lines.append(
                "  approved \(approval.approvedAt) by \(Validate.escaped(approval.principal))\(approval.keyID.map { " (signed, key \($0))" } ?? "")\(counts)\(approval.comment.map { ": \(Validate.escaped($0))" } ?? "")"
            )
        }
        var table = Table("CHANGE", "TARGET", "BEFORE", "AFTER")
        for row in request.rows {
            table.add(
                row.action, "\(row.targetType) \(row.targetID ?? "")\(row.environment.map { " in \($0)" } ?? "")", row.before ?? "-",
                row.after ?? "-")
        }
        lines.append(table.text(empty: "  No row."))
        return lines.joined(separator: "\n")
    }

    /// The secret of an applied request's answer (a new token), printed once.
    static func secret(_ answer: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any] else { return nil }
        return (object["token"] as? String ?? object["secret"] as? String).map {
            "token (shown once; the board keeps only its hash): \($0)"
        }
    }
}
