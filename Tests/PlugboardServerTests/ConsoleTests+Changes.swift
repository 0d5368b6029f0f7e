import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

/// Change requests in the console: a protected change made with a form opens a request and goes to its page; the
/// Changes page and the request's page show the rows before and after and the approvals; each person sees the forms
/// they may use (the author Cancel, others Approve and Reject, a read-only session none); the last approval given in
/// the console applies the change, audited `via console`; the Overview shows what waits for each person.
@Suite("the console's change requests", .timeLimit(.hangGuard))
struct ConsoleChangeTests {
    static let alice = try! Principal(osUser: "alice")
    static let notes = "com.example.notes"

    /// A board whose production needs two approvals, served with the console; alice (an admin), bob and carol may
    /// write, and bob has a read-only token too.
    struct Protected {
        let board: Board
        let server: PlugboardServer
        let alice: String
        let bob: String
        let carol: String
        let bobReading: String

        init(approvals: Int = 2) throws {
            board = try Board.inMemory(by: ConsoleChangeTests.alice)
            let manifest = try PluginManifest.parse(
                Data(#"{"id": "com.example.notes", "name": "Notes", "version": "1.0.0", "host": ">=1.0.0"}"#.utf8))
            _ = try board.register(manifest, by: ConsoleChangeTests.alice)
            // bob and carol may approve the plug-in's changes: its maintainers.
            for name in ["bob", "carol"] {
                _ = try board.addOwner("com.example.notes", principal: name, role: .maintainer, by: ConsoleChangeTests.alice)
            }
            _ = try board.setApprovalPolicy(approvals: approvals, signed: nil, environment: "production", by: ConsoleChangeTests.alice)
            var configuration = ServerConfiguration()
            configuration.admin = true
            configuration.rolloutInterval = nil
            server = PlugboardServer(board: board, configuration: configuration)
            // Each person's tokens are their own: a token alice made for bob would be alice's hand, not an approval.
            alice = try Self.token(board, "alice", "laptop")
            bob = try Self.token(board, "bob", "laptop")
            carol = try Self.token(board, "carol", "laptop")
            bobReading = try Self.token(board, "bob", "viewer", readOnly: true)
        }

        /// A new access token of `principal`, made by `principal`.
        static func token(_ board: Board, _ principal: String, _ name: String, readOnly: Bool = false) throws -> String {
            try board.createAccessToken(principal: principal, name: name, readOnly: readOnly, by: try Principal(osUser: principal)).secret
        }

        func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
            try await server.makeApplication().test(.router, body)
        }

        /// Opens a request as `principal` without the console: `plugin enable com.example.notes --env ENV`.
        func open(env: String = "production", as principal: String = "alice", options: ChangeOptions = ChangeOptions()) throws
            -> ChangeRequestResult
        {
            let enable = PluginOperations.Enable(id: try PluginID(validating: ConsoleChangeTests.notes), env: env)
            guard case .requested(let reply) = try enable.submit(on: board, as: try Principal(osUser: principal), options: options) else {
                throw BoardError(.integrity, "plugin enable in \(env) was applied, not requested")
            }
            return reply.value
        }

        func enabled(in env: String) throws -> Bool {
            try board.pluginDetail(ConsoleChangeTests.notes).environments.first { $0.environment == env }?.enabled ?? false
        }
    }

    /// The audit log's rows of `action`.
    static func rows(_ action: String) -> AuditQuery {
        var query = AuditQuery(limit: 10)
        query.action = action
        return query
    }

    /// Posts `operation`'s form with the session's CSRF token (read from `page`).
    static func submit(
        _ client: some TestClientProtocol, _ operation: String, _ cookie: String, from page: String, _ fields: [String: String]
    ) async throws -> TestResponse {
        let html = try await ConsoleTests.page(client, page, cookie).1
        var form = fields
        form["csrf"] = try ConsoleTests.csrf(html)
        form["return"] = page
        return try await ConsoleTests.post(client, "/ui/do/\(operation)", cookie, form)
    }

