import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import PlugboardVersioning
import Testing

/// Roles, signature trust and tokens as operations: their wire, their refusals and the text the CLI prints.
@Suite("operations: roles, trust and tokens", .timeLimit(.hangGuard))
struct RoleTrustTokenOperationTests {
    static let id = try! PluginID(validating: "com.example.alpha")
    static let key = "OlFqrG6X0nZE2uIAEFKKENKnIvdROIUrUXGeFvbz6vM="

    @Test func everyRoleTrustAndTokenOperationRoundTripsThroughTheWire() throws {
        let alice = try PersonPrincipal(validating: "alice")
        let laptop = try TokenName(validating: "laptop")
        let reason = try Reason(validating: "left the team")
        let operations: [any ParsedOperation] = [
            RoleOperations.AddAdmin(principal: alice), RoleOperations.RemoveAdmin(principal: try PrincipalName(validating: "alice")),
            RoleOperations.ListAdmins(), RoleOperations.AddOwner(id: Self.id, principal: alice, role: .maintainer),
            RoleOperations.RemoveOwner(id: Self.id, principal: try PrincipalName(validating: "ci-bot@example.com")),
            RoleOperations.ListOwners(id: Self.id),
            TrustOperations.SetPolicy(signatures: .require, env: "production"), TrustOperations.ShowPolicies(),
            TrustOperations.AddSigner(id: Self.id, publicKey: Self.key, name: "Alice's laptop"),
            TrustOperations.AddSigner(id: nil, publicKey: Self.key, name: nil), TrustOperations.ListSigners(id: nil),
            TrustOperations.ListSigners(id: Self.id),
            TrustOperations.RevokeSigner(keyID: try KeyID(validating: "0123456789abcdef"), reason: reason),
            TrustOperations.AddSignature(
                id: Self.id, version: try SemanticVersion(validating: "1.0.0"), signature: "-----\nkey-id=x\n", file: "a.sig"),
            TokenOperations.CreateToken(name: laptop, env: "default", kind: .hosts, expires: "90d"), TokenOperations.ListTokens(),
            TokenOperations.RevokeToken(name: laptop, reason: nil),
            TokenOperations.CreateAccessToken(principal: alice, name: laptop, expires: nil, readOnly: true),
            TokenOperations.CreateAccessToken(principal: nil, name: laptop, expires: "2027-01-31", readOnly: false),
            TokenOperations.CreateAccessToken(principal: nil, name: laptop, expires: nil, readOnly: false, scope: .stop),
            TokenOperations.ListAccessTokens(principal: nil),
            TokenOperations.RevokeAccessToken(name: laptop, principal: try PrincipalName(validating: "alice"), reason: reason),
        ]
        for operation in operations { try roundTrip(operation) }
    }

    /// Encodes, decodes as the server does, and encodes again: the same JSON both times.
    func roundTrip<Op: ParsedOperation>(_ operation: Op) throws {
        let body = try operation.wireBody()
        let decoded = try Op.fromWire(body)
        #expect(try decoded.wireBody() == body, "\(Op.name): \(String(decoding: body, as: UTF8.self))")
    }

