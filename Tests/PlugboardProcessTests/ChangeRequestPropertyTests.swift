import Foundation
import PlugboardTestSupport
import Testing

/// The promise of protected environments, as a property over a random history: a served board whose production needs
/// two approvals, and 1,000 operations by alice, bob and carol through the operations API (widening changes, stops,
/// approvals, rejections, cancellations, applications of random requests). Whatever the order, the audit log shows
/// every change applied in production approved by two people other than its author, and every stop applied at once.
@Suite(
    "change requests: a random history of three people (processes)", .timeLimit(.hangGuard), .serialized,
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3 to rewrite the chain"),
    .enabled(if: canSwitchUser, "needs root and setpriv: each person is an OS user of their own"))
struct ChangeRequestPropertyTests {
    static let plugins = [ProtectedBoard.pay, ProtectedBoard.search]
    static let flag = "checkout.new-flow"
    /// Operations that only stop or narrow: applied at once, never a request.
    static let stops: Set<String> = ["plugin.kill", "plugin.disable", "flag.disable"]
    /// Operations that widen what runs in production (or board-wide): requests.
    static let widenings: Set<String> = ["plugin.enable", "plugin.pin", "plugin.unpin", "flag.enable", "flag.rollout", "plugin.revive"]

    /// What the history did, counted.
    struct Tally: CustomStringConvertible {
        var answers: [String: Int] = [:]
        var opened: [Int: String] = [:]
        var changedStops = 0
        var description: String { answers.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") }
    }

    /// One random operation: its name and body.
    static func operation(_ random: inout SplitMix64, requests: [Int]) -> (String, [String: Any]) {
        let plugin = plugins.randomElement(using: &random)!
        let request = requests.isEmpty ? 1 : requests[Int.random(in: max(0, requests.count - 8)..<requests.count, using: &random)]
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<10: return ("plugin.enable", ["id": plugin, "env": "production"])
        case 10..<15:
            return ("plugin.pin", ["id": plugin, "version": ["1.0.0", "1.1.0"].randomElement(using: &random)!, "env": "production"])
        case 15..<18: return ("plugin.unpin", ["id": plugin, "env": "production"])
        case 18..<23: return ("flag.enable", ["name": flag, "env": "production"])
        case 23..<27: return ("flag.rollout", ["name": flag, "percent": Int.random(in: 1...100, using: &random), "env": "production"])
        case 27..<30: return ("plugin.revive", ["id": plugin])
        case 30..<33: return ("plugin.enable", ["id": plugin, "env": "default"])
        case 33..<37: return ("plugin.kill", ["id": plugin, "reason": "drill"])
        case 37..<42: return ("plugin.disable", ["id": plugin, "env": "production"])
        case 42..<45: return ("flag.disable", ["name": flag, "env": "production"])
        case 45..<75: return ("change.approve", ["id": request])
        case 75..<82: return ("change.reject", ["id": request, "reason": "not now"])
        case 82..<88: return ("change.cancel", ["id": request])
        default: return ("change.apply", ["id": request])
        }
    }

