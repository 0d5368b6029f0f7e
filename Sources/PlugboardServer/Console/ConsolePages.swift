import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import Synchronization

/// What one page is rendered with: who asks, the request's query, the CSRF token its forms carry.
final class ConsolePage: Sendable {
    /// The page's path and query, where its forms come back to.
    let path: String
    let csrf: String
    /// A read-only session sees no form.
    let readOnly: Bool
    let principal: Principal
    /// Who made the session's access token (a token the author of a change request made does not approve it).
    let tokenMadeBy: String
    let query: [String: String]
    /// The path's parameter (`/ui/plugins/{id}`), if the page has one.
    let parameter: String?
    /// The remembered verification of the audit log, and the lane that verifies it again.
    let verifier: ConsoleVerifier
    let lane: WorkerThreads
    private let forms = Mutex(0)

    init(
        path: String, csrf: String, readOnly: Bool, principal: Principal, tokenMadeBy: String = "", query: [String: String],
        parameter: String?, verifier: ConsoleVerifier, lane: WorkerThreads
    ) {
        self.tokenMadeBy = tokenMadeBy
        self.verifier = verifier
        self.lane = lane
        self.path = path
        self.csrf = csrf
        self.readOnly = readOnly
        self.principal = principal
        self.query = query
        self.parameter = parameter
    }

    /// A number for the next form's element ids, unique on the page.
    func nextFormID() -> Int {
        forms.withLock { count in
            count += 1
            return count
        }
    }

    /// A query value, nil when absent or empty.
    func value(_ name: String) -> String? { query[name].flatMap { $0.isEmpty ? nil : $0 } }
}

/// `audit verify` for the console's pages, remembered for the board's version: the chain is verified again only
/// after a change. A verification that took long (a long log) runs again in the background after the next change, and
/// the pages say the last result, and that the newest rows are being checked, until it is done.
final class ConsoleVerifier: Sendable {
    private struct State {
        var version: BoardVersion?
        var ok = false
        var sentence = ""
        var took = Duration.zero
        var running = false
    }

    /// A verification that took longer than this runs in the background next time.
    static let inline = Duration.milliseconds(20)
    private let state = Mutex(State())

    func sentence(_ board: Board, as principal: Principal, lane: WorkerThreads) throws -> (Bool, String) {
        let version = try board.version()
        let known = state.withLock { $0 }
        if known.version == version { return (known.ok, known.sentence) }
        if known.version == nil || known.took < Self.inline {
            try verify(board, principal, version)
            let now = state.withLock { $0 }
            return (now.ok, now.sentence)
        }
        let start = state.withLock { state in
            defer { state.running = true }
            return !state.running
        }
        if start {
            lane.submit { [self] in
                try? verify(board, principal, version)
                state.withLock { $0.running = false }
            }
        }
        return (known.ok, known.sentence + " The newest changes are being checked.")
    }

    private func verify(_ board: Board, _ principal: Principal, _ version: BoardVersion) throws {
        let started = ContinuousClock.now
        let result = try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: principal).value
        let sentence =
            result.ok
            ? "The audit log verifies: \(result.rowsChecked) rows, \(result.stateRowsChecked) rows of state proven."
            : "The audit log does not verify: " + (result.problems.first ?? "see plugboard audit verify") + "."
        let took = ContinuousClock.now - started
        state.withLock { state in
            state.version = version
            state.ok = result.ok
            state.sentence = sentence
            state.took = took
        }
    }
}

/// The console's pages: their paths, sections and titles, and the view each renders from what it reads through
/// ``ConsoleReads`` (the operations, as the person). Each page's view and the code that fills it are in `Pages/`.
enum ConsolePages {
    /// One page.
    struct Route: Sendable {
        /// The path under `/ui`.
        let path: String
        /// The name of the path's parameter, if any.
        var parameter: String?
        /// The navigation section it belongs to.
        let section: String
        /// Whether it follows the board's changes live.
        var live = true
        let title: @Sendable (ConsolePage) -> String
        let render: @Sendable (ConsoleReads) throws -> String
    }

