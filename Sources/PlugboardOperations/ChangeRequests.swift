import Foundation
public import PlugboardModel
package import PlugboardStore

/// Where an operation widens what runs: one environment, or all of them.
package enum WideningScope: Sendable, Hashable {
    case environment(String)
    case boardWide

    /// The environment, or nil for a board-wide change.
    package var environment: String? {
        if case .environment(let name) = self { return name }
        return nil
    }
}

/// How a change that needs approvals is submitted: scheduled, or applied at once as an emergency.
package struct ChangeOptions: Sendable, Hashable {
    /// When to apply it once approved (ISO-8601).
    package var at: String?
    /// Applied at once without approvals (admins), for this reason.
    package var emergencyReason: String?

    package init(at: String? = nil, emergencyReason: String? = nil) {
        self.at = at
        self.emergencyReason = emergencyReason
    }

    package var isEmpty: Bool { at == nil && emergencyReason == nil }
}

/// A change request with the operation it stores decoded from its body, for the steps of one command.
package struct DecodedChange {
    /// The request as it was read.
    let request: ChangeRequest
    /// Its operation, decoded from ``ChangeRequest/body``.
    let operation: any OperationRequest
}

/// What submitting an operation did: performed it, or opened (or, as an emergency, applied) a change request.
public enum Submission<Response: Sendable>: Sendable {
    /// It was performed: its answer.
    case performed(OperationReply<Response>)
    /// It waits for approvals: the change request opened (or applied as an emergency).
    case requested(OperationReply<ChangeRequestResult>)
}

extension OperationRequest {
    /// Whether this request widens what runs, and where (default: not at all).
    package func widening(on board: Board) throws(BoardError) -> WideningScope? { nil }

    /// Performs the operation, unless it widens what runs where approvals are required: then it opens a change request
    /// (after rehearsing it, so that a request that would be refused is refused now, and one that changes nothing
    /// changes nothing), or with ``ChangeOptions/emergencyReason`` applies it at once as an audited emergency (admins).
    /// Stopping and narrowing never pass here as requests: they are performed.
    package func submit(on board: Board, as actor: Principal, options: ChangeOptions = ChangeOptions()) throws(BoardError)
        -> Submission<Response>
    {
        let scope = try widening(on: board)
        let protection = try scope.map { scope throws(BoardError) in try board.protection(environment: scope.environment) }
        guard let scope, let protection, protection.required > 0 else {
            if !options.isEmpty {
                throw BoardError.invalid(
                    "\(Self.name) here needs no approvals, so it is applied at once; --at and --emergency are for changes that wait for approvals"
                )
            }
            return .performed(try perform(on: board, as: actor))
        }
        let new = NewChangeRequest(
            operation: Self.name, body: String(decoding: try wireBody(), as: UTF8.self), environment: scope.environment,
            summary: summary(scope), required: protection.required, signed: protection.signed,
            authorApplies: Self.declaration.answerIsSecret)
        if let reason = options.emergencyReason {
            try Validate.reason(reason)
            if options.at != nil { throw BoardError.invalid("an emergency is applied at once; give --emergency or --at, not both") }
            let (reply, id) = try board.applying(.emergency(new, reason: reason)) { (applying) throws(BoardError) in
                try perform(on: applying, as: actor)
            }
            guard let id else { return .performed(reply) }
            let request = try board.changeRequest(id)
            return .requested(
                OperationReply(
                    ChangeRequestResult(
                        message:
                            "change request \(id) applied as an emergency: \(new.summary); another admin must acknowledge it (plugboard change acknowledge \(id))",
                        request: request, answer: Self.answerText(reply.value)), notes: reply.notes))
        }
        let at = try options.at.map { text throws(BoardError) in try ChangeRequests.time(text) }
        if at != nil, new.authorApplies {
            throw BoardError.invalid("\(Self.name) answers with a secret, so only its author applies it; it cannot be scheduled")
        }
        switch try board.rehearse({ (rehearsing) throws(BoardError) in try perform(on: rehearsing, as: actor) }) {
        case .unchanged(let reply):
            return .performed(reply)
        case .rehearsed(let rehearsal):
            let request = try board.openChangeRequest(new, rehearsal: rehearsal, scheduledAt: at, by: actor)
            return .requested(OperationReply(ChangeRequestResult(message: ChangeRequests.opened(request), request: request)))
        }
    }

