import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import Testing

/// Change requests as the operations make them, in process with three principals: what waits, what does not, the
/// approvals' binding to the rows, rollout steps, and `audit verify`'s replay of the approvals.
@Suite("operations: change requests", .timeLimit(.hangGuard))
struct ChangeRequestOperationTests {
    static let alice = try! Principal(osUser: "alice")
    static let bob = try! Principal(osUser: "bob")
    static let carol = try! Principal(osUser: "carol")
    static let alpha = try! PluginID(validating: "com.example.alpha")

    /// A board with alice, bob and carol as admins, alpha 1.0.0 and 1.1.0 registered, production requiring 2 approvals.
    static func board(approvals: Int = 2) throws -> Board {
        let board = try Board.inMemory(by: alice)
        for name in ["bob", "carol"] {
            _ = try RoleOperations.AddAdmin(principal: try PersonPrincipal(validating: name)).perform(on: board, as: alice)
        }
        for version in ["1.0.0", "1.1.0"] {
            let text = #"{"id":"com.example.alpha","name":"Alpha","version":"\#(version)"}"#
            _ = try PluginOperations.Register(manifest: .init(file: "alpha.json", text: text)).perform(on: board, as: alice)
        }
        _ = try TrustOperations.SetPolicy(approvals: approvals, env: "production").perform(on: board, as: alice)
        return board
    }

    /// The request `operation` opened, or a failed expectation.
    static func opened<Op: OperationRequest>(_ operation: Op, on board: Board, as actor: Principal, at: String? = nil) throws
        -> ChangeRequest
    {
        guard case .requested(let reply) = try operation.submit(on: board, as: actor, options: ChangeOptions(at: at)) else {
            Issue.record("\(Op.name) was applied at once")
            throw BoardError.conflict("not a request")
        }
        return reply.value.request
    }

    static func approve(_ id: Int64, on board: Board, as actor: Principal) throws -> ChangeRequestResult {
        try ChangeOperations.Approve(id: try ChangeOperations.RequestID(validating: String(id))).perform(on: board, as: actor).value
    }

    static func enabled(_ board: Board, _ environment: String) throws -> Bool {
        try PluginOperations.Show(id: alpha).perform(on: board, as: alice).value.environments.first { $0.environment == environment }?
            .enabled
            ?? false
    }

