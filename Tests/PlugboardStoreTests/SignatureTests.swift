import Crypto
import Foundation
import GRDB
import PlugboardModel
import PlugboardTestSupport
import PlugboardVersioning
import Testing

@testable import PlugboardStore

/// Signed releases in the store: what a signature covers, who may trust keys, revocation, the policy per
/// environment, and that every row of it is audited and proven.
@Suite("store: signed releases", .timeLimit(.hangGuard))
struct SignatureTests {
    static let admin = try! Principal(osUser: "alice")
    static let owner = try! Principal(osUser: "olga")
    static let stranger = try! Principal(osUser: "mallory")
    static let artifact = String(repeating: "ab", count: 32)

    static func manifest(_ id: String = "com.example.a", _ version: String = "1.0.0") throws -> PluginManifest {
        try PluginManifest.parse(Data(#"{"id":"\#(id)","name":"\#(id)","version":"\#(version)"}"#.utf8))
    }

    static func signature(_ manifest: PluginManifest, _ key: Curve25519.Signing.PrivateKey, artifact: String? = nil) throws
        -> ReleaseSignature
    {
        try ReleaseSignature.sign(ReleaseStatement(manifest: manifest, artifactSHA256: artifact), with: key)
    }

    static func publicKey(_ key: Curve25519.Signing.PrivateKey) -> String { key.publicKey.rawRepresentation.base64EncodedString() }

    static func auditCount(_ board: Board) throws -> Int { try board.auditRecords(AuditQuery()).count }

    /// A board with com.example.a@1.0.0 signed by a new key (trusted for it when `trust`), and the policy of
    /// `default` set when given.
    static func signedBoard(trust: Bool = true, policy: SignaturePolicy? = nil) throws -> (
        board: Board, key: Curve25519.Signing.PrivateKey, keyID: String
    ) {
        let board = try Board.inMemory(by: Self.admin)
        let key = Curve25519.Signing.PrivateKey()
        let manifest = try Self.manifest()
        _ = try board.register(manifest, signatures: [try Self.signature(manifest, key)], by: Self.admin)
        if trust { _ = try board.addSigner(pluginID: "com.example.a", publicKey: Self.publicKey(key), by: Self.admin) }
        if let policy { _ = try board.setSignaturePolicy(policy, environment: "default", by: Self.admin) }
        return (board, key, SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation))
    }

    @Test func aSignedReleaseIsValidOnceItsKeyIsTrusted() throws {
        let board = try Board.inMemory(by: Self.admin)
        let key = Curve25519.Signing.PrivateKey()
        let manifest = try Self.manifest()
        let registered = try board.register(manifest, signatures: [try Self.signature(manifest, key)], by: Self.admin)
        #expect(registered.notes.first?.contains("not trusted for com.example.a yet") == true, "\(registered)")
        #expect(try board.signatureVerdict(pluginID: "com.example.a", version: "1.0.0")?.state == .untrusted)

        #expect(try board.addSigner(pluginID: "com.example.a", publicKey: Self.publicKey(key), name: "Team A", by: Self.admin).changed)
        let verdict = try #require(try board.signatureVerdict(pluginID: "com.example.a", version: "1.0.0"))
        #expect(verdict.state == .valid)
        #expect(verdict.keyIDs == [SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation)])
        #expect(try board.pluginDetail("com.example.a").versions.first?.signature.state == .valid)
        // Adding the same trust again changes nothing.
        #expect(!(try board.addSigner(pluginID: "com.example.a", publicKey: Self.publicKey(key), by: Self.admin).changed))
        let actions = try board.auditRecords(AuditQuery()).map(\.action)
        #expect(actions.contains("plugin.sign") && actions.contains("signer.add"))
    }

    @Test func migration0007AddsEmptyTablesOfPolicyWithoutANewBaseline() throws {
        let board = try Board.inMemory(by: Self.admin)
        let records = try board.auditRecords(AuditQuery())
        #expect(records.filter { $0.action == "board.baseline" }.map(\.targetID) == ["0006_state_proof.sql"])
        let migrated = try #require(records.first { $0.targetID == "0007_signatures.sql" })
        #expect(migrated.stateChanges?.contains("schema_migrations\t[7]") == true, "\(migrated.stateChanges ?? "none")")
        #expect(try board.verifyAudit().ok)
    }

    @Test func theKeyIDIsTheStartOfTheSHA256OfThePublicKey() throws {
        let key = Curve25519.Signing.PrivateKey()
        let id = SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation)
        #expect(id.count == 16 && id == String(SHA256.hash(data: key.publicKey.rawRepresentation).hex.prefix(16)))
        #expect(throws: BoardError.self) { try SigningKeys.validateKeyID("XYZ") }
        #expect(throws: BoardError.self) { try SigningKeys.publicKey(base64: "bm90IGEga2V5") }
    }

