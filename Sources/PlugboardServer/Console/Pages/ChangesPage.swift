import PlugboardModel
import PlugboardOperations

/// `/ui/changes`: the change requests that wait (open and scheduled) or those of one state, 25 a page, as cards
/// (``ChangeCard``); the emergency changes to acknowledge; the requests closed last; the approval policies.
struct ChangesPage: ConsoleView {
    static let template = "changes"

    let heading: String
    let listHeading: String
    /// The requests' cards, rendered.
    let cards: [String]
    let next: String?
    /// What the list says when it is empty.
    let empty: String
    /// The states of the filter's `<select>`.
    let states: [FormOption]
    /// The requests closed last.
    let recent: [ChangeRequest]
    /// The emergencies' cards, rendered.
    let emergencies: [String]
    /// The protected environments.
    let policies: [Policy]

    /// A protected environment.
    struct Policy: Sendable {
        let policy: ApprovalPolicy
        /// Whether it needs exactly one approval.
        let one: Bool
        let signed: Bool
    }

    /// The closed requests the list shows under the waiting ones when no state is asked for.
    static let recentClosed = 20
    /// The requests one page of the list shows in full, and the most each list of the Overview names: an open request
    /// with approvals is rehearsed again at each showing, to say whether its approvals still count.
    static let perPage = 25

    static func read(_ reads: ConsoleReads) throws -> ChangesPage {
        let page = reads.page
        let asked = try page.value("state").map { text throws(BoardError) -> ChangeOperations.RequestState in
            guard let state = ChangeOperations.RequestState(rawValue: text) else {
                let states = ChangeOperations.RequestState.allCases.map(\.rawValue).joined(separator: ", ")
                throw BoardError.invalid("'\(Validate.escaped(String(text.prefix(40))))' is not a request state: give \(states)")
            }
            return state
        }
        let shown: [ChangeRequest]
        var recent: [ChangeRequest] = []
        if let asked {
            shown = try reads.perform(ChangeOperations.List(state: asked))
        } else {
            shown = try [ChangeOperations.RequestState.open, .scheduled].flatMap { state throws(BoardError) in
                try reads.perform(ChangeOperations.List(state: state))
            }.sorted { $0.id > $1.id }
            recent = try reads.perform(ChangeOperations.List(state: nil))
                .filter { !ChangeCard.pending.contains($0.state) }.prefix(recentClosed).map { $0 }
        }
        let viewer = try Viewer(reads)
        let after = try page.value("after").map { text throws(BoardError) in try ChangeOperations.RequestID(validating: text).value }
        let remaining = after.map { after in shown.filter { $0.id < after } } ?? shown
        let cards = try remaining.prefix(perPage).map { request throws -> String in
            ConsoleTemplates.render(ChangeCard(request: try current(request, reads), viewer: viewer, page: page).view(heading: "h3"))
        }
        var next: String?
        if remaining.count > perPage, let last = remaining.prefix(perPage).last {
            next = "/ui/changes?" + (asked.map { "state=\($0.rawValue)&" } ?? "") + "after=\(last.id)"
        }
        let emergencies =
            asked != nil
            ? []
            : try reads.unacknowledgedEmergencies().map { request in
                ConsoleTemplates.render(ChangeCard(request: request, viewer: viewer, page: page).view(heading: "h3"))
            }
        let policies = try reads.approvalPolicies().filter { $0.approvals > 0 }
        let states = [("", "open and scheduled")] + ChangeOperations.RequestState.allCases.map { ($0.rawValue, $0.rawValue) }
        return ChangesPage(
            heading: "Change requests", listHeading: asked.map { "Requests \($0.rawValue)" } ?? "Open and scheduled", cards: cards,
            next: next, empty: asked.map { "No change request is \($0.rawValue)." } ?? "No change request waits.",
            states: states.map { FormOption(value: $0.0, label: $0.1, selected: $0.0 == (asked?.rawValue ?? "")) }, recent: recent,
            emergencies: emergencies,
            policies: policies.map { Policy(policy: $0, one: $0.approvals == 1, signed: $0.signedApprovals == "require") })
    }

    /// A request as `change show` answers it: an open one's approvals counted against the rows as they are now (one
    /// without approvals has nothing to count, and is not rehearsed).
    static func current(_ request: ChangeRequest, _ reads: ConsoleReads) throws -> ChangeRequest {
        guard ChangeCard.pending.contains(request.state), !request.approvals.isEmpty else { return request }
        return try reads.perform(ChangeOperations.Show(id: try ChangeOperations.RequestID(validating: String(request.id))))
    }

    /// Who looks at a request: their principal, and whether they are a board admin (who acknowledges emergencies).
    struct Viewer {
        let name: String
        let admin: Bool
        /// The person behind the viewer's token: the OS user at the root of its chain.
        let person: String?

        init(_ reads: ConsoleReads) throws {
            name = reads.page.principal.osUser
            admin = try reads.admins().contains { $0.principal == reads.page.principal.osUser }
            person = try reads.person()
        }
    }
}
