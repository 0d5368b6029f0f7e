import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import Testing

/// "Another person" is decided at the root of the token tree, as a property over random token trees: OS users (the
/// makers) make first tokens for principals on the board's machine, and tokens make tokens, for their own principal or
/// another, up to five deep. Whatever the trees, no set of approvals lets the author's person, or any one person, reach
/// the approvals a request needs.
@Suite("operations: approvals by people, over random token trees", .timeLimit(.hangGuard))
struct ApprovalPeoplePropertyTests {
    static let makers = ["m0", "m1", "m2", "m3"]
    static let principals = ["p0", "p1", "p2", "p3", "p4", "p5"]
    static let alpha = try! PluginID(validating: "com.example.alpha")

    /// Who can act: a principal through a token (or a maker on the board's machine, with no token), and the person
    /// the test knows is behind it (the maker at the root of its tree).
    struct Hand: CustomStringConvertible {
        let actor: Principal
        let person: String
        let depth: Int
        var description: String { "\(actor.osUser)/\(actor.accessToken ?? "-") (person \(person), depth \(depth))" }
    }

    /// `PLUGBOARD_PROPERTY_SEED` to replay a run, else a random seed (printed).
    static func seed() -> UInt64 {
        let seed =
            ProcessInfo.processInfo.environment["PLUGBOARD_PROPERTY_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        print("approvals by people: seed \(seed) (replay with PLUGBOARD_PROPERTY_SEED=\(seed))")
        return seed
    }

    /// A board where every maker and principal is an admin (so rights never decide), alpha registered, production
    /// needing `approvals`; and random token trees: each maker makes a few first tokens, and each token a few more, up
    /// to depth 5, for its own principal or another. Answers every hand: the makers themselves and each token.
    static func board(approvals: Int, random: inout SplitMix64) throws -> (Board, [Hand]) {
        let board = try Board.inMemory(by: try Principal(osUser: makers[0]))
        for name in makers.dropFirst() + principals {
            _ = try RoleOperations.AddAdmin(principal: try PersonPrincipal(validating: name)).perform(
                on: board, as: try Principal(osUser: makers[0]))
        }
        let text = #"{"id":"com.example.alpha","name":"Alpha","version":"1.0.0"}"#
        _ = try PluginOperations.Register(manifest: .init(file: "alpha.json", text: text)).perform(
            on: board, as: try Principal(osUser: makers[0]))
        var hands = try makers.map { Hand(actor: try Principal(osUser: $0), person: $0, depth: 0) }
        var counter = 0
        func make(by maker: Hand) throws -> Hand {
            counter += 1
            let principal = principals.randomElement(using: &random)!
            let name = "t\(counter)"
            _ = try board.createAccessToken(principal: principal, name: name, readOnly: false, by: maker.actor)
            let actor = try Principal(osUser: principal, via: "token \(name)", accessToken: name)
            return Hand(actor: actor, person: maker.person, depth: maker.depth + 1)
        }
        var frontier = Array(hands)
        while !frontier.isEmpty {
            var next: [Hand] = []
            for hand in frontier where hand.depth < 5 {
                for _ in 0..<Int.random(in: (hand.depth == 0 ? 1 : 0)...2, using: &random) { next.append(try make(by: hand)) }
            }
            hands += next
            frontier = next
        }
        _ = try TrustOperations.SetPolicy(approvals: approvals, env: "production").perform(on: board, as: try Principal(osUser: makers[0]))
        return (board, hands)
    }

    /// Opens the enablement of alpha in production as `author`.
    static func open(_ board: Board, as author: Hand) throws -> ChangeRequest {
        guard case .requested(let reply) = try PluginOperations.Enable(id: alpha, env: "production").submit(on: board, as: author.actor)
        else { throw BoardError.conflict("the enablement was applied at once") }
        return reply.value.request
    }

    /// Approves request `id` with each hand in turn, refusals included; answers the request as it is then.
    static func approveWithEach(_ hands: [Hand], _ id: Int64, on board: Board) throws -> ChangeRequest {
        for hand in hands {
            _ = try? ChangeOperations.Approve(id: try ChangeOperations.RequestID(validating: String(id))).perform(on: board, as: hand.actor)
        }
        return try board.changeRequest(id)
    }

    @Test func noApprovalSetLetsTheAuthorAloneOrAnyOnePersonReachTheCount() throws {
        var random = SplitMix64(seed: Self.seed())
        for round in 0..<12 {
            let approvals = Int.random(in: 2...3, using: &random)
            let (board, hands) = try Self.board(approvals: approvals, random: &random)
            let author = hands.randomElement(using: &random)!
            let what = "round \(round), author \(author), \(hands.count) hands"
            // The author's person alone, with every hand of theirs in any order: no approval counts.
            let request = try Self.open(board, as: author)
            let own = try Self.approveWithEach(hands.filter { $0.person == author.person }.shuffled(using: &random), request.id, on: board)
            #expect(own.state == "open" && own.currentApprovals == 0, "\(what): \(own.approvals)")
            // Any one other person, with every hand of theirs: one approval counts at most, never the count.
            for person in Self.makers where person != author.person {
                let theirs = hands.filter { $0.person == person }.shuffled(using: &random)
                let after = try Self.approveWithEach(theirs, request.id, on: board)
                #expect(after.state == "open", "\(what): \(person) alone applied it")
                let counted = after.approvals.filter(\.current)
                #expect(Set(counted.compactMap(\.person)).count == counted.count, "\(what): a person counted twice: \(counted)")
                #expect(!counted.contains { $0.person == author.person }, "\(what): the author's person counted")
                // Each counted approval is the one person the test knows made the root of its token.
                for approval in counted {
                    let known = hands.filter { $0.actor.osUser == approval.principal && $0.actor.accessToken == approval.token }
                    #expect(known.allSatisfy { $0.person == approval.person }, "\(what): \(approval) is not its root's")
                }
                // Withdraw this person's approvals before the next one: a request per person.
                if after.currentApprovals > 0 {
                    _ = try ChangeOperations.Cancel(id: try ChangeOperations.RequestID(validating: String(request.id))).perform(
                        on: board, as: author.actor)
                    break
                }
            }
            // Every hand of every person, in any order: applied only with `approvals` distinct people other than the
            // author's (a principal's approval replaces its earlier one, so fewer may count than people approved).
            let fresh = try Self.open(board, as: author)
            let all = try Self.approveWithEach(hands.shuffled(using: &random), fresh.id, on: board)
            let people = Set(all.approvals.filter(\.current).compactMap(\.person))
            #expect(!people.contains(author.person), "\(what): \(all.approvals)")
            #expect(all.state != "applied" || people.count >= approvals, "\(what): applied by \(people)")
            if Set(Self.makers).subtracting([author.person]).count < approvals { #expect(all.state == "open", "\(what)") }
            #expect(try BoardOperations.Verify(checkpoint: nil).perform(on: board, as: author.actor).value.ok, "\(what)")
        }
    }
}