    @Test func aProtectedChangeMadeWithAFormOpensARequestAndGoesToItsPage() async throws {
        let served = try Protected()
        try await served.test { client in
            let cookie = try await ConsoleTests.signIn(client, served.alice)
            let response = try await Self.submit(
                client, "plugin.enable", cookie, from: "/ui/plugins/\(Self.notes)?env=production", ["id": Self.notes, "env": "production"])
            #expect(response.status == .seeOther)
            #expect(response.headers[.location] == "/ui/changes/1")
            let (status, html) = try await ConsoleTests.page(client, "/ui/changes/1", cookie)
            #expect(status == .ok)
            #expect(html.contains("change request 1 opened: plugin enable com.example.notes in production; needs 2 approvals"))
            #expect(html.contains("You opened this request; another person approves it."))
            #expect(!html.contains(#"action="/ui/do/change.approve""#) && !html.contains(#"action="/ui/do/change.reject""#))
            #expect(html.contains(#"action="/ui/do/change.cancel""#))
            // The row it changes, field by field: enabled false → true; the pin stays.
            #expect(html.contains("plugin.enable: plugin com.example.notes in production"))
            #expect(html.contains(#"<th scope="row">enabled</th><td><del>false</del></td><td><ins>true</ins></td>"#), "\(html)")
            #expect(html.contains("Unchanged: pinned_version none"))
            #expect(html.contains("Approvals: 0 of 2"))
        }
        #expect(try !served.enabled(in: "production"))
        #expect(try served.board.changeRequest(1).author == "alice")
    }

    @Test func eachPersonSeesTheFormsTheyMayUse() async throws {
        let served = try Protected()
        _ = try served.open()
        try await served.test { client in
            let bob = try await ConsoleTests.signIn(client, served.bob)
            for uri in ["/ui/changes/1", "/ui/changes"] {
                let html = try await ConsoleTests.page(client, uri, bob).1
                #expect(html.contains(#"action="/ui/do/change.approve""#) && html.contains(#"action="/ui/do/change.reject""#), "\(uri)")
                #expect(!html.contains(#"action="/ui/do/change.cancel""#), "\(uri)")
                #expect(html.contains(#"name="reason" type="text" required"#), "\(uri): a rejection needs its reason")
            }
            let overview = try await ConsoleTests.page(client, "/ui/", bob).1
            #expect(overview.contains("To approve") && overview.contains(#"<a href="/ui/changes/1">Change request 1</a>"#))

            let alice = try await ConsoleTests.signIn(client, served.alice)
            let mine = try await ConsoleTests.page(client, "/ui/", alice).1
            #expect(mine.contains("Your open requests") && !mine.contains("To approve"))

            // A token alice made for dave is alice's hand: it is offered no Approve form on her request.
            let made = try served.board.createAccessToken(principal: "dave", name: "from-alice", readOnly: false, by: Self.alice)
            let dave = try await ConsoleTests.signIn(client, made.secret)
            let handed = try await ConsoleTests.page(client, "/ui/changes/1", dave).1
            #expect(handed.contains("goes back to alice, who is behind this request: sign in with a token of your own to approve it."))
            #expect(!handed.contains(#"action="/ui/do/change.approve""#) && handed.contains(#"action="/ui/do/change.reject""#))

            let reader = try await ConsoleTests.signIn(client, served.bobReading)
            for uri in ["/ui/changes/1", "/ui/changes", "/ui/changes?state=open", "/ui/"] {
                let (status, html) = try await ConsoleTests.page(client, uri, reader)
                #expect(status == .ok, "\(uri)")
                #expect(!html.contains(#"action="/ui/do/"#), "\(uri) shows a control to a read-only session")
            }
            #expect(try await ConsoleTests.page(client, "/ui/changes/1", reader).1.contains("Your session is read-only"))
            #expect(try await ConsoleTests.page(client, "/ui/changes/9", reader).0 == .notFound)
            #expect(try await ConsoleTests.page(client, "/ui/changes?state=nonsense", reader).0 == .badRequest)
        }
    }

