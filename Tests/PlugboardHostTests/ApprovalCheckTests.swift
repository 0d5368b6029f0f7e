import Crypto
import Foundation
import PlugboardHost
import PlugboardModel
import PlugboardTestSupport
import PlugboardVersioning
import Testing

/// The check a host makes of a plug-in's signed approvals before it loads it (``ApprovalCheck``), and the resolver's
/// `unapproved` skip.
@Suite("signed approvals, checked by the host", .timeLimit(.hangGuard))
struct ApprovalCheckTests {
    static let pay = "com.example.pay"
    static let bob = Curve25519.Signing.PrivateKey()
    static let carol = Curve25519.Signing.PrivateKey()
    static let mallory = Curve25519.Signing.PrivateKey()

    static func publicKey(_ key: Curve25519.Signing.PrivateKey) -> String { key.publicKey.rawRepresentation.base64EncodedString() }
    static func keyID(_ key: Curve25519.Signing.PrivateKey) -> String { SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation) }

    static func body(_ id: String = pay, env: String = "production") -> String { #"{"env":"\#(env)","id":"\#(id)"}"# }

    /// Signatures by `keys` over the change `operation` + `body`, of request 7 opened at audit row 40 (or at `signedMoment`).
    static func enablement(
        _ keys: [Curve25519.Signing.PrivateKey], operation: String = "plugin.enable", body: String = body(), signedBody: String? = nil,
        signedMoment: ApprovalMoment? = ApprovalMoment(changeID: 7, openedSeq: 40)
    ) throws -> EnablementApproval {
        let digest = ApprovalStatement.changeDigest(operation: operation, body: signedBody ?? body)
        return EnablementApproval(
            changeID: 7, openedSeq: 40, operation: operation, body: body,
            signatures: try keys.map {
                ApproverSignature(keyID: keyID($0), signature: try ApprovalStatement.sign(digest: digest, moment: signedMoment, with: $0))
            })
    }

    /// The board's evidence: `approvers` by principal, `required` by its policy, and pay's enablement.
    static func evidence(required: Int, approvers: [String: Curve25519.Signing.PrivateKey], _ enablement: EnablementApproval?)
        -> ApprovalEvidence
    {
        ApprovalEvidence(
            required: required,
            approvers: Dictionary(
                uniqueKeysWithValues: approvers.map {
                    (keyID($0.value), ApprovalEvidence.Key(publicKey: publicKey($0.value), principal: $0.key))
                }
            ),
            enablements: enablement.map { [pay: $0] } ?? [:])
    }

    static func problem(_ evidence: ApprovalEvidence?, anchor: ApprovalAnchor? = nil) -> String? {
        ApprovalCheck.problem(pluginID: pay, environment: "production", evidence: evidence, anchor: anchor)
    }

    @Test func twoValidSignaturesByTwoApproversPass() throws {
        #expect(
            Self.problem(
                Self.evidence(required: 2, approvers: ["bob": Self.bob, "carol": Self.carol], try Self.enablement([Self.bob, Self.carol])))
                == nil)
    }

    @Test func nothingIsCheckedWhereNothingIsRequired() {
        #expect(Self.problem(nil) == nil)
        #expect(Self.problem(Self.evidence(required: 0, approvers: [:], nil)) == nil)
    }

    @Test func anEnablementWithoutSignaturesIsRefused() throws {
        let problem = try #require(Self.problem(Self.evidence(required: 2, approvers: ["bob": Self.bob, "carol": Self.carol], nil)))
        #expect(
            problem.contains("was enabled in production without signed approvals; production requires 2 signed approvals"), "\(problem)")
    }

    @Test func onePrincipalCountsOnceAndUnregisteredKeysNotAtAll() throws {
        let second = Curve25519.Signing.PrivateKey()
        let twoOfBobs = Self.evidence(required: 2, approvers: ["bob": Self.bob], try Self.enablement([Self.bob, second]))
        var approvers = twoOfBobs.approvers
        approvers[Self.keyID(second)] = ApprovalEvidence.Key(publicKey: Self.publicKey(second), principal: "bob")
        let problem = try #require(
            Self.problem(ApprovalEvidence(required: 2, approvers: approvers, enablements: twoOfBobs.enablements)))
        #expect(problem.contains("carries 1 valid signed approval;"), "\(problem)")
        // Carol's key is not registered (or was revoked: the board sends only unrevoked keys).
        let unregistered = Self.evidence(required: 2, approvers: ["bob": Self.bob], try Self.enablement([Self.bob, Self.carol]))
        #expect(Self.problem(unregistered)?.contains("carries 1 valid") == true)
    }

    @Test func signaturesOverAnotherChangeDoNotCount() throws {
        let approvers = ["bob": Self.bob, "carol": Self.carol]
        // Signatures made for enabling another plug-in, carried with that change's body: the body is not this enablement.
        let other = try Self.enablement([Self.bob, Self.carol], body: Self.body("com.example.other"))
        #expect(Self.problem(Self.evidence(required: 2, approvers: approvers, other))?.contains("are for another change") == true)
        // …or with this plug-in's body: the recomputed digest is not the one signed.
        let swapped = try Self.enablement([Self.bob, Self.carol], signedBody: Self.body("com.example.other"))
        #expect(Self.problem(Self.evidence(required: 2, approvers: approvers, swapped))?.contains("carries 0 valid") == true)
        // Another environment, another operation.
        let staging = try Self.enablement([Self.bob, Self.carol], body: Self.body(env: "staging"))
        #expect(Self.problem(Self.evidence(required: 2, approvers: approvers, staging))?.contains("another change") == true)
        let pin = try Self.enablement([Self.bob, Self.carol], operation: "plugin.pin")
        #expect(Self.problem(Self.evidence(required: 2, approvers: approvers, pin))?.contains("another change") == true)
        // An altered signature.
        let good = try Self.enablement([Self.bob, Self.carol])
        let altered = EnablementApproval(
            changeID: 7, openedSeq: 40, operation: good.operation, body: good.body,
            signatures: [good.signatures[0], ApproverSignature(keyID: good.signatures[1].keyID, signature: good.signatures[0].signature)])
        #expect(Self.problem(Self.evidence(required: 2, approvers: approvers, altered))?.contains("carries 1 valid") == true)
    }

    /// Signatures kept from one request (the same change, approved before a disable) count for no other request: what an
    /// approver signs binds the request's number and the moment it was opened.
    @Test func aSignatureForOneRequestCountsForNoOther() throws {
        let approvers = ["bob": Self.bob, "carol": Self.carol]
        let anchor = try ApprovalAnchor(publicKeys: [Self.publicKey(Self.bob), Self.publicKey(Self.carol)], required: 2)
        for moment in [
            ApprovalMoment(changeID: 3, openedSeq: 12), ApprovalMoment(changeID: 7, openedSeq: 12),
            ApprovalMoment(changeID: 3, openedSeq: 40),
        ] {
            let kept = try Self.enablement([Self.bob, Self.carol], signedMoment: moment)
            #expect(Self.problem(Self.evidence(required: 2, approvers: approvers, kept))?.contains("carries 0 valid") == true, "\(moment)")
            #expect(Self.problem(Self.evidence(required: 2, approvers: approvers, kept), anchor: anchor) != nil, "\(moment)")
        }
        // Signed without a moment (a request from before the board recorded one): not the enablement of request 7 at 40.
        let unbound = try Self.enablement([Self.bob, Self.carol], signedMoment: nil)
        #expect(Self.problem(Self.evidence(required: 2, approvers: approvers, unbound), anchor: anchor) != nil)
        #expect(
            Self.problem(Self.evidence(required: 2, approvers: approvers, try Self.enablement([Self.bob, Self.carol])), anchor: anchor)
                == nil)
    }

    @Test func aPinnedAnchorCountsOnlyItsKeysAndCannotBeLowered() throws {
        let anchor = try ApprovalAnchor(publicKeys: [Self.publicKey(Self.bob), Self.publicKey(Self.carol)], required: 2)
        // A writer registered two keys of their own, signed with both, and lowered the policy to 1: the anchor holds.
        let forged = Self.evidence(
            required: 1, approvers: ["mallory": Self.mallory, "bob": Self.bob], try Self.enablement([Self.mallory, Self.bob]))
        #expect(Self.problem(forged) == nil, "without an anchor, the board's approvers and policy decide")
        let problem = try #require(Self.problem(forged, anchor: anchor))
        #expect(
            problem.contains("carries 1 valid signed approval; production requires 2 signed approvals by approver keys this host trusts"))
        // The policy turned off and the evidence gone: still required.
        #expect(Self.problem(nil, anchor: anchor)?.contains("without signed approvals") == true)
        // The real approvers' signatures pass, even where the board no longer lists their keys.
        #expect(
            Self.problem(Self.evidence(required: 0, approvers: [:], try Self.enablement([Self.bob, Self.carol])), anchor: anchor) == nil)
        // The board may ask for more than the anchor.
        let one = try ApprovalAnchor(publicKeys: [Self.publicKey(Self.bob), Self.publicKey(Self.carol)], required: 1)
        #expect(Self.problem(Self.evidence(required: 2, approvers: [:], try Self.enablement([Self.bob])), anchor: one) != nil)
    }

    @Test func anAnchorIsCheckedWhenMade() {
        #expect(throws: BoardError.self) { try ApprovalAnchor(publicKeys: [Self.publicKey(Self.bob)], required: 2) }
        #expect(throws: BoardError.self) { try ApprovalAnchor(publicKeys: [Self.publicKey(Self.bob)], required: 0) }
        #expect(throws: BoardError.self) { try ApprovalAnchor(publicKeys: ["not a key"], required: 1) }
        // The same key twice is one key.
        #expect(throws: BoardError.self) {
            try ApprovalAnchor(publicKeys: [Self.publicKey(Self.bob), Self.publicKey(Self.bob)], required: 2)
        }
    }

    @Test func theResolverSkipsAnUnapprovedPlugin() throws {
        let version = RegistrySnapshot.Version(
            version: "1.0.0", hostRange: nil, dependencies: [:], gate: nil, entry: nil, capabilities: [], artifactSHA256: nil,
            yanked: false,
            killed: false)
        let plugins = [
            Self.pay: RegistrySnapshot.Plugin(
                id: Self.pay, enabled: true, pinnedVersion: nil, killed: false, killReason: nil, versions: [version])
        ]
        let snapshot = RegistrySnapshot(
            environment: "production", allKilled: false, allKilledReason: nil, plugins: plugins, signaturePolicy: .off,
            version: BoardVersion(dataVersion: 1, ownChanges: 0),
            approvals: Self.evidence(required: 2, approvers: ["bob": Self.bob, "carol": Self.carol], nil))
        let resolver = try Resolver(hostVersion: SemanticVersion("2.0.0"), gate: { _ in true }, availability: { _, _ in nil })
        let skip = try #require(resolver.resolve(snapshot).decision(for: Self.pay)?.skip)
        #expect(skip.code == .unapproved)
        #expect(skip.message.contains("without signed approvals"))
        // The snapshot without evidence encodes as before it.
        let plain = RegistrySnapshot(
            environment: "production", allKilled: false, allKilledReason: nil, plugins: plugins, signaturePolicy: .off,
            version: BoardVersion(dataVersion: 1, ownChanges: 0))
        #expect(!String(decoding: try JSONEncoder().encode(plain), as: UTF8.self).contains("approvals"))
        #expect(resolver.resolve(plain).decision(for: Self.pay)?.skip == nil)
    }
}
