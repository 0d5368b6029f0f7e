import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// The change requests pages: the list (`/ui/changes`, open and scheduled requests first), one request
/// (`/ui/changes/{id}`), and what waits for the person on the Overview. Every request shows its rows before and after,
/// its approvals and whether each still counts, and the forms the person may use on it: Approve and Reject for others'
/// requests, Cancel for their own, Acknowledge for an emergency another admin applied.
extension ConsolePages {
    /// The closed requests the list shows under the waiting ones when no state is asked for.
    static let recentClosed = 20
    /// The requests one page of the list shows in full, and the most each list of the Overview names: an open request
    /// with approvals is rehearsed again at each showing, to say whether its approvals still count.
    static let changesPerPage = 25

    static func changes(_ board: Board, _ page: ConsolePage) throws -> String {
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
            shown = try page.read(ChangeOperations.List(state: asked), on: board)
        } else {
            shown = try [ChangeOperations.RequestState.open, .scheduled].flatMap { state throws(BoardError) in
                try page.read(ChangeOperations.List(state: state), on: board)
            }.sorted { $0.id > $1.id }
            recent = try page.read(ChangeOperations.List(state: nil), on: board)
                .filter { !ChangeCard.pending.contains($0.state) }.prefix(recentClosed).map { $0 }
        }
        let viewer = try Viewer(board, page)
        let after = try page.value("after").map { text throws(BoardError) in try ChangeOperations.RequestID(validating: text).value }
        let remaining = after.map { after in shown.filter { $0.id < after } } ?? shown
        let cards = try remaining.prefix(changesPerPage).map { request throws -> String in
            ChangeCard(request: try current(request, board, page), viewer: viewer, page: page).html(heading: "h3")
        }
        var next: String?
        if remaining.count > changesPerPage, let last = remaining.prefix(changesPerPage).last {
            next = "/ui/changes?" + (asked.map { "state=\($0.rawValue)&" } ?? "") + "after=\(last.id)"
        }
        let emergencies =
            asked != nil
            ? []
            : try board.unacknowledgedEmergencies().map { request in
                ChangeCard(request: request, viewer: viewer, page: page).html(heading: "h3")
            }
        let policies = try board.approvalPolicies().filter { $0.approvals > 0 }
        let states = [("", "open and scheduled")] + ChangeOperations.RequestState.allCases.map { ($0.rawValue, $0.rawValue) }
        return ConsoleTemplates.render(
            "changes",
            [
                "heading": "Change requests", "listHeading": asked.map { "Requests \($0.rawValue)" } ?? "Open and scheduled",
                "cards": cards,
                "next": some(next),
                "empty": asked.map { "No change request is \($0.rawValue)." } ?? "No change request waits.",
                "states": states.map { ["value": $0.0, "label": $0.1, "selected": $0.0 == (asked?.rawValue ?? "")] as [String: Any] },
                "recent": recent.map(listRow), "hasRecent": !recent.isEmpty, "emergencies": emergencies,
                "hasEmergencies": !emergencies.isEmpty, "hasPolicies": !policies.isEmpty,
                "policies": policies.map { policy -> [String: Any] in
                    [
                        "environment": policy.environment, "approvals": policy.approvals, "one": policy.approvals == 1,
                        "signed": policy.signedApprovals == "require",
                    ]
                },
            ])
    }

    static func change(_ board: Board, _ page: ConsolePage) throws -> String {
        let id = try ChangeOperations.RequestID(validating: page.parameter ?? "")
        let request = try page.read(ChangeOperations.Show(id: id), on: board)
        return ChangeCard(request: request, viewer: try Viewer(board, page), page: page).html(heading: "h1")
    }

    /// A request as `change show` answers it: an open one's approvals counted against the rows as they are now (one
    /// without approvals has nothing to count, and is not rehearsed).
    static func current(_ request: ChangeRequest, _ board: Board, _ page: ConsolePage) throws -> ChangeRequest {
        guard ChangeCard.pending.contains(request.state), !request.approvals.isEmpty else { return request }
        return try page.read(ChangeOperations.Show(id: try ChangeOperations.RequestID(validating: String(request.id))), on: board)
    }

    /// A closed request as a table row.
    static func listRow(_ request: ChangeRequest) -> [String: Any] {
        [
            "id": request.id, "summary": request.summary, "author": request.author,
            "state": request.emergency ? "\(request.state) (emergency)" : request.state,
            "closed": [request.closedAt, request.closedBy.map { "by \($0)" }].compactMap { $0 }.joined(separator: " "),
            "reason": request.closeReason ?? "",
        ]
    }

    // MARK: The Overview

    /// What waits for the person: others' open requests they can approve (no approval of theirs counts yet), their own
    /// open requests, and emergency changes no other admin acknowledged. Only a request the person approved is
    /// rehearsed again (to say whether that approval still counts); the rows name who approved, and the request's page
    /// says which approvals count.
    static func waiting(_ board: Board, _ page: ConsolePage) throws -> String {
        let viewer = try Viewer(board, page)
        let pending = try [ChangeOperations.RequestState.open, .scheduled].flatMap { state throws(BoardError) in
            try page.read(ChangeOperations.List(state: state), on: board)
        }.sorted { $0.id < $1.id }
        var approvable: [[String: Any]] = []
        var mine: [[String: Any]] = []
        var more = 0
        for listed in pending {
            if listed.author == viewer.name {
                if mine.count < changesPerPage { mine.append(waitingRow(listed)) } else { more += 1 }
                continue
            }
            guard approvable.count < changesPerPage else {
                more += 1
                continue
            }
            let approved = listed.approvals.contains { $0.principal == viewer.name }
            let request = approved ? try current(listed, board, page) : listed
            if !request.approvals.contains(where: { $0.principal == viewer.name && $0.current }) {
                var row = waitingRow(request)
                if request.signed { row["note"] = "approvals must be signed with plugboard change approve \(request.id) --key FILE" }
                approvable.append(row)
            }
        }
        let emergencies = try board.unacknowledgedEmergencies().map { request -> [String: Any] in
            var row = waitingRow(request)
            row["note"] = "applied as an emergency by \(request.closedBy ?? request.author): \(request.closeReason ?? "")"
            return row
        }
        // A board that protects no environment and never had a request has nothing to say here.
        if pending.isEmpty, emergencies.isEmpty, try board.approvalPolicies().allSatisfy({ $0.approvals == 0 }) { return "" }
        return ConsoleTemplates.render(
            "waiting",
            [
                "approvable": approvable, "hasApprovable": !approvable.isEmpty, "mine": mine, "hasMine": !mine.isEmpty,
                "emergencies": emergencies, "hasEmergencies": !emergencies.isEmpty, "readOnly": page.readOnly,
                "nothing": approvable.isEmpty && mine.isEmpty && emergencies.isEmpty,
                "more": more == 0 ? false : "\(more) more open request\(more == 1 ? "" : "s") on the Changes page.",
            ])
    }

    private static func waitingRow(_ request: ChangeRequest) -> [String: Any] {
        [
            "id": request.id, "summary": request.summary, "author": request.author,
            "needs": "needs \(request.required) approval\(request.required == 1 ? "" : "s")",
            "approvedBy": request.approvals.isEmpty ? false : request.approvals.map(\.principal).joined(separator: ", "),
            "scheduled": some(request.scheduledAt),
        ]
    }

    /// Who looks at a request: their principal, and whether they are a board admin (who acknowledges emergencies).
    struct Viewer {
        let name: String
        let admin: Bool
        /// The person behind the viewer's token: the OS user at the root of its chain.
        let person: String?

        init(_ board: Board, _ page: ConsolePage) throws {
            name = page.principal.osUser
            admin = try board.admins().contains { $0.principal == page.principal.osUser }
            person = try board.person(principal: page.principal.osUser, token: page.principal.accessToken)
        }
    }
}