    /// The answer as JSON text, kept in a change request's result.
    static func answerText(_ value: Response) -> String { String(decoding: encodeResponse(value), as: UTF8.self) }

    /// `plugin enable com.example.pay in production`: the command and its values, without the environment.
    func summary(_ scope: WideningScope) -> String {
        var words = Self.name.replacingOccurrences(of: ".", with: " ")
        let fields = (Self.self as? any ParsedOperation.Type).map { OperationWire.fieldsByName($0) } ?? [:]
        if let body = try? wireBody(), let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            // Positional values first, as the command takes them, then options.
            let keys = object.keys.filter { $0 != "env" }.sorted()
            let positional = keys.filter { if case .positional = fields[$0]?.kind { return true } else { return false } }
            for key in positional + keys.filter({ !positional.contains($0) }) {
                let value = object[key]!
                let text = (value as? [Any]).map { $0.map { "\($0)" }.joined(separator: ",") } ?? "\(value)"
                let shown = Validate.escaped(String(text.prefix(200)))
                switch fields[key]?.kind {
                case .positional: words += " \(shown)"
                case .flag(let flag): if text == "true" || text == "1" { words += " --\(flag)" }
                case .option(let option): words += " --\(option) \(shown)"
                default: words += " \(key)=\(shown)"
                }
            }
        }
        return words + (scope.environment.map { " in \($0)" } ?? " (board-wide)")
    }
}

extension ParsedOperation {
    /// Where the declaration says it widens what runs: in its environment, or board-wide.
    package func widening(on board: Board) throws(BoardError) -> WideningScope? {
        switch Self.declaration.widens {
        case .never: return nil
        case .inEnvironment: return .environment(try environment())
        case .boardWide: return .boardWide
        }
    }
}