    @Test func theLastApprovalGivenInTheConsoleAppliesTheChange() async throws {
        let served = try Protected()
        _ = try served.open()
        try await served.test { client in
            let bob = try await ConsoleTests.signIn(client, served.bob)
            let first = try await Self.submit(client, "change.approve", bob, from: "/ui/changes/1", ["id": "1", "comment": "looks right"])
            #expect(first.status == .seeOther && first.headers[.location] == "/ui/changes/1")
            let page = try await ConsoleTests.page(client, "/ui/changes/1", bob).1
            #expect(page.contains("change request 1 approved by bob; 1 of 2 approvals"))
            #expect(page.contains("You approved this request; your approval counts."))
            #expect(!page.contains(#"action="/ui/do/change.approve""#))
            #expect(try await ConsoleTests.page(client, "/ui/", bob).1.contains("No change request waits for you."))

            let carol = try await ConsoleTests.signIn(client, served.carol)
            let before = try await ConsoleTests.page(client, "/ui/changes/1", carol).1
            #expect(before.contains("bob, ") && before.contains("counts") && before.contains("“looks right”"))
            let last = try await Self.submit(client, "change.approve", carol, from: "/ui/changes/1", ["id": "1"])
            #expect(last.status == .seeOther)
            let after = try await ConsoleTests.page(client, "/ui/changes/1", carol).1
            #expect(after.contains("change request 1 approved by carol and applied"), "\(after)")
            #expect(after.contains("<strong>applied</strong>") && !after.contains(#"action="/ui/do/change."#))
            let list = try await ConsoleTests.page(client, "/ui/changes?state=applied", carol).1
            #expect(list.contains("Change request 1</a>: plugin enable com.example.notes in production"))
        }
        #expect(try served.enabled(in: "production"))
        let request = try served.board.changeRequest(1)
        #expect(request.state == "applied" && request.approvals.map(\.principal).sorted() == ["bob", "carol"])
        let approvals = try served.board.auditRecords(Self.rows("change.approve"))
        #expect(approvals.map(\.by) == ["bob", "carol"])
        #expect(approvals.allSatisfy { $0.via?.hasPrefix("console from") == true }, "\(approvals)")
        let enable = try #require(try served.board.auditRecords(Self.rows("plugin.enable")).last)
        #expect(enable.by == "alice" && enable.via?.contains("change request 1, applied by carol") == true, "\(enable)")
    }

    @Test func aRejectionNeedsItsReasonAndASignedRequestIsApprovedWithTheCLI() async throws {
        let served = try Protected()
        _ = try served.board.setApprovalPolicy(approvals: 1, signed: "require", environment: "staging", by: Self.alice)
        _ = try served.open(env: "staging")
        try await served.test { client in
            let bob = try await ConsoleTests.signIn(client, served.bob)
            let html = try await ConsoleTests.page(client, "/ui/changes/1", bob).1
            #expect(html.contains("approve it with plugboard change approve 1 --key FILE"))
            #expect(!html.contains(#"action="/ui/do/change.approve""#) && html.contains(#"action="/ui/do/change.reject""#))
            let refused = try await Self.submit(client, "change.reject", bob, from: "/ui/changes/1", ["id": "1"])
            #expect(refused.status == .badRequest)
            #expect(try served.board.changeRequest(1).state == "open")
            let rejected = try await Self.submit(
                client, "change.reject", bob, from: "/ui/changes/1", ["id": "1", "reason": "not this week"])
            #expect(rejected.status == .seeOther)
            let page = try await ConsoleTests.page(client, "/ui/changes/1", bob).1
            #expect(page.contains("change request 1 rejected by bob: not this week"))
        }
        #expect(try served.board.changeRequest(1).state == "rejected")
        #expect(try !served.enabled(in: "staging"))
    }

