import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import Testing

/// Who may approve a change request, as an environment's policy says (`policy set --approvers`): by default board
/// admins and the plug-in's owners and maintainers; `admins`, `owners` or a group narrow it, and a group never gives a
/// right its members do not hold. Rejecting needs the same right; widening who approves waits for approvals.
@Suite("operations: who may approve", .timeLimit(.hangGuard))
struct ApproverPolicyOperationTests {
    typealias Base = ChangeRequestOperationTests
    static let dave = try! Principal(osUser: "dave")
    static let erin = try! Principal(osUser: "erin")

    /// The board of ``ChangeRequestOperationTests`` with dave a maintainer of alpha, the group release of bob, dave and
    /// erin (who holds no role), and production's approvers `approvers`.
    static func board(approvers: String) throws -> Board {
        // Production is protected last: the group is made before, when adding to it waits for nobody.
        let board = try Base.board(approvals: 0)
        _ = try RoleOperations.AddOwner(id: Base.alpha, principal: try PersonPrincipal(validating: "dave"), role: .maintainer)
            .perform(on: board, as: Base.alice)
        for name in ["bob", "dave", "erin"] { _ = try board.addGroupMember("release", name, by: Base.alice) }
        _ = try TrustOperations.SetPolicy(
            approvals: 2, approvers: try TrustOperations.Approvers(validating: approvers), env: "production"
        ).submit(on: board, as: Base.alice)
        return board
    }

    static func refusal(_ body: () throws -> Any) -> String? {
        do {
            _ = try body()
            return nil
        } catch { return (error as? BoardError)?.message ?? "\(error)" }
    }

