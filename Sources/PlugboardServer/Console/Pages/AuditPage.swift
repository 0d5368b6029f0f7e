import PlugboardModel
import PlugboardOperations

/// `/ui/audit`: the newest 200 rows matching a principal, a target, an action and a time, and whether the log verifies.
struct AuditPage: ConsoleView {
    static let template = "audit"

    let verified: Bool
    let verification: String
    let actor: String
    let target: String
    let action: String
    let since: String
    let records: [AuditRowView]

    /// The most rows the audit page shows, the newest first.
    static let rows = 200

    static func read(_ reads: ConsoleReads) throws -> AuditPage {
        let page = reads.page
        let (verified, verification) = try reads.verification()
        let request = BoardOperations.Audit(
            since: page.value("since"), actor: page.value("actor"), target: page.value("target"), action: page.value("action"),
            limit: rows, after: nil)
        let records = try reads.perform(request).records
        return AuditPage(
            verified: verified, verification: verification, actor: page.value("actor") ?? "", target: page.value("target") ?? "",
            action: page.value("action") ?? "", since: page.value("since") ?? "", records: records.reversed().map(ConsolePages.auditRow))
    }
}
