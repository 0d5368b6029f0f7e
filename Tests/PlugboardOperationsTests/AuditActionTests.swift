import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import Testing

/// Every declared operation and the audit rows its store path writes: the row's action is the declaration's
/// (``OperationDeclaration/action``), whether the change is made or refused.
@Suite("operations: the audit action of every declared operation", .timeLimit(.hangGuard))
struct AuditActionTests {
    static let admin = try! Principal(osUser: "alice")
    static let stranger = try! Principal(osUser: "mallory")
    static let alpha = "com.example.alpha"
    static let publicKey = Data(repeating: 7, count: 32).base64EncodedString()

    /// A board with alpha 1.0.0 and 1.1.0 registered, the flag `checkout` and the group `ops`.
    static func board() throws -> Board {
        let board = try Board.inMemory(by: admin)
        for version in ["1.0.0", "1.1.0"] {
            let text = #"{"id":"\#(alpha)","name":"Alpha","version":"\#(version)"}"#
            _ = try PluginOperations.Register(manifest: .init(file: "alpha.json", text: text)).perform(on: board, as: admin)
        }
        try perform(FlagOperations.Create.self, ["name": "checkout"], on: board, as: admin)
        try perform(RoleOperations.AddGroupMember.self, ["group": "ops", "principal": "bob"], on: board, as: admin)
        return board
    }

    /// An OSV advisory of the plug-in alpha.
    static let advisory = """
        {"id":"PBSA-2026-0001","modified":"2026-11-20T10:00:00Z","affected":[{"package":{"ecosystem":"Plugboard",\
        "name":"\(alpha)"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.1.0"}]}]}]}
        """

    /// A sample for each field, by name: values the scratch board knows.
    static func body(_ type: any OperationRequest.Type, _ overrides: [String: Any] = [:]) -> [String: Any] {
        let samples: [String: Any] = [
            "id": type.name.hasPrefix("change.") ? 1 : alpha, "version": "1.0.0", "env": "production", "reason": "a test",
            "name": "checkout", "principal": "bob", "group": "ops", "host": "host-1", "steps": "10,50,100", "every": "1h",
            "key": "api", "plugin": alpha, "value_base64": "YQ==", "key_id": "0123456789abcdef", "public_key": publicKey,
            "signature": "e30=", "file": "signature.json",
            "features": #"{"version":2,"features":[{"name":"imported","type":"release","enabled":true,"strategies":[]}]}"#, "percent": 50,
            "role": "owner", "kind": "sdk", "approvals": 1, "signatures": "warn", "id_and_key": [alpha, publicKey],
            "issuer": "https://login.example.com", "subject": "00u1abcd", "url": "https://hooks.example.com/ops", "from": 1,
            "action": "stop",
        ]
        var body: [String: Any] = [:]
        for parameter in type.parameters where parameter.required || samples[parameter.name] != nil {
            body[parameter.name] = samples[parameter.name]
        }
        if type.name == AdvisoryFeedOperations.Subscribe.name {
            body["key"] = [publicKey]
            body["url"] = "https://advisories.example.com/feed.json"
        }
        if type.name == AdvisoryOperations.Import.name {
            body["document"] = [advisory]
            body["file"] = ["advisory.json"]
        }
        return body.merging(overrides) { _, override in override }
    }