    @Test func byDefaultAdminsAndThePluginsMaintainersApproveAndNobodyWithoutARole() throws {
        let board = try Self.board(approvers: "default")
        let request = try Base.opened(PluginOperations.Enable(id: Base.alpha, env: "production"), on: board, as: Base.alice)
        #expect(
            Self.refusal { try Base.approve(request.id, on: board, as: Self.erin) }
                == "erin may not approve change request \(request.id): in production only board admins, and the owners and maintainers of com.example.alpha, approve it (plugboard admin list, plugboard owner list)"
        )
        #expect(try Base.approve(request.id, on: board, as: Self.dave).message.hasSuffix("1 of 2 approvals"))
        #expect(try Base.approve(request.id, on: board, as: Base.carol).state == "applied")
        #expect(try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: Base.alice).value.ok)
    }

    @Test func adminsOnlyLeavesTheMaintainerOut() throws {
        let board = try Self.board(approvers: "admins")
        let request = try Base.opened(PluginOperations.Enable(id: Base.alpha, env: "production"), on: board, as: Base.alice)
        #expect(
            Self.refusal { try Base.approve(request.id, on: board, as: Self.dave) }
                == "dave may not approve change request \(request.id): in production only board admins approve it (plugboard policy approvals)"
        )
        #expect(try board.changeRequest(request.id).approvals.isEmpty)
    }

    @Test func aGroupNarrowsWhoApprovesAndRejectsAndGivesNoRight() throws {
        let board = try Self.board(approvers: "release")
        #expect(try board.approvalPolicies().first { $0.environment == "production" }?.approvers == "release")
        let request = try Base.opened(PluginOperations.Enable(id: Base.alpha, env: "production"), on: board, as: Base.alice)
        let outside =
            "in production only members of the group release who are board admins or own or maintain com.example.alpha"
        // carol is an admin outside the group; erin is in the group without a role.
        #expect(Self.refusal { try Base.approve(request.id, on: board, as: Base.carol) }?.contains(outside) == true)
        #expect(Self.refusal { try Base.approve(request.id, on: board, as: Self.erin) }?.contains(outside) == true)
        let id = try ChangeOperations.RequestID(validating: String(request.id))
        #expect(
            Self.refusal {
                try ChangeOperations.Reject(id: id, reason: try Reason(validating: "no")).perform(on: board, as: Base.carol)
            }?.hasPrefix("carol may not reject change request \(request.id): \(outside)") == true)
        _ = try Base.approve(request.id, on: board, as: Base.bob)
        #expect(try Base.approve(request.id, on: board, as: Self.dave).state == "applied")
        #expect(try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: Base.alice).value.ok)
    }

    @Test func anApprovalOfAMemberWhoLeavesTheGroupNoLongerCounts() throws {
        let board = try Self.board(approvers: "release")
        let request = try Base.opened(PluginOperations.Enable(id: Base.alpha, env: "production"), on: board, as: Base.alice)
        _ = try Base.approve(request.id, on: board, as: Base.bob)
        _ = try RoleOperations.RemoveGroupMember(
            group: try RoleOperations.GroupName(validating: "release"), principal: try PrincipalName(validating: "bob")
        ).perform(on: board, as: Base.alice)
        let shown = try board.changeRequest(request.id)
        #expect(shown.currentApprovals == 0 && shown.approvals.first?.void?.hasPrefix("bob may not approve") == true, "\(shown)")
        let last = try Base.approve(request.id, on: board, as: Self.dave)
        #expect(last.state == "open" && last.message.contains("bob may not approve"), "\(last.message)")
    }

    @Test func wideningWhoApprovesWaitsForApprovalsAndNarrowingDoesNot() throws {
        let board = try Self.board(approvers: "admins")
        // From admins back to the default, or a member added to a group: requests. A group that does not exist: refused.
        let loosen = TrustOperations.SetPolicy(
            approvals: nil, approvers: try TrustOperations.Approvers(validating: "default"), env: "production")
        #expect(try Base.opened(loosen, on: board, as: Base.alice).summary.contains("--approvers default"))
        let add = RoleOperations.AddGroupMember(
            group: try RoleOperations.GroupName(validating: "release"), principal: try PersonPrincipal(validating: "carol"))
        #expect(try Base.opened(add, on: board, as: Base.alice).environment == nil)
        let missing = TrustOperations.SetPolicy(
            approvals: nil, approvers: try TrustOperations.Approvers(validating: "nobody"), env: "production")
        #expect(Self.refusal { try missing.submit(on: board, as: Base.alice) }?.hasPrefix("there is no group nobody") == true)
        #expect(Self.refusal { try TrustOperations.Approvers(validating: "Admins!") } != nil)
        // Narrowing from the default applies at once.
        let staging = TrustOperations.SetPolicy(approvals: 1, env: "staging")
        _ = try staging.submit(on: board, as: Base.alice)
        guard
            case .performed = try TrustOperations.SetPolicy(
                approvals: nil, approvers: try TrustOperations.Approvers(validating: "owners"), env: "staging"
            ).submit(on: board, as: Base.alice)
        else {
            Issue.record("narrowing who approves waited")
            return
        }
        #expect(try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: Base.alice).value.ok)
    }

    /// A rollout's due step is requested in its starter's name and with the token the start was requested with: the
    /// person behind the step is the starter's, so that person's own approval of the step is refused too.
    @Test func aRolloutStepIsRequestedAsTheSamePersonAsItsStart() throws {
        let board = try Base.board(approvals: 1)
        _ = try PluginOperations.Enable(id: Base.alpha, env: "production").submit(
            on: board, as: Base.alice, options: ChangeOptions(emergencyReason: "bootstrap"))
        // carol (an admin, an OS user on the board's machine) makes a token for bob, and starts a rollout as bob with it.
        _ = try board.createAccessToken(principal: "bob", name: "from-carol", readOnly: false, by: Base.carol)
        let bobByCarol = try Principal(osUser: "bob", via: "token from-carol from 127.0.0.1", accessToken: "from-carol")
        let start = RolloutOperations.Start(
            id: Base.alpha, version: try .init(validating: "1.1.0"), env: "production", steps: try RolloutSteps(validating: "50,100"),
            every: try StepInterval(validating: "1s"), maxFailureRate: nil, minHosts: nil, reason: nil)
        let started = try Base.opened(start, on: board, as: bobByCarol)
        #expect(
            Self.refusal { try Base.approve(started.id, on: board, as: Base.carol) }
                == "carol is behind change request \(started.id) (its author's access token goes back to carol), so carol cannot approve it; another person must"
        )
        #expect(try Base.approve(started.id, on: board, as: Base.alice).state == "applied")
        let ticks = try board.tickRollouts(via: "test", now: Date().addingTimeInterval(10))
        #expect(RolloutOperations.Step.requestWaitingSteps(ticks, on: board).count == 1)
        let step = try #require(try board.changeRequests(state: "open").first { $0.operation == "rollout.step" })
        #expect(step.author == "bob" && step.authorToken == "from-carol" && step.authorPerson == "carol", "\(step)")
        #expect(Self.refusal { try Base.approve(step.id, on: board, as: Base.carol) }?.hasPrefix("carol is behind change request") == true)
        #expect(try Base.approve(step.id, on: board, as: Base.alice).state == "applied")
        #expect(try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: Base.alice).value.ok)
    }
}
