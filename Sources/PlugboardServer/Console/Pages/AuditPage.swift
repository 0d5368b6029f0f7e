import PlugboardModel
import PlugboardOperations

/// `/ui/audit`: the newest 200 rows matching a principal, a target, an action and a time, and whether the log verifies.
struct AuditPage: ConsoleView {
    static let template = "audit"

    let verification: VerificationView
    /// The request's query: the filter asked for (`actor`, `target`, `action`, `since`), shown again in its form.
    let query: [String: String]
    let records: [AuditRowView]

    /// The most rows the audit page shows, the newest first.
    static let rows = 200

    static func read(_ reads: ConsoleReads) throws -> AuditPage {
        let page = reads.page
        let verification = try reads.verification()
        let request = BoardOperations.Audit(
            since: page.value("since"), actor: page.value("actor"), target: page.value("target"), action: page.value("action"),
            limit: rows, after: nil)
        let records = try reads.perform(request).records
        return AuditPage(
            verification: verification, query: page.query, records: records.reversed().map(AuditRowView.init))
    }
}
