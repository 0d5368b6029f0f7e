import PlugboardModel
import PlugboardOperations

/// The Overview's section of what waits for the person: others' open requests they can approve (no approval of theirs
/// counts yet), their own open requests, and emergency changes no other admin acknowledged. Only a request the person
/// approved is rehearsed again (to say whether that approval still counts); the rows name who approved, and the
/// request's page says which approvals count.
struct WaitingSection: ConsoleView {
    static let template = "waiting"

    let approvable: [Row]
    let mine: [Row]
    let emergencies: [Row]
    let readOnly: Bool
    /// How many more open requests the Changes page lists.
    let more: String?

    /// One request, and what the template cannot read of it.
    struct Row: Sendable {
        let request: ChangeRequest
        /// `needs N approvals`.
        let needs: String
        /// Who approved it, if anyone.
        let approvedBy: String?
        /// Why it is listed, when more than its being open.
        let note: String?
    }

    /// The section, or nil on a board that protects no environment and never had a request.
    static func read(_ reads: ConsoleReads) throws -> WaitingSection? {
        let viewer = try ChangesPage.Viewer(reads)
        let pending = try [ChangeOperations.RequestState.open, .scheduled].flatMap { state throws(BoardError) in
            try reads.perform(ChangeOperations.List(state: state))
        }.sorted { $0.id < $1.id }
        var approvable: [Row] = []
        var mine: [Row] = []
        var more = 0
        for listed in pending {
            if listed.author == viewer.name {
                if mine.count < ChangesPage.perPage { mine.append(row(listed)) } else { more += 1 }
                continue
            }
            guard approvable.count < ChangesPage.perPage else {
                more += 1
                continue
            }
            let approved = listed.approvals.contains { $0.principal == viewer.name }
            let request = approved ? try ChangesPage.current(listed, reads) : listed
            if !request.approvals.contains(where: { $0.principal == viewer.name && $0.current }) {
                let note = request.signed ? "approvals must be signed with plugboard change approve \(request.id) --key FILE" : nil
                approvable.append(row(request, note: note))
            }
        }
        let emergencies = try reads.unacknowledgedEmergencies().map { request in
            row(request, note: "applied as an emergency by \(request.closedBy ?? request.author): \(request.closeReason ?? "")")
        }
        if pending.isEmpty, emergencies.isEmpty, try reads.approvalPolicies().allSatisfy({ $0.approvals == 0 }) { return nil }
        return WaitingSection(
            approvable: approvable, mine: mine, emergencies: emergencies, readOnly: reads.page.readOnly,
            more: more == 0 ? nil : "\(more) more open request\(more == 1 ? "" : "s") on the Changes page.")
    }

    private static func row(_ request: ChangeRequest, note: String? = nil) -> Row {
        Row(
            request: request, needs: "needs \(request.required) approval\(request.required == 1 ? "" : "s")",
            approvedBy: request.approvals.isEmpty ? nil : request.approvals.map(\.principal).joined(separator: ", "), note: note)
    }
}