    @Test func theStatementIsCanonicalAndParsesBack() throws {
        let statement = ReleaseStatement(
            pluginID: "com.example.a", version: "1.0.0+build.7", manifestSHA256: Self.artifact, artifactSHA256: nil)
        #expect(statement.text.hasPrefix("plugboard-release-v1\nid=com.example.a\nversion=1.0.0+build.7\n"))
        #expect(statement.text.hasSuffix("artifact-sha256=none\n"))
        #expect(ReleaseStatement(text: statement.text) == statement)
        #expect(ReleaseStatement(text: statement.text.replacingOccurrences(of: "\n", with: "\r\n")) == nil)
        #expect(ReleaseStatement(text: statement.text + "extra=1\n") == nil)
    }

    @Test func aSignatureFileThatWasAlteredIsRefused() throws {
        let key = Curve25519.Signing.PrivateKey()
        let signature = try Self.signature(try Self.manifest(), key)
        #expect(try ReleaseSignature.parse(signature.fileData(), named: "a.sig") == signature)
        // The statement changed after signing.
        var text = String(decoding: signature.fileData(), as: UTF8.self)
        text = text.replacingOccurrences(of: "version=1.0.0", with: "version=9.0.0")
        #expect(throws: BoardError.self) { try ReleaseSignature.parse(Data(text.utf8), named: "a.sig") }
        // Another key's public key under the same id.
        let other = Curve25519.Signing.PrivateKey()
        let swapped = ReleaseSignature(
            keyID: signature.keyID, algorithm: "ed25519", publicKey: Self.publicKey(other), statement: signature.statement,
            signature: signature.signature)
        let error = #expect(throws: BoardError.self) {
            _ = try ReleaseSignature.parse(swapped.fileData(), named: "a.sig")
        }
        #expect(error?.message.contains("not the id of the public key") == true, "\(String(describing: error))")
        #expect(throws: BoardError.self) { try ReleaseSignature.parse(Data("{}".utf8), named: "a.sig") }
    }

    @Test func aSignatureForAnotherReleaseIsRefusedAndNothingChanges() throws {
        let board = try Board.inMemory(by: Self.admin)
        let key = Curve25519.Signing.PrivateKey()
        let v1 = try Self.manifest("com.example.a", "1.0.0")
        _ = try board.register(v1, signatures: [try Self.signature(v1, key)], by: Self.admin)
        let v11 = try Self.manifest("com.example.a", "1.1.0")
        _ = try board.register(v11, by: Self.admin)
        let before = try Self.auditCount(board)

        // Replayed onto another version.
        let error = #expect(throws: BoardError.self) {
            _ = try board.addSignature("com.example.a", version: SemanticVersion("1.1.0"), try Self.signature(v1, key), by: Self.admin)
        }
        #expect(error?.code == .invalidInput)
        #expect(error?.message.contains("covers com.example.a@1.0.0, not com.example.a@1.1.0") == true, "\(String(describing: error))")
        // Registered with a signature of another artifact.
        let v12 = try Self.manifest("com.example.a", "1.2.0")
        let artifactError = #expect(throws: BoardError.self) {
            _ = try board.register(v12, signatures: [try Self.signature(v12, key, artifact: Self.artifact)], by: Self.admin)
        }
        #expect(
            artifactError?.message.contains("covers another artifact than the one registered") == true,
            "\(String(describing: artifactError))")
        #expect(try Self.auditCount(board) == before)
        #expect(try board.pluginDetail("com.example.a").versions.map(\.version) == ["1.1.0", "1.0.0"])
        #expect(try board.signatureVerdict(pluginID: "com.example.a", version: "1.1.0")?.state == .unsigned)

        // The right signature goes on; the same one again changes nothing; another by the same key is refused.
        #expect(
            try board.addSignature("com.example.a", version: SemanticVersion("1.1.0"), try Self.signature(v11, key), by: Self.admin)
                .changed)
        #expect(
            !(try board.addSignature("com.example.a", version: SemanticVersion("1.1.0"), try Self.signature(v11, key), by: Self.admin)
                .changed))
    }

    @Test func whoMayTrustAndRevokeKeys() throws {
        let board = try Board.inMemory(by: Self.admin)
        _ = try board.register(try Self.manifest(), by: Self.owner)
        let key = Curve25519.Signing.PrivateKey()
        #expect(throws: BoardError.self) {
            try board.addSigner(pluginID: "com.example.a", publicKey: Self.publicKey(key), by: Self.stranger)
        }
        #expect(throws: BoardError.self) { try board.addSigner(pluginID: nil, publicKey: Self.publicKey(key), by: Self.owner) }
        #expect(try board.addSigner(pluginID: "com.example.a", publicKey: Self.publicKey(key), by: Self.owner).changed)
        let keyID = SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation)
        // A stranger may not revoke it; the plug-in's owner may.
        #expect(throws: BoardError.self) { try board.revokeSigner(keyID: keyID, reason: "lost", by: Self.stranger) }
        #expect(try board.revokeSigner(keyID: keyID, reason: "laptop lost", by: Self.owner).changed)
        // A key trusted for every plug-in: admins only, to add and to revoke.
        let global = Curve25519.Signing.PrivateKey()
        #expect(try board.addSigner(pluginID: nil, publicKey: Self.publicKey(global), by: Self.admin).changed)
        let globalID = SigningKeys.keyID(publicKey: global.publicKey.rawRepresentation)
        #expect(throws: BoardError.self) { try board.revokeSigner(keyID: globalID, reason: "rotated", by: Self.owner) }
        #expect(try board.signers(pluginID: "com.example.a").map(\.keyID).sorted() == [keyID, globalID].sorted())
        // Refusals are recorded as such.
        let refused = try board.auditRecords(AuditQuery()).filter { $0.outcome == "refused" }.map(\.action)
        #expect(refused.contains("signer.add") && refused.contains("signer.revoke"))
    }

    @Test func revocationCoversWhatTheKeySignedBefore() throws {
        let (board, key, keyID) = try Self.signedBoard()
        #expect(try board.signatureVerdict(pluginID: "com.example.a", version: "1.0.0")?.state == .valid)
        _ = try board.revokeSigner(keyID: keyID, reason: "key leaked (INC-9)", by: Self.admin)
        let verdict = try #require(try board.signatureVerdict(pluginID: "com.example.a", version: "1.0.0"))
        #expect(verdict.state == .revoked && verdict.message.contains("key leaked (INC-9)"), "\(verdict)")
        #expect(!(try board.revokeSigner(keyID: keyID, reason: "again", by: Self.admin).changed))
        // A revoked key cannot be trusted again.
        let error = #expect(throws: BoardError.self) {
            _ = try board.addSigner(pluginID: "com.example.a", publicKey: Self.publicKey(key), by: Self.admin)
        }
        #expect(error?.message.contains("was revoked") == true, "\(String(describing: error))")
        #expect(error?.message.contains("generate a new key") == true)
        #expect(throws: BoardError.self) { try board.revokeSigner(keyID: "0123456789abcdef", reason: "x", by: Self.admin) }
    }

    @Test func theVerdictNamesWhatIsWrong() throws {
        let key = Curve25519.Signing.PrivateKey()
        let keyID = SigningKeys.keyID(publicKey: key.publicKey.rawRepresentation)
        let trusted = SignerTrust(
            keys: [keyID: SignerTrust.TrustedKey(publicKey: Self.publicKey(key), plugins: ["com.example.a"])], revoked: [:])
        let release = ReleaseStatement(pluginID: "com.example.a", version: "1.1.0", manifestSHA256: Self.artifact, artifactSHA256: nil)
        func verdict(_ signed: ReleaseStatement, trust: SignerTrust = trusted) throws -> SignatureVerdict {
            SignatureCheck.verdict(for: release, signatures: [try ReleaseSignature.sign(signed, with: key)], trust: trust)
        }
        #expect(try verdict(release).state == .valid)
        let other = ReleaseStatement(pluginID: "com.example.a", version: "1.0.0", manifestSHA256: Self.artifact, artifactSHA256: nil)
        #expect(try verdict(other).state == .otherRelease)
        let otherManifest = ReleaseStatement(
            pluginID: "com.example.a", version: "1.1.0", manifestSHA256: String(repeating: "cd", count: 32), artifactSHA256: nil)
        #expect(try verdict(otherManifest).message.contains("manifest of com.example.a@1.1.0 was modified after signing"))
        let otherArtifact = ReleaseStatement(
            pluginID: "com.example.a", version: "1.1.0", manifestSHA256: Self.artifact, artifactSHA256: Self.artifact)
        #expect(try verdict(otherArtifact).state == .modified)
        #expect(try verdict(release, trust: .empty).state == .untrusted)
        let elsewhere = SignerTrust(
            keys: [keyID: SignerTrust.TrustedKey(publicKey: Self.publicKey(key), plugins: ["com.example.b"])], revoked: [:])
        #expect(try verdict(release, trust: elsewhere).state == .untrusted)
        let everywhere = SignerTrust(
            keys: [keyID: SignerTrust.TrustedKey(publicKey: Self.publicKey(key), plugins: [Signer.everyPlugin])], revoked: [:])
        #expect(try verdict(release, trust: everywhere).state == .valid)
        // The trusted key of that id is another key: the stored signature does not verify with it.
        let impostor = SignerTrust(
            keys: [keyID: SignerTrust.TrustedKey(publicKey: Self.publicKey(Curve25519.Signing.PrivateKey()), plugins: ["com.example.a"])],
            revoked: [:])
        #expect(try verdict(release, trust: impostor).state == .invalid)
        #expect(SignatureCheck.verdict(for: release, signatures: [], trust: trusted).state == .unsigned)
        // One good signature among bad ones is enough.
        let good = try ReleaseSignature.sign(release, with: key)
        let stranger = try ReleaseSignature.sign(release, with: Curve25519.Signing.PrivateKey())
        #expect(SignatureCheck.verdict(for: release, signatures: [stranger, good], trust: trusted).state == .valid)
    }

    @Test func thePolicyIsAuditedAndReachesTheSnapshot() throws {
        let board = try Board.inMemory(by: Self.admin)
        #expect(try board.registrySnapshot(environment: "production").signaturePolicy == .off)
        #expect(throws: BoardError.self) { try board.setSignaturePolicy(.require, environment: "production", by: Self.stranger) }
        #expect(try board.setSignaturePolicy(.require, environment: "production", by: Self.admin).changed)
        #expect(!(try board.setSignaturePolicy(.require, environment: "production", by: Self.admin).changed))
        #expect(try board.registrySnapshot(environment: "production").signaturePolicy == .require)
        #expect(try board.signaturePolicy(environment: "default") == .off)
        let policies = try board.signaturePolicies()
        #expect(policies.map(\.environment) == ["default", "production"])
        #expect(policies.map(\.signatures) == [.off, .require])
        let record = try #require(try board.auditRecords(AuditQuery()).last { $0.action == "policy.set" && $0.outcome == "ok" })
        #expect(record.environment == "production" && record.afterJSON?.contains("require") == true)
    }

    @Test func aSignerRowInsertedBehindTheLogIsNamedAndProvesNothing() throws {
        let (board, key, keyID) = try Self.signedBoard(trust: false, policy: .require)
        #expect(try board.verifyAudit().ok)
        #expect(try board.stateProblems(pluginID: "com.example.a", version: "1.0.0", environment: "default").isEmpty)

        try board.writer.writeWithoutTransaction { db in
            try db.execute(
                sql: "INSERT INTO signers VALUES (?, 'com.example.a', ?, NULL, '2026-01-01T00:00:00.000Z', 'mallory')",
                arguments: [keyID, Self.publicKey(key)])
        }
        // The signature now looks valid, but the row it relies on is not in the log.
        #expect(try board.signatureVerdict(pluginID: "com.example.a", version: "1.0.0")?.state == .valid)
        let verification = try board.verifyAudit()
        #expect(!verification.ok)
        #expect(
            verification.problems.contains("signers: row \(keyID)/com.example.a was added without an audit row"), "\(verification.problems)"
        )
        let problems = try board.stateProblems(pluginID: "com.example.a", version: "1.0.0", environment: "default")
        #expect(problems.contains("signers: row \(keyID)/com.example.a was added without an audit row"), "\(problems)")
    }

    @Test func aRevocationDeletedBehindTheLogIsNamed() throws {
        let (board, _, keyID) = try Self.signedBoard(policy: .require)
        _ = try board.revokeSigner(keyID: keyID, reason: "leaked", by: Self.admin)
        try board.writer.writeWithoutTransaction { db in try db.execute(sql: "DELETE FROM signer_revocations") }
        let problems = try board.stateProblems(pluginID: "com.example.a", version: "1.0.0", environment: "default")
        #expect(problems == ["signer_revocations: row \(keyID) was removed outside the log"], "\(problems)")
        // A policy lowered behind the log is named too.
        let (other, _, _) = try Self.signedBoard(policy: .require)
        try other.writer.writeWithoutTransaction { db in try db.execute(sql: "UPDATE signature_policies SET signatures = 'off'") }
        let lowered = try other.stateProblems(pluginID: "com.example.a", version: "1.0.0", environment: "default")
        #expect(lowered == ["signature_policies: row default was changed outside the log"], "\(lowered)")
    }
}