    /// Submits the operation `type` whose JSON body is `body` as the CLI does (a change request where the environment is
    /// protected); answers the reply's JSON object (empty for a request or a listing).
    @discardableResult
    static func perform<R: OperationRequest>(_ type: R.Type, _ body: [String: Any], on board: Board, as actor: Principal) throws
        -> [String: Any]
    {
        let request = try R.fromWire(try JSONSerialization.data(withJSONObject: body))
        guard case .performed(let reply) = try request.submit(on: board, as: actor) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: R.encodeResponse(reply.value))) as? [String: Any] ?? [:]
    }

    /// The rows written after `seq`.
    static func rows(after seq: Int64, on board: Board) throws -> [AuditRecord] {
        try BoardOperations.Audit(since: nil, actor: nil, target: nil, limit: nil, after: seq).perform(on: board, as: admin).value.records
    }

    /// The newest row's seq (0 for none).
    static func head(_ board: Board) throws -> Int64 {
        try BoardOperations.Audit(since: nil, actor: nil, target: nil, limit: 1, after: nil).perform(on: board, as: admin).value.records
            .last?.seq ?? 0
    }

    /// Every operation that changes the board, refused to a principal with no role: the refusal's row names the
    /// operation's action.
    @Test func aRefusedChangeWritesTheDeclaredAction() throws {
        let board = try Self.board()
        var checked = 0
        // Refused before any right is checked, so with no row (the change walk below writes theirs): input a scratch
        // board cannot accept, a request that does not exist, secure storage this board lacks; and what anyone may run.
        let before: Set<String> = [
            "plugin.register", "plugin.add-signature", "flag.create", "policy.set", "secret.set", "secret.delete", "change.approve",
            "change.apply", "change.schedule", "rollout.tick", "change.apply-due", "webhook.add", "webhook.rotate-secret",
        ]
        for type in OperationsAPI.requests where type.declaration.access != .read && !before.contains(type.name) {
            let before = try Self.head(board)
            do {
                try Self.perform(type, Self.body(type), on: board, as: Self.stranger)
                Issue.record("\(type.name) was not refused to a principal with no role")
            } catch {}
            let written = try Self.rows(after: before, on: board)
            #expect(
                written.map(\.action) == [type.declaration.action.name] && written.allSatisfy { $0.outcome == "refused" },
                "\(type.name): \(written.map { "\($0.action) \($0.outcome)" })")
            checked += 1
        }
        #expect(checked > 35)
    }

    /// Every action the operations declare is a word of the vocabulary, and each operation's name is its action's,
    /// but where its rows keep an older word (listed here, so that a new one is a decision).
    @Test func everyDeclarationNamesItsOwnAction() {
        let kept = ["plugin.add-signature": "plugin.sign"]
        for type in OperationsAPI.requests {
            #expect(AuditAction(stored: type.declaration.action.name) == type.declaration.action, "\(type.name)")
            #expect(type.declaration.action.name == (kept[type.name] ?? type.name), "\(type.name)")
        }
    }

    /// Every operation that changes the board, made by an admin in turn on a scratch board: the rows it writes include
    /// one of its declared action, and no row of another operation's action (but an environment's creation on first use).
    @Test func aChangeWritesTheDeclaredAction() throws {
        let board = try Self.board()
        let bob = try Principal(osUser: "bob")
        _ = try Self.perform(RoleOperations.AddAdmin.self, ["principal": "bob"], on: board, as: Self.admin)
        var done: Set<String> = []
        func step<R: OperationRequest>(
            _ type: R.Type, _ overrides: [String: Any] = [:], as actor: Principal? = nil, writes: [String] = [], orNone: Bool = false
        ) throws -> [String: Any] {
            let before = try Self.head(board)
            let answer = try Self.perform(type, Self.body(type, overrides), on: board, as: actor ?? Self.admin)
            let actions = try Self.rows(after: before, on: board).map(\.action)
            #expect(
                (actions.contains(type.declaration.action.name) || (orNone && actions.isEmpty))
                    && Set(actions).isSubset(of: Set([type.declaration.action.name, AuditAction.environmentCreate.name] + writes)),
                "\(type.name): \(actions)")
            done.insert(type.name)
            return answer
        }
        let staging: [String: Any] = ["env": "staging"]
        _ = try step(PluginOperations.Enable.self, staging)
        _ = try step(PluginOperations.Disable.self, staging)
        _ = try step(PluginOperations.Pin.self, staging)
        _ = try step(PluginOperations.Unpin.self, staging)
        _ = try step(PluginOperations.Kill.self)
        _ = try step(PluginOperations.Revive.self)
        _ = try step(PluginOperations.Yank.self)
        _ = try step(PluginOperations.Unyank.self)
        _ = try step(RoleOperations.AddOwner.self)
        _ = try step(RoleOperations.RemoveOwner.self)
        _ = try step(RoleOperations.AddAdmin.self, ["principal": "carol"])
        _ = try step(RoleOperations.RemoveAdmin.self, ["principal": "carol"])
        _ = try step(RoleOperations.AddGroupMember.self, ["group": "ops2"])
        _ = try step(RoleOperations.RemoveGroupMember.self, ["group": "ops2"])
        _ = try step(FlagOperations.Create.self, ["name": "new-flag"])
        _ = try step(FlagOperations.Enable.self, staging)
        _ = try step(FlagOperations.Disable.self, staging)
        _ = try step(FlagOperations.Rollout.self, staging)
        _ = try step(FlagOperations.Archive.self)
        _ = try step(FlagOperations.Unarchive.self)
        _ = try step(FlagOperations.Import.self, staging)
        _ = try step(TrustOperations.SetPolicy.self, ["env": "staging", "signatures": "warn", "approvals": NSNull()])
        _ = try step(TokenOperations.CreateToken.self, ["name": "t1", "env": "staging"])
        _ = try step(TokenOperations.RevokeToken.self, ["name": "t1"])
        _ = try step(TokenOperations.CreateAccessToken.self, ["name": "a1"])
        _ = try step(TokenOperations.RevokeAccessToken.self, ["name": "a1"])
        _ = try step(RolloutOperations.Start.self, ["env": "staging", "version": "1.1.0"])
        _ = try step(RolloutOperations.Pause.self, staging)
        _ = try step(RolloutOperations.Resume.self, staging)
        _ = try step(RolloutOperations.Step.self, staging, writes: [AuditAction.rolloutStep.name])
        _ = try step(RolloutOperations.Abort.self, staging)
        // What is due runs as the rows of its own action (none here: nothing is due).
        _ = try step(RolloutOperations.Tick.self, writes: [AuditAction.rolloutStep.name, AuditAction.rolloutAbort.name], orNone: true)
        let keyID = SigningKeys.keyID(publicKey: Data(repeating: 7, count: 32))
        _ = try step(TrustOperations.AddSigner.self)
        _ = try step(TrustOperations.RevokeSigner.self, ["key_id": keyID])
        _ = try step(ApproverOperations.AddApprover.self)
        _ = try step(ApproverOperations.RevokeApprover.self, ["key_id": keyID])
        _ = try step(IdentityOperations.Link.self)
        _ = try step(IdentityOperations.Unlink.self)
        _ = try step(AdvisoryFeedOperations.Subscribe.self)
        _ = try step(AdvisoryFeedOperations.Unsubscribe.self)
        _ = try step(IdentityOperations.MapGroup.self, ["group": "release-managers"])
        _ = try step(IdentityOperations.UnmapGroup.self, ["group": "release-managers"])
        // An endpoint made in the store (adding one through its operation seals a secret: secure storage).
        let endpoint = NewWebhook(
            name: "ops", url: "https://hooks.example.com/ops", events: "*", environment: nil, format: .standard, sealedSecret: Data([1]),
            signingKey: WebhookSigningKey(publicKey: "cA==", sealedPrivateKey: Data([1])))
        _ = try board.addWebhook(endpoint, by: Self.admin)
        let ops: [String: Any] = ["name": "ops"]
        _ = try step(WebhookOperations.Disable.self, ops)
        _ = try step(WebhookOperations.Enable.self, ops)
        _ = try step(WebhookOperations.Replay.self, ops)
        _ = try step(WebhookOperations.Test.self, ops)
        _ = try step(WebhookOperations.Remove.self, ops)
        _ = try step(AdvisoryOperations.Import.self)
        _ = try step(AdvisoryOperations.SetAction.self, ["id": "PBSA-2026-0001", "env": "staging"])
        _ = try step(AdvisoryOperations.Withdraw.self, ["id": "PBSA-2026-0001"])

        // Change requests: production needs one approval; alice asks, bob approves (which applies it), and so on.
        _ = try step(TrustOperations.SetPolicy.self, ["env": "production", "approvals": 1, "signatures": NSNull()])
        let asked = try Self.perform(PluginOperations.Enable.self, ["id": Self.alpha, "env": "production"], on: board, as: Self.admin)
        #expect(asked.isEmpty)
        _ = try step(ChangeOperations.Approve.self, ["id": 1], as: bob, writes: ["plugin.enable", "change.apply"])
        func ask(_ version: String) throws {
            try Self.perform(
                PluginOperations.Pin.self, ["id": Self.alpha, "version": version, "env": "production"], on: board, as: Self.admin)
        }
        try ask("1.1.0")
        _ = try step(ChangeOperations.Reject.self, ["id": 2], as: bob)
        try ask("1.1.0")
        _ = try step(ChangeOperations.Schedule.self, ["id": 3, "at": "2020-01-01T00:00:00Z"])
        try ask("1.0.0")
        _ = try step(ChangeOperations.Cancel.self, ["id": 4])
        _ = try step(ChangeOperations.Approve.self, ["id": 3], as: bob, writes: ["plugin.pin", "change.apply"])
        // An emergency, acknowledged by another admin.
        try Self.perform(PluginOperations.Disable.self, ["id": Self.alpha, "env": "production"], on: board, as: Self.admin)
        let emergency = PluginOperations.Enable(id: try PluginID(validating: Self.alpha), env: "production")
        let submitted = try emergency.submit(on: board, as: Self.admin, options: ChangeOptions(emergencyReason: "INC-1"))
        guard case .requested(let reply) = submitted else {
            Issue.record("an emergency in a protected environment was not a request")
            return
        }
        _ = try step(ChangeOperations.Acknowledge.self, ["id": reply.value.request.id], as: bob)
        // A registration.
        let before = try Self.head(board)
        let text = #"{"id":"\#(Self.alpha)","name":"Alpha","version":"1.2.0"}"#
        _ = try PluginOperations.Register(manifest: .init(file: "alpha.json", text: text)).perform(on: board, as: Self.admin)
        #expect(try Self.rows(after: before, on: board).map(\.action) == [PluginOperations.Register.declaration.action.name])
        done.insert(PluginOperations.Register.name)

        // Not walked here, each for its reason: what needs secure storage (a secret, an endpoint's secret), a signed release, a host's quarantine or a
        // due schedule, and the apply of an approved request (the approvals above applied theirs, as `change.apply`).
        let notWalked: Set<String> = [
            "secret.set", "secret.delete", "plugin.add-signature", "host.release-quarantine", "change.apply-due", "change.apply",
            "webhook.add", "webhook.rotate-secret",
        ]
        let writes = Set(OperationsAPI.requests.filter { $0.declaration.access != .read }.map { $0.name })
        #expect(writes.subtracting(done) == notWalked, "\(writes.subtracting(done).sorted())")
    }
}
