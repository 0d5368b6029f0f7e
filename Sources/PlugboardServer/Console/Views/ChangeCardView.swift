/// One change request as the console shows it (`changeRequest.mustache`), on the list and on its own page: what it
/// changes, who asked, its approvals and whether each still counts, its schedule, and the forms the person may use.
struct ChangeCardView: ConsoleView {
    static let template = "changeRequest"

    /// The title's heading element: `h1` on the request's own page, `h3` on the list.
    let heading: String
    /// The heading element of its parts.
    let sub: String
    /// Whether the title links to the request's page.
    let link: Bool
    let id: Int64
    let summary: String
    let author: String
    let state: String
    let openedAt: String
    let environment: String
    let operation: String
    /// The operation's request, as JSON.
    let body: String
    let digest: String
    /// Whether it may still be approved, rejected or cancelled.
    let pending: Bool
    let approvals: [Approval]
    /// `N of M` approvals that count.
    let counted: String
    let met: Bool
    let signedRequired: Bool
    let scheduledAt: String?
    /// How it was closed, by whom and why.
    let closed: String?
    let result: String?
    let emergency: Bool
    let acknowledged: String?
    let rows: [Row]
    let hasRows: Bool
    /// The forms the person may use on it, rendered.
    let forms: [String]
    /// Why a form is not offered.
    let notes: [String]
    let controls: Bool

    /// One approval.
    struct Approval: Sendable {
        let principal: String
        let at: String
        let comment: String?
        /// Whether it still counts (the rows it approved did not move).
        let counts: Bool
        /// The key it was signed with.
        let signed: String?
    }

    /// One row the request changes.
    struct Row: Sendable {
        let action: String
        let target: String
        /// The fields that change.
        let fields: [Field]
        /// The fields that stay, as one sentence.
        let same: String?
        let created: Bool
        let removed: Bool
    }

    /// One field that changes.
    struct Field: Sendable {
        let name: String
        let before: String
        let after: String
    }
}