    @Test func theWireCarriesTheFieldsByTheirNames() throws {
        func json(_ operation: some ParsedOperation) throws -> String { String(decoding: try operation.wireBody(), as: UTF8.self) }
        #expect(try json(RoleOperations.AddAdmin(principal: PersonPrincipal(validating: "alice"))) == #"{"principal":"alice"}"#)
        #expect(
            try json(RoleOperations.AddOwner(id: Self.id, principal: PersonPrincipal(validating: "bob"), role: .maintainer))
                == #"{"id":"com.example.alpha","principal":"bob","role":"maintainer"}"#)
        #expect(
            try json(TrustOperations.SetPolicy(signatures: .warn, env: "staging")) == #"{"env":"staging","signatures":"warn"}"#)
        #expect(
            try json(TrustOperations.RevokeSigner(keyID: KeyID(validating: "0123456789abcdef"), reason: Reason(validating: "lost")))
                == #"{"key_id":"0123456789abcdef","reason":"lost"}"#)
        #expect(
            try json(TokenOperations.CreateToken(name: TokenName(validating: "svc"), env: "default", kind: .hosts, expires: nil))
                == #"{"env":"default","kind":"hosts","name":"svc"}"#)
        #expect(
            try json(TokenOperations.CreateAccessToken(principal: nil, name: TokenName(validating: "ci"), expires: nil, readOnly: true))
                == #"{"name":"ci","read_only":true,"scope":"all"}"#)
        #expect(
            try json(
                TokenOperations.CreateAccessToken(
                    principal: nil, name: TokenName(validating: "am"), expires: nil, readOnly: false, scope: .stop))
                == #"{"name":"am","read_only":false,"scope":"stop"}"#)
        let all = try TrustOperations.AddSigner.fromWire(Data(#"{"all":true,"id_and_key":["\#(Self.key)"]}"#.utf8))
        #expect(all.all && all.idAndKey == [Self.key])
    }

    @Test func theServerRefusesMalformedFieldsWithTheCLIsSentences() {
        func refusal<Op: ParsedOperation>(_ type: Op.Type, _ json: String) -> String? {
            do {
                _ = try Op.fromWire(Data(json.utf8))
                return nil
            } catch { return error.code == .invalidInput ? error.message : "wrong code: \(error)" }
        }
        #expect(refusal(RoleOperations.AddAdmin.self, #"{"principal":"plugboard/rollout-guard"}"#)?.contains("is reserved") == true)
        #expect(
            refusal(RoleOperations.AddAdmin.self, #"{"principal":"mallory","admin":true}"#)?.hasPrefix("admin.add takes no field 'admin'")
                == true)
        #expect(
            refusal(RoleOperations.RemoveAdmin.self, #"{"principal":"bad name"}"#)?.contains("principal 'bad name' is not valid") == true)
        #expect(refusal(RoleOperations.AddOwner.self, #"{"id":"com.example.alpha","principal":"bob","role":"boss"}"#) != nil)
        #expect(refusal(TrustOperations.SetPolicy.self, #"{"env":"default","signatures":"maybe"}"#) != nil)
        #expect(
            refusal(TrustOperations.AddSigner.self, #"{"id_and_key":["\#(Self.key)"]}"#)
                == "give a plug-in id and a public key, or --all and a public key")
        #expect(refusal(TrustOperations.AddSigner.self, #"{"id_and_key":["BAD","\#(Self.key)"]}"#)?.contains("plug-in id 'BAD'") == true)
        #expect(refusal(TrustOperations.RevokeSigner.self, #"{"key_id":"nothex","reason":"x"}"#)?.contains("is not a key id") == true)
        #expect(refusal(TokenOperations.RevokeToken.self, #"{"name":"x y"}"#)?.contains("token name 'x y' is not valid") == true)
        #expect(refusal(TokenOperations.CreateToken.self, #"{"env":"default","name":"svc","kind":"both"}"#) != nil)
    }

    @Test func removalsAndRevocationsAreStopsAndReadsAreReads() {
        let stops: [any ParsedOperation.Type] = [
            RoleOperations.RemoveAdmin.self, RoleOperations.RemoveOwner.self, TrustOperations.RevokeSigner.self,
            TokenOperations.RevokeToken.self, TokenOperations.RevokeAccessToken.self,
        ]
        #expect(stops.allSatisfy { $0.access == .stop })
        let reads: [any ParsedOperation.Type] = [
            RoleOperations.ListAdmins.self, RoleOperations.ListOwners.self, TrustOperations.ShowPolicies.self,
            TrustOperations.ListSigners.self, TokenOperations.ListTokens.self, TokenOperations.ListAccessTokens.self,
        ]
        #expect(reads.allSatisfy { $0.access == .read })
        #expect(RoleOperations.AddAdmin.access == .write && TokenOperations.CreateAccessToken.access == .write)
    }

    @Test func aListsTextIsItsTableOrASentenceThatNamesWhatWasAsked() throws {
        #expect(TrustOperations.ListSigners(id: Self.id).text(for: [])?.hasPrefix("No key is trusted to sign com.example.alpha;") == true)
        #expect(TrustOperations.ListSigners(id: nil).text(for: [])?.hasPrefix("No key is trusted yet;") == true)
        #expect(RoleOperations.ListAdmins().text(for: []) == "No admins.")
        let admins = try OperationJSON.decoder().decode(
            [BoardAdmin].self, from: Data(#"[{"principal":"root","added_at":"2026-01-01T00:00:00.000Z","added_by":"evil\u001b[2J"}]"#.utf8))
        #expect(
            RoleOperations.ListAdmins().text(for: admins)
                == "PRINCIPAL  ADDED AT                  ADDED BY\nroot       2026-01-01T00:00:00.000Z  evil\\u{1b}[2J")
    }
}