    @Test func anEmergencyIsShownUntilAnotherAdminAcknowledgesIt() async throws {
        let served = try Protected()
        _ = try served.open(options: ChangeOptions(emergencyReason: "INC-7: the fix must run now"))
        #expect(try served.enabled(in: "production"))
        try await served.test { client in
            let alice = try await ConsoleTests.signIn(client, served.alice)
            let own = try await ConsoleTests.page(client, "/ui/changes", alice).1
            #expect(own.contains("Emergency changes to acknowledge") && own.contains("You applied this emergency change"))
            #expect(!own.contains(#"action="/ui/do/change.acknowledge""#))

            let bob = try await ConsoleTests.signIn(client, served.bob)
            let overview = try await ConsoleTests.page(client, "/ui/", bob).1
            #expect(overview.contains("applied as an emergency by alice: INC-7: the fix must run now"))
            #expect(try await ConsoleTests.page(client, "/ui/changes", bob).1.contains("A board admin other than alice acknowledges"))
            _ = try served.board.addAdmin("bob", by: Self.alice)
            let response = try await Self.submit(client, "change.acknowledge", bob, from: "/ui/changes", ["id": "1"])
            #expect(response.status == .seeOther && response.headers[.location] == "/ui/changes")
            let after = try await ConsoleTests.page(client, "/ui/changes", bob).1
            #expect(after.contains("change request 1 acknowledged by bob") && !after.contains("Emergency changes to acknowledge"))
        }
        #expect(try served.board.changeRequest(1).acknowledgedBy == "bob")
    }

    @Test func theListIsPagedAndTheOverviewNamesAtMostAPageOfRequests() async throws {
        let served = try Protected()
        // One request a protected environment: a second identical request would be refused.
        for index in 1...(ChangesPage.perPage + 2) {
            let env = index == 1 ? "production" : "production-\(index)"
            if index > 1 {
                _ = try TrustOperations.SetPolicy(approvals: 2, env: env).perform(on: served.board, as: try Principal(osUser: "alice"))
            }
            _ = try served.open(env: env)
        }
        try await served.test { client in
            let bob = try await ConsoleTests.signIn(client, served.bob)
            let first = try await ConsoleTests.page(client, "/ui/changes", bob).1
            #expect(first.components(separatedBy: #"<article class="change""#).count - 1 == ChangesPage.perPage)
            #expect(first.contains(#"<a href="/ui/changes?after=3" rel="next">"#), "\(first)")
            let second = try await ConsoleTests.page(client, "/ui/changes?after=3", bob).1
            #expect(second.contains("Change request 2</a>") && second.contains("Change request 1</a>"))
            #expect(!second.contains("Change request 3</a>") && !second.contains(#"rel="next""#))
            let overview = try await ConsoleTests.page(client, "/ui/", bob).1
            #expect(overview.contains("2 more open requests on the Changes page"))
        }
    }

    @Test func anOverviewOfABoardThatProtectsNothingSaysNothingOfRequests() async throws {
        let served = try ConsoleTests.Served()
        try await served.test { client in
            let cookie = try await ConsoleTests.signIn(client, served.writer)
            #expect(!(try await ConsoleTests.page(client, "/ui/", cookie).1.contains("Waiting for you")))
            let changes = try await ConsoleTests.page(client, "/ui/changes", cookie).1
            #expect(changes.contains("No environment requires approvals") && changes.contains("No change request waits."))
        }
    }

    @Test func aRolloutsRowReadsItsStrategiesAsTheFlagPageDoes() {
        let row = ChangeRow(
            action: "flag.rollout", targetType: "flag", targetID: "x.y", environment: "production",
            before: #"{"enabled":true,"strategies":[],"variants":[]}"#,
            after:
                #"{"enabled":true,"strategies":[{"name":"flexibleRollout","parameters":{"groupId":"x.y","rollout":"30","stickiness":"default"}}],"variants":[]}"#
        )
        let shown = ChangeCard.row(row)
        #expect(shown.fields.count == 1 && shown.fields.first?.name == "strategies")
        #expect(shown.fields.first?.before == "none")
        #expect(shown.fields.first?.after == "flexibleRollout (groupId x.y, rollout 30, stickiness default)")
        #expect(shown.same == "enabled true; variants []")
    }
}