    /// The navigation: each page without a parameter, in the order of ``all``.
    static let sections: [(label: String, href: String)] = all.filter { $0.parameter == nil }.map { ($0.section, "/ui" + $0.path) }

    static let all: [Route] = [
        Route(path: "/", section: "Overview", title: { _ in "Overview" }, render: { ConsoleTemplates.render(try OverviewPage.read($0)) }),
        Route(
            path: "/plugins", section: "Plug-ins", title: { _ in "Plug-ins" }, render: { ConsoleTemplates.render(try PluginsPage.read($0)) }
        ),
        Route(
            path: "/plugins/{id}", parameter: "id", section: "Plug-ins", title: { $0.parameter ?? "Plug-in" },
            render: { ConsoleTemplates.render(try PluginPage.read($0)) }),
        Route(path: "/fleet", section: "Fleet", title: { _ in "Fleet" }, render: { ConsoleTemplates.render(try FleetPage.read($0)) }),
        Route(
            path: "/advisories", section: "Advisories", title: { _ in "Advisories" },
            render: { ConsoleTemplates.render(try AdvisoriesPage.read($0)) }),
        Route(path: "/flags", section: "Flags", title: { _ in "Flags" }, render: { ConsoleTemplates.render(try FlagsPage.read($0)) }),
        Route(
            path: "/flags/{name}", parameter: "name", section: "Flags", title: { $0.parameter ?? "Flag" },
            render: { ConsoleTemplates.render(try FlagPage.read($0)) }),
        Route(
            path: "/audit", section: "Audit", live: false, title: { _ in "Audit log" },
            render: { ConsoleTemplates.render(try AuditPage.read($0)) }),
        Route(
            path: "/webhooks", section: "Webhooks", title: { _ in "Webhooks" },
            render: { ConsoleTemplates.render(try WebhooksPage.read($0)) }),
        Route(path: "/tokens", section: "Tokens", title: { _ in "Tokens" }, render: { ConsoleTemplates.render(try TokensPage.read($0)) }),
        Route(
            path: "/rollouts", section: "Rollouts", title: { _ in "Rollouts" },
            render: { ConsoleTemplates.render(try RolloutsPage.read($0)) }),
        Route(
            path: "/changes", section: "Changes", title: { _ in "Change requests" },
            render: { ConsoleTemplates.render(try ChangesPage.read($0)) }),
        Route(
            path: "/changes/{id}", parameter: "id", section: "Changes", title: { "Change request \($0.parameter ?? "")" },
            render: { ConsoleTemplates.render(try ChangePage.read($0)) }),
    ]

    /// A host whose last report is older than this is shown as stale.
    static let staleAfter: TimeInterval = 600

    // MARK: Shared

    /// Whether a host's last report (at `reportedAt`) is older than ``staleAfter``.
    static func isStale(_ reportedAt: String, _ now: Date) -> Bool {
        guard let date = Timestamp.parse(reportedAt) else { return true }
        return now.timeIntervalSince(date) > staleAfter
    }

    /// What `read` answers, or nil when it is refused as not allowed (a read for admins only).
    static func adminsOnly<T>(_ read: () throws(BoardError) -> T) throws(BoardError) -> T? {
        let result = Result { () throws(BoardError) in try read() }
        switch result {
        case .success(let value): return value
        case .failure(let error): if error.code == .notAllowed { return nil } else { throw error }
        }
    }

    /// A query value or a path segment, percent-encoded for a link: every byte but ASCII letters, digits and `-._~`.
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// The characters a link leaves as they are (RFC 3986's unreserved ones).
    private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    /// The link to the page of `name` under `base` (`/ui/flags`, `/ui/plugins`), in `env` when given: the name is one
    /// percent-encoded path segment, whatever it holds (a flag's `"`, `<`, `?`, `#` or `/`); the template escapes the
    /// whole link for HTML.
    static func link(_ base: String, _ name: String, env: String? = nil) -> String {
        base + "/" + escape(name) + (env.map { "?env=" + escape($0) } ?? "")
    }
}
