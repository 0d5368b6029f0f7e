import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// Everything a page of the console reads, and the only way a page reads the board: through the operations, performed
/// and checked as the person (``perform(_:)``), or through the few reads below that no operation answers in the
/// shape a page needs (every host's report, every plug-in's rollouts). A page is given this, never the board.
struct ConsoleReads: Sendable {
    private let board: Board
    /// The request the page answers: who asks, its query, its CSRF token.
    let page: ConsolePage

    init(board: Board, page: ConsolePage) {
        self.board = board
        self.page = page
    }

    // MARK: Through the operations

    /// Performs a read as the person, checked as the API checks it (a bad query value is refused with its sentence).
    func perform<Op: ParsedOperation>(_ operation: Op) throws(BoardError) -> Op.Response {
        try operation.checked().perform(on: board, as: page.principal).value
    }

    /// The board's environments (`env.list`).
    func environments() throws(BoardError) -> [String] { try perform(BoardOperations.Environments()) }

    /// The environment the page shows: `?env=`, else `default`, else the first; and every environment.
    func environment() throws(BoardError) -> (name: String, all: [String]) {
        let all = try environments()
        if let asked = page.value("env") {
            try Validate.environment(asked)
            return (asked, all)
        }
        return (all.contains("default") ? "default" : all.first ?? "default", all)
    }

    /// The switcher of a page at `action`: the environment it shows (``environment()``) among every environment.
    func switcher(action: String) throws(BoardError) -> EnvironmentSwitcher {
        let (env, all) = try environment()
        return EnvironmentSwitcher(env: env, action: action, choices: all.map { FormOption(value: $0, label: $0, selected: $0 == env) })
    }

    /// The board's admins (`admin.list`).
    func admins() throws(BoardError) -> [BoardAdmin] { try perform(RoleOperations.ListAdmins()) }

    /// Every environment's approval policy (`policy.approvals`).
    func approvalPolicies() throws(BoardError) -> [ApprovalPolicy] { try perform(TrustOperations.ShowApprovalPolicies()) }

    /// The result of `audit verify` (`audit.verify`), remembered for the board's version: see ``ConsoleVerifier``.
    func verification() throws -> VerificationView {
        let (ok, sentence) = try page.verifier.sentence(board, as: page.principal, lane: page.lane)
        return VerificationView(ok: ok, sentence: sentence)
    }

    // MARK: Reads no operation answers

    /// The active kill switches of the whole board (`plugin show` answers one plug-in's).
    func killSwitches() throws(BoardError) -> [KillSwitch] { try board.killSwitches() }

    /// The hosts that reported, the plug-in's when one is given, each with its last report.
    func reportingHosts(pluginID: String? = nil) throws(BoardError) -> [(hostID: String, environment: String, reportedAt: String)] {
        try board.reportingHosts(pluginID: pluginID)
    }

    /// What `hosts` reported loading and skipping (the plug-in's rows, when one is given).
    func loadStatus(pluginID: String?, hosts: Set<String>) throws(BoardError) -> [HostLoadStatus] {
        try board.loadStatus(pluginID: pluginID, hosts: hosts)
    }

    /// Every plug-in's rollouts in `environment` (`rollout status` answers one plug-in's).
    func rolloutStatuses(environment: String) throws(BoardError) -> [RolloutStatus] {
        try board.rolloutStatuses(pluginID: nil, environment: environment)
    }

    /// The emergency changes no other board admin acknowledged.
    func unacknowledgedEmergencies() throws(BoardError) -> [ChangeRequest] { try board.unacknowledgedEmergencies() }

    /// The person behind the person's access token: the OS user at the root of its chain.
    func person() throws(BoardError) -> String? {
        try board.person(principal: page.principal.osUser, token: page.principal.accessToken)
    }
}