    @Test func aWideningChangeWaitsForTwoOtherPeopleAndTheLastApprovalAppliesIt() throws {
        let board = try Self.board()
        let request = try Self.opened(PluginOperations.Enable(id: Self.alpha, env: "production"), on: board, as: Self.alice)
        #expect(request.state == "open" && request.required == 2 && request.summary == "plugin enable com.example.alpha in production")
        #expect(request.rows.map(\.action) == ["plugin.enable"] && request.rows.first?.after?.contains("\"enabled\":true") == true)
        #expect(try !Self.enabled(board, "production"))
        #expect(throws: BoardError.self) { try Self.approve(request.id, on: board, as: Self.alice) }
        #expect(
            try Self.approve(request.id, on: board, as: Self.bob).message
                == "change request \(request.id) approved by bob; 1 of 2 approvals")
        // Again by bob: a principal counts once.
        #expect(try Self.approve(request.id, on: board, as: Self.bob).request.currentApprovals == 1)
        let applied = try Self.approve(request.id, on: board, as: Self.carol)
        #expect(applied.state == "applied" && applied.message.hasPrefix("change request \(request.id) approved by carol and applied"))
        #expect(try Self.enabled(board, "production"))
        #expect(try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: Self.alice).value.ok)
    }

    /// An apply that finds nothing left to change closes the request; if an approval applied it meanwhile, the refusal
    /// names the apply that was asked for, not a cancel.
    @Test func anApplyThatLosesARaceToTheLastApprovalSaysItCouldNotApply() throws {
        let board = try Self.board()
        let request = try Self.opened(PluginOperations.Enable(id: Self.alpha, env: "production"), on: board, as: Self.alice)
        _ = try Self.approve(request.id, on: board, as: Self.bob)
        #expect(try Self.approve(request.id, on: board, as: Self.carol).state == "applied")
        // What `change apply` does once its rehearsal found the board already as the request asked.
        #expect {
            try board.closeChangeRequest(request.id, rejecting: nil, by: Self.alice, because: "nothing left to change: done.")
        } throws: {
            ($0 as? BoardError)?.message
                == "change request \(request.id) is applied; only an open or scheduled request can be applied"
        }
        #expect(try board.changeRequest(request.id).state == "applied")
    }

    @Test func aTokenTheAuthorMadeForSomeoneElseDoesNotApproveTheAuthorsRequest() throws {
        let board = try Self.board()
        _ = try TokenOperations.CreateAccessToken(
            principal: try PersonPrincipal(validating: "bob"), name: try TokenName(validating: "from-alice"), expires: nil, readOnly: false
        ).perform(on: board, as: Self.alice)
        let request = try Self.opened(PluginOperations.Enable(id: Self.alpha, env: "production"), on: board, as: Self.alice)
        let bobByAlice = try Principal(osUser: "bob", via: "token from-alice from 127.0.0.1", accessToken: "from-alice")
        #expect {
            try Self.approve(request.id, on: board, as: bobByAlice)
        } throws: { ($0 as? BoardError)?.message.contains("goes back to alice, who is behind change request \(request.id) too") == true }
        #expect(try board.changeRequest(request.id).approvals.isEmpty)
    }

    @Test func stopsAndTighteningApplyAtOnceAndOtherEnvironmentsAreNotProtected() throws {
        let board = try Self.board()
        guard case .performed = try PluginOperations.Enable(id: Self.alpha, env: "staging").submit(on: board, as: Self.alice) else {
            Issue.record("staging is not protected")
            return
        }
        let stops: [any OperationRequest] = [
            PluginOperations.Disable(id: Self.alpha, env: "production"),
            try PluginOperations.Kill(.plugin(Self.alpha.text), reason: try Reason(validating: "INC-1")),
            TrustOperations.SetPolicy(approvals: 3, env: "production"),
        ]
        func appliedAtOnce<Op: OperationRequest>(_ operation: Op) throws -> Bool {
            if case .performed = try operation.submit(on: board, as: Self.alice) { return true }
            return false
        }
        for stop in stops { #expect(try appliedAtOnce(stop), "\(type(of: stop).name) waited") }
        // Loosening is a request; board-wide widening (revive) is protected because production is.
        _ = try Self.opened(TrustOperations.SetPolicy(approvals: 1, env: "production"), on: board, as: Self.alice)
        let revive = try Self.opened(
            try PluginOperations.Revive(.plugin(Self.alpha.text), reason: try Reason(validating: "fixed")), on: board, as: Self.alice)
        #expect(revive.environment == nil && revive.required == 3)
    }

    @Test func anApprovalOfRowsThatMovedNoLongerCountsAndApprovingAgainRenewsIt() throws {
        let board = try Self.board()
        let pin = try Self.opened(
            PluginOperations.Pin(id: Self.alpha, version: .init(validating: "1.0.0"), env: "production"), on: board, as: Self.alice)
        _ = try Self.approve(pin.id, on: board, as: Self.bob)
        // The row the request touches moves: production's row of alpha is enabled, then disabled (as an emergency and a stop).
        _ = try PluginOperations.Enable(id: Self.alpha, env: "production").submit(
            on: board, as: Self.alice, options: ChangeOptions(emergencyReason: "INC-7"))
        let refused = try Self.approve(pin.id, on: board, as: Self.carol)
        #expect(refused.state == "open")
        #expect(
            refused.message.contains("not applied") && refused.message.contains("plugin_environments com.example.alpha/production")
                && refused.message.contains("moved since bob approved it"), "\(refused.message)")
        let renewed = try Self.approve(pin.id, on: board, as: Self.bob)
        #expect(renewed.state == "applied", "\(renewed.message)")
    }

    @Test func anEmergencyIsAppliedAtOnceByAnAdminAndShownUntilAnotherAdminAcknowledgesIt() throws {
        let board = try Self.board()
        guard
            case .requested(let reply) = try PluginOperations.Enable(id: Self.alpha, env: "production").submit(
                on: board, as: Self.alice, options: ChangeOptions(emergencyReason: "INC-9: the payment page is down"))
        else { throw BoardError.conflict("not an emergency") }
        #expect(reply.value.request.emergency && reply.value.state == "applied")
        #expect(try Self.enabled(board, "production"))
        #expect(try board.unacknowledgedEmergencies().map(\.id) == [reply.value.id])
        let id = try ChangeOperations.RequestID(validating: String(reply.value.id))
        #expect(throws: BoardError.self) { try ChangeOperations.Acknowledge(id: id).perform(on: board, as: Self.alice) }
        _ = try ChangeOperations.Acknowledge(id: id).perform(on: board, as: Self.bob)
        #expect(try board.unacknowledgedEmergencies().isEmpty)
        #expect(try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: Self.alice).value.ok)
    }

    @Test func aDueRolloutStepInAProtectedEnvironmentWaitsForAnApprovedRequest() throws {
        let board = try Self.board(approvals: 1)
        _ = try PluginOperations.Enable(id: Self.alpha, env: "production").submit(
            on: board, as: Self.alice, options: ChangeOptions(emergencyReason: "bootstrap"))
        let start = RolloutOperations.Start(
            id: Self.alpha, version: try .init(validating: "1.1.0"), env: "production", steps: try RolloutSteps(validating: "50,100"),
            every: try StepInterval(validating: "1s"), maxFailureRate: nil, minHosts: nil, reason: nil)
        let started = try Self.opened(start, on: board, as: Self.alice)
        #expect(try Self.approve(started.id, on: board, as: Self.bob).state == "applied")
        let later = Date().addingTimeInterval(10)
        let ticks = try board.tickRollouts(via: "test", now: later)
        #expect(ticks.map(\.action) == [.awaitingApproval] && ticks.first?.startedBy == "alice")
        let opened = RolloutOperations.Step.requestWaitingSteps(ticks, on: board)
        #expect(opened.count == 1 && opened.first?.contains("rollout step com.example.alpha in production") == true, "\(opened)")
        // Not twice.
        #expect(RolloutOperations.Step.requestWaitingSteps(try board.tickRollouts(via: "test", now: later), on: board).isEmpty)
        let step = try #require(try board.changeRequests(state: "open").first { $0.operation == "rollout.step" })
        #expect(try Self.approve(step.id, on: board, as: Self.carol).state == "applied")
        #expect(try board.rolloutStatuses(pluginID: Self.alpha.text, environment: "production").first?.rollout.state == .completed)
        #expect(try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: Self.alice).value.ok)
    }

    @Test func verifyNamesAWideningRowNoApprovedRequestCovers() throws {
        let board = try Self.board()
        _ = try PluginOperations.Enable(id: Self.alpha, env: "production").submit(
            on: board, as: Self.alice, options: ChangeOptions(emergencyReason: "INC-1"))
        #expect(try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: Self.alice).value.ok)
        // The same change as the store makes it, past the operations: what a writer of the file could do.
        _ = try board.setEnabled(Self.alpha.text, false, environment: "production", by: Self.alice)
        _ = try board.setEnabled(Self.alpha.text, true, environment: "production", by: Self.alice)
        let verified = try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: Self.alice).value
        #expect(!verified.ok)
        #expect(
            verified.problems.contains {
                $0.contains("plugin.enable in production, was applied without the 2 approvals its policy required")
            },
            "\(verified.problems)")
    }
}