    /// The seed of a history: `PLUGBOARD_PROPERTY_SEED` to replay one, else a random one (printed).
    static func seed(_ test: String) -> UInt64 {
        let seed =
            ProcessInfo.processInfo.environment["PLUGBOARD_PROPERTY_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        print("\(test): seed \(seed) (replay with PLUGBOARD_PROPERTY_SEED=\(seed))")
        return seed
    }

    /// Runs `count` random operations of `seed` through the API of a served protected board, checking each answer:
    /// a stop or a request's own step never opens a request, a widening in production opens one (or is refused, or
    /// would change nothing), the author's own approval is refused. Stops the server; answers the log from the first
    /// operation on and the tally.
    static func history(_ board: ProtectedBoard, seed: UInt64, count: Int) async throws -> ([AuditRows.Row], Tally) {
        let http = try LoopbackHTTP(url: board.served.url)
        let firstSeq = try #require(try await board.sandbox.boardFile.int("SELECT max(seq) FROM audit_log")) + 1
        var random = SplitMix64(seed: seed)
        var tally = Tally()
        var requests: [Int] = []
        let started = ContinuousClock.now
        for step in 0..<count {
            let person = ProtectedBoard.people.randomElement(using: &random)!
            let (name, body) = Self.operation(&random, requests: requests)
            let answer = try await http.post("/api/admin/\(name)", json: body, token: try #require(board.tokens[person]))
            let what = "step \(step) (seed \(seed)): \(person) \(name) \(body) → \(answer)"
            tally.answers["\(name) \(answer.status)", default: 0] += 1
            #expect(answer.status < 500, "\(what)")
            let opened = answer.headers["plugboard-change-request"].flatMap { Int($0) }
            if Self.stops.contains(name) || name.hasPrefix("change.") {
                // Stopping never waits: a stop (or a request's own step) never opens a request.
                #expect(answer.status != 202 && opened == nil, "\(what)")
                #expect(answer.status != 400, "a well-formed request: \(what)")
                if Self.stops.contains(name), answer.status == 200, answer.object?["changed"] as? Bool == true { tally.changedStops += 1 }
            } else if body["env"] as? String == "default" {
                #expect(answer.status != 202, "an unprotected environment waits for nobody: \(what)")
            } else if answer.status == 202 {
                let id = try #require(opened, "\(what)")
                requests.append(id)
                tally.opened[id] = person
            } else {
                // Not opened: refused, or it would change nothing.
                #expect(answer.status >= 400 || answer.object?["changed"] as? Bool == false, "\(what)")
            }
            if name == "change.approve", answer.status == 200, let id = body["id"] as? Int,
                tally.opened[id] == person
            {
                Issue.record("the author approved their own request: \(what)")
            }
        }
        print("\(count) operations through the API in \(ContinuousClock.now - started): \(tally)")
        #expect(await board.served.server.stop() == 0, "\(board.served.server.errorOutput)")
        return (try await AuditRows.read(board.sandbox, from: firstSeq), tally)
    }

    @Test func everyChangeAppliedInProductionHasTwoApproversAndEveryStopIsAppliedAtOnce() async throws {
        let seed = Self.seed("change request property test")
        let board = try await ProtectedBoard.start()
        let sandbox = board.sandbox
        let (log, tally) = try await Self.history(board, seed: seed, count: 1000)
        let applied = try Self.checkApplied(log, seed: seed)
        try Self.checkStops(log, applied: applied, tally: tally, seed: seed)
        let stopRequests = try await sandbox.boardFile.int(
            "SELECT count(*) FROM change_requests WHERE operation IN ('plugin.kill', 'plugin.disable', 'flag.disable')")
        #expect(stopRequests == 0)
        // Enough requests applied for the property to mean something. How many a random history applies varies with its
        // seed: seed 9976725495948267091 applies 7, with 215 of its approvals refused (409).
        #expect(applied.count >= 5, "the history applied only \(applied.count) requests (seed \(seed)): \(tally)")
        #expect(log.contains { $0.action == "change.approve" && $0.outcome == "refused" }, "no author tried their own (seed \(seed))")
        let verify = try await sandbox.run(["audit", "verify"])
        #expect(verify.status == 0, "\(verify)")
    }

    /// An application rewritten by hand after a shorter history: its `change.apply` row names no approver and the
    /// approvals of it are moved to a request that does not exist, the hash chain recomputed after the edit and the
    /// append-only trigger put back, so that the chain and the state proof still hold. `audit verify` must name it.
    @Test func aForgedApplicationWithoutApprovalsIsNamedByAuditVerify() async throws {
        let seed = Self.seed("forged application")
        let board = try await ProtectedBoard.start()
        let sandbox = board.sandbox
        // One enablement in production applied through its request for sure, then a random history.
        let first = try #require(try await sandbox.boardFile.int("SELECT max(seq) FROM audit_log")) + 1
        let opened = try await board.ok("carol", "plugin", "enable", ProtectedBoard.search, "--env", "production", "--json")
        let id = String(try ProtectedBoard.requestID(opened))
        try await board.ok("alice", "change", "approve", id)
        try await board.ok("bob", "change", "approve", id)
        _ = try await Self.history(board, seed: seed, count: 300)
        let log = try await AuditRows.read(sandbox, from: first)
        let applied = try Self.checkApplied(log, seed: seed)
        let enable = applied.sorted { $0.key < $1.key }.first { apply in
            apply.value.contains { seq in log.contains { $0.seq == seq && $0.action == "plugin.enable" && $0.environment == "production" } }
        }
        let applySeq = try #require(enable?.key, "no plug-in was enabled in production through a request (seed \(seed))")
        let enableSeq = try #require(enable?.value.first)
        let request = try #require(log.first { $0.seq == applySeq }?.targetID)
        let rewritten = try await ChainForgery.rewrite(
            sandbox.board,
            sql: """
                UPDATE audit_log SET target_id = '999999' WHERE action = 'change.approve' AND target_id = '\(request)';
                UPDATE audit_log SET after_json = json_set(after_json, '$.approvals', json('[]')) WHERE seq = \(applySeq);
                """)
        let verify = try await sandbox.run(["audit", "verify"])
        print(
            "audit verify after forging the application of request \(request) (seq \(enableSeq), apply \(applySeq), \(rewritten) hashes rewritten): \(verify)"
        )
        // The chain and the state proof hold after the rewrite: what names the forgery is the check of approvals (the
        // lead's part of `audit verify`), in a sentence with the row's seq and the word approval.
        #expect(
            !verify.stdout.contains("was edited") && !verify.stderr.contains("does not chain"),
            "the rewrite left the chain broken: \(verify)")
        let output = verify.stdout + verify.stderr
        let named = output.split(separator: "\n").contains { line in
            line.contains("approval") && (line.contains("\(enableSeq)") || line.contains("\(applySeq)"))
        }
        #expect(verify.status == 1 && named, "audit verify did not name the forged application (seq \(enableSeq)/\(applySeq)): \(verify)")
    }

    /// Every `change.apply` in production: two approvers other than the author, each of whom approved it before (an ok
    /// `change.approve` row); the rows it covers (the `rows` before it) are the request's operation. Answers the seqs
    /// of the rows the applications covered, by the apply row's seq.
    static func checkApplied(_ log: [AuditRows.Row], seed: UInt64) throws -> [Int: [Int]] {
        var covered: [Int: [Int]] = [:]
        let bySeq = Dictionary(uniqueKeysWithValues: log.map { ($0.seq, $0) })
        for row in log where row.action == "change.apply" && row.outcome == "ok" {
            let after = try #require(row.after, "seq \(row.seq)")
            let approvals = Set((after["approvals"] as? [String]) ?? [])
            let author = after["author"] as? String ?? ""
            let count = after["rows"] as? Int ?? 0
            #expect(count >= 1, "seq \(row.seq) applied no row (seed \(seed))")
            #expect(!approvals.contains(author) && approvals.count >= 2, "seq \(row.seq): \(approvals) for \(author) (seed \(seed))")
            for approver in approvals {
                let approved = log.contains {
                    $0.seq < row.seq && $0.action == "change.approve" && $0.outcome == "ok" && $0.actor == approver
                        && $0.targetID == row.targetID
                }
                #expect(approved, "seq \(row.seq) counts \(approver), who never approved request \(row.targetID ?? "?") (seed \(seed))")
            }
            let seqs = Array((row.seq - count)..<row.seq)
            let operation = after["operation"] as? String ?? "?"
            for seq in seqs {
                let applied = try #require(bySeq[seq], "seq \(seq)")
                #expect(
                    applied.outcome == "ok" && !applied.action.hasPrefix("change."), "seq \(seq) before the apply \(row.seq) (seed \(seed))"
                )
            }
            #expect(bySeq[seqs.first ?? 0]?.action.hasPrefix(operation.split(separator: ".").first.map(String.init) ?? "?") == true)
            covered[row.seq] = seqs
        }
        // Nothing widened production (or the whole board) outside an application.
        let inApplications = Set(covered.values.joined())
        for row in log where row.outcome == "ok" && !row.action.hasPrefix("change.") && !inApplications.contains(row.seq) {
            let protected = row.environment == "production" || (row.environment == nil && widenings.contains(row.action))
            #expect(!protected || stops.contains(row.action), "seq \(row.seq) \(row.action) in production without approvals (seed \(seed))")
        }
        return covered
    }

    /// Every stop is a row of its own (no application covers it), at least one for each stop the API said it made.
    static func checkStops(_ log: [AuditRows.Row], applied: [Int: [Int]], tally: Tally, seed: UInt64) throws {
        let inApplications = Set(applied.values.joined())
        let stopRows = log.filter { $0.outcome == "ok" && stops.contains($0.action) }
        #expect(stopRows.allSatisfy { !inApplications.contains($0.seq) }, "a stop was applied through a request (seed \(seed))")
        #expect(stopRows.count >= tally.changedStops, "\(stopRows.count) stop rows for \(tally.changedStops) stops (seed \(seed))")
        for row in log where row.action == "change.open" {
            let operation = row.after?["operation"] as? String ?? "?"
            #expect(widenings.contains(operation), "seq \(row.seq) opened a request for \(operation) (seed \(seed))")
        }
    }
}