/// Applying change requests, by number: the request's operation is decoded from its stored body and performed by the
/// same code as any other request, as its author, with the approvals checked in the same transaction.
package enum ChangeRequests {
    /// The principal `plugboard serve`'s schedule applies due requests as, arriving `via`.
    package static func schedulePrincipal(via: String) throws(BoardError) -> Principal {
        try Principal(osUser: "plugboard/change-schedule", via: via)
    }

    /// `change request 12 opened: plugin enable com.example.pay in production; needs 2 approvals`.
    static func opened(_ request: ChangeRequest) -> String {
        let needs = "needs \(request.required) approval\(request.required == 1 ? "" : "s")\(request.signed ? ", signed" : "")"
        let when = request.scheduledAt.map { "; scheduled for \($0)" } ?? ""
        return "change request \(request.id) opened: \(request.summary); \(needs)\(when)"
    }

    /// Why applying request `id` did not happen, as the rest of a sentence that names it: `it was not applied: …`.
    static func why(_ message: String, id: Int64) -> String {
        let prefix = "change request \(id) "
        return message.hasPrefix(prefix) ? "it " + message.dropFirst(prefix.count) : "it was not applied: \(message)"
    }

    /// An ISO-8601 time (`2026-12-01T09:00:00Z`), as the board writes its timestamps.
    static func time(_ text: String) throws(BoardError) -> String {
        guard text.utf8.count <= 64, let date = Timestamp.parse(text) else {
            throw BoardError.invalid(
                "'\(Validate.printable(String(text.prefix(64))))' is not a time: give ISO-8601, for example 2026-12-01T09:00:00Z")
        }
        return Timestamp.format(date)
    }

    /// The operation type a request names.
    static func operationType(of request: ChangeRequest) throws(BoardError) -> any OperationRequest.Type {
        guard let type = OperationsAPI.requests.first(where: { $0.name == request.operation }) else {
            throw BoardError(
                .integrity, "change request \(request.id) names the operation '\(request.operation)', which this plugboard does not know")
        }
        return type
    }

    /// Refuses request `request` unless what it stores agrees with itself: the digest recomputed from its operation and
    /// body, and the summary and environment recomputed from its operation, are the ones stored (what `change show`
    /// and the console show, and what approvers approve). A request edited in the board file behind the log (its
    /// operation swapped under an unchanged summary) is refused at every step, with a sentence naming it; answers the
    /// recomputed summary.
    @discardableResult
    package static func checkIntact(_ request: ChangeRequest) throws(BoardError) -> String {
        // Intact means the summary it stores is the one its operation gives.
        try intact(request).request.summary
    }

    /// ``checkIntact(_:)``, answering the request with its operation decoded for the steps that follow. The operation of
    /// `earlier` is reused where the request still stores the same operation and body: decoding parses the body as the
    /// CLI parses its arguments, the larger part of an approval's work, so one command decodes a request once.
    package static func intact(_ request: ChangeRequest, reusing earlier: DecodedChange? = nil) throws(BoardError) -> DecodedChange {
        let digest = ChangeDigest.of(operation: request.operation, body: request.body)
        guard digest == request.digest else {
            throw edited(
                request, "its operation and body give the digest \(digest.prefix(12))…, not the \(request.digest.prefix(12))… it states")
        }
        let operation: any OperationRequest
        if let earlier, earlier.request.operation == request.operation, earlier.request.body == request.body {
            operation = earlier.operation
        } else {
            operation = try decoded(request).operation
        }
        let summary = try recomputedSummary(operation, request)
        guard summary.text == request.summary, summary.environment == request.environment else {
            throw edited(
                request,
                "it shows \"\(Validate.escaped(request.summary))\" but its operation is \"\(Validate.escaped(summary.text))\"")
        }
        return DecodedChange(request: request, operation: operation)
    }

    private static func edited(_ request: ChangeRequest, _ what: String) -> BoardError {
        BoardError(
            .integrity,
            "change request \(request.id) was edited outside plugboard: \(what); it cannot be approved, scheduled or applied (plugboard audit verify names the edited row)"
        )
    }

    /// The summary of a request's operation as opening it wrote it, and the environment it acts in.
    private static func recomputedSummary(_ operation: some OperationRequest, _ request: ChangeRequest) throws(BoardError)
        -> (text: String, environment: String?)
    {
        var scope: WideningScope = request.environment.map { .environment($0) } ?? .boardWide
        if let parsed = operation as? any ParsedOperation {
            switch Swift.type(of: parsed).declaration.widens {
            case .inEnvironment: scope = .environment(try parsed.environment())
            case .boardWide: scope = .boardWide
            case .never: break
            }
        }
        return (operation.summary(scope), scope.environment)
    }

    /// Request `request` with its operation decoded from its body as the operations API decodes a request, unchecked
    /// (the store checks the digest where it applies it).
    private static func decoded(_ request: ChangeRequest) throws(BoardError) -> DecodedChange {
        try decoded(try operationType(of: request), request)
    }

    private static func decoded<R: OperationRequest>(_ type: R.Type, _ request: ChangeRequest) throws(BoardError) -> DecodedChange {
        DecodedChange(request: request, operation: try R.fromWire(Data(request.body.utf8)))
    }

    /// The state of the rows request `request` touches now, from a rehearsal of its operation as its author.
    package static func currentBase(_ request: ChangeRequest, on board: Board) throws(BoardError) -> ChangeBase {
        try currentBase(try decoded(request), on: board)
    }

    /// The same, for a request whose operation is decoded already.
    package static func currentBase(_ change: DecodedChange, on board: Board) throws(BoardError) -> ChangeBase {
        try rehearsedBase(change.operation, change.request, on: board)
    }

    private static func rehearsedBase(_ operation: some OperationRequest, _ request: ChangeRequest, on board: Board) throws(BoardError)
        -> ChangeBase
    {
        let author = try Principal(osUser: request.author)
        switch try board.rehearse({ (rehearsing) throws(BoardError) in try operation.perform(on: rehearsing, as: author) }) {
        case .rehearsed(let rehearsal): return rehearsal.base
        case .unchanged: return ChangeBase(rows: [:])
        }
    }

    /// Applies request `id` as `applier` asks: refused unless its approvals are met for the rows as they are now. The
    /// request is read again and checked again; the operation of `earlier` (the same request, read before in this
    /// command) is reused where its body is unchanged.
    package static func apply(_ id: Int64, on board: Board, by applier: Principal, reusing earlier: DecodedChange? = nil)
        throws(BoardError) -> ChangeRequestResult
    {
        let change = try intact(try board.changeRequest(id), reusing: earlier)
        let request = change.request
        if request.authorApplies, request.author != applier.osUser {
            throw BoardError.notAllowed(
                "change request \(id) answers with a secret, so only \(request.author), who opened it, may apply it")
        }
        return try apply(change.operation, request, on: board, by: applier)
    }

    private static func apply<R: OperationRequest>(_ operation: R, _ request: ChangeRequest, on board: Board, by applier: Principal)
        throws(BoardError) -> ChangeRequestResult
    {
        let author = try Principal(osUser: request.author, via: "change request \(request.id), applied by \(applier.osUser)")
        let (reply, applied) = try board.applying(.approved(id: request.id, by: applier.osUser)) { (applying) throws(BoardError) in
            try operation.perform(on: applying, as: author)
        }
        let said = (reply.value as? ChangeResult)?.message ?? "done."
        guard applied != nil else {
            // Nothing left to change: the board already is as the request asked.
            let closed = try board.closeChangeRequest(request.id, rejecting: nil, by: applier, because: "nothing left to change: \(said)")
            return ChangeRequestResult(message: "change request \(request.id) changed nothing and was closed: \(said)", request: closed)
        }
        return ChangeRequestResult(
            message: "change request \(request.id) applied: \(said)", request: try board.changeRequest(request.id),
            answer: R.answerText(reply.value))
    }

    /// Applies every scheduled request whose time came and whose approvals are met; one whose rows moved is not applied,
    /// goes back to open and says why. Those still waiting for approvals wait. One edited behind the log is checked as
    /// every other step checks it: it is left as it is (a write that names it is refused too) and said at each pass,
    /// and the others due still apply.
    package static func applyDue(on board: Board, by applier: Principal) throws(BoardError) -> [ChangeRequestResult] {
        var results: [ChangeRequestResult] = []
        for id in try board.dueChangeRequests() {
            let request = try board.changeRequest(id)
            do throws(BoardError) {
                let change = try intact(request)
                let current = try board.changeRequest(id, base: try currentBase(change, on: board))
                guard current.currentApprovals >= current.required || current.approvals.contains(where: { !$0.current }) else { continue }
                results.append(try apply(change.operation, request, on: board, by: applier))
            } catch let error where error.code == .integrity {
                results.append(
                    ChangeRequestResult(message: "change request \(id) was due; \(why(error.message, id: id))", request: request))
            } catch {
                guard error.code == .conflict || error.code == .notAllowed || error.code == .notFound || error.code == .invalidInput else {
                    throw error
                }
                let noted = try board.noteRefusedChange(id, because: error.message, by: applier)
                results.append(
                    ChangeRequestResult(message: "change request \(id) was due; \(why(error.message, id: id))", request: noted))
            }
        }
        return results
    }
}
