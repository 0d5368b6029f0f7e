import PlugboardModel

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
    let request: ChangeRequest
    /// Whether it may still be approved, rejected or cancelled.
    let pending: Bool
    /// `N of M` approvals that count, and whether that is enough.
    let counted: String
    let met: Bool
    /// The rows it changes, field by field.
    let rows: [Row]
    let controls: ControlsView?

    /// One row the request changes.
    struct Row: Sendable {
        let change: ChangeRow
        /// The fields that change.
        let fields: [Field]
        /// The fields that stay, as one sentence.
        let same: String?
    }

    /// One field that changes.
    struct Field: Sendable {
        let name: String
        let before: String
        let after: String
    }
}
