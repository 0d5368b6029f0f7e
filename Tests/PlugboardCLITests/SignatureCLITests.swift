import Foundation
import PlugboardTestSupport
import Testing

/// Signed plug-ins through the CLI: keys outside the board, signing, storing signatures, trusting and revoking keys,
/// the policy per environment, and the tampering the audit log names.
@Suite("CLI: signed plug-ins", .timeLimit(.hangGuard))
struct SignatureCLITests {
    /// A board with com.example.calendar@1.0.0 registered with an artifact and a signature by a trusted key.
    struct Signed {
        let sandbox: Sandbox
        let key: String
        let keyID: String
        let publicKey: String
        let manifest: String
        let artifact: String
    }

    static func signedBoard() async throws -> Signed {
        let sandbox = try await Sandbox.withBoard()
        let key = sandbox.root.appendingPathComponent("publisher.key").path
        let generated = try await sandbox.ok("signing-key", "generate", "--out", key, "--json").json() as? [String: String]
        let keyID = try #require(generated?["keyID"])
        let publicKey = try #require(generated?["publicKey"])
        let manifestPath = try sandbox.write("calendar.json", manifest())
        let artifact = try sandbox.write("libcalendar.so", "the calendar library")
        let sig = sandbox.root.appendingPathComponent("calendar.sig").path
        try await sandbox.ok("plugin", "sign", manifestPath, "--artifact", artifact, "--key", key, "--out", sig)
        try await sandbox.ok("plugin", "register", manifestPath, "--artifact", artifact, "--signature", sig)
        try await sandbox.ok("signer", "add", "com.example.calendar", publicKey, "--name", "Calendar team")
        return Signed(sandbox: sandbox, key: key, keyID: keyID, publicKey: publicKey, manifest: manifestPath, artifact: artifact)
    }

    @Test func generateWritesAPrivateKeyFileAndNeverOverwritesOne() async throws {
        let sandbox = try Sandbox()
        let key = sandbox.root.appendingPathComponent("k.key").path
        let text = try await sandbox.run(["signing-key", "generate", "--out", key], db: false)
        #expect(text.status == 0, "\(text)")
        #expect(sandbox.mode(key) == 0o600)
        #expect(text.stdout.contains("key id:") && text.stdout.contains("public key:"))
        let content = try String(contentsOfFile: key, encoding: .utf8)
        #expect(content.hasPrefix("-----BEGIN PLUGBOARD ED25519 PRIVATE KEY-----\n"))
        // The public key printed is not the private key's text.
        #expect(!text.stdout.contains(content.split(separator: "\n")[1]))

        let again = try await sandbox.run(["signing-key", "generate", "--out", key], db: false)
        #expect(again.status == 1)
        #expect(again.stderr == "error: \(key) already exists; a key file is never overwritten, so choose another --out\n")
        #expect(try String(contentsOfFile: key, encoding: .utf8) == content)

        let json = try await sandbox.run(["signing-key", "generate", "--out", key + "2", "--json"], db: false)
        let object = try #require(try json.json() as? [String: String])
        #expect(Set(object.keys) == ["keyID", "publicKey"])
        #expect(object["keyID"]?.count == 16 && Data(base64Encoded: object["publicKey"] ?? "")?.count == 32)
    }

    @Test func aKeyFileOthersCanReadIsRefused() async throws {
        let sandbox = try Sandbox()
        let key = sandbox.root.appendingPathComponent("k.key").path
        _ = try await sandbox.run(["signing-key", "generate", "--out", key], db: false)
        chmod(key, 0o644)
        let manifestPath = try sandbox.write("m.json", manifest())
        let result = try await sandbox.run(["plugin", "sign", manifestPath, "--key", key], db: false)
        #expect(result.status == 1)
        #expect(result.stderr.contains("is readable by other users (mode 644); run chmod 600"), "\(result.stderr)")
    }

    @Test func aSignedReleaseShowsValidAndTheAuditLogHasEveryStep() async throws {
        let signed = try await Self.signedBoard()
        let sandbox = signed.sandbox
        let show = try await sandbox.ok("plugin", "show", "com.example.calendar")
        #expect(show.stdout.contains("SIGNATURE") && show.stdout.contains("valid (key \(signed.keyID))"), "\(show.stdout)")
        let json = try await sandbox.ok("plugin", "show", "com.example.calendar", "--json").json() as? [String: Any]
        let version = (json?["versions"] as? [[String: Any]])?.first
        #expect((version?["signature"] as? [String: Any])?["state"] as? String == "valid")
        let list = try await sandbox.ok("signer", "list", "com.example.calendar", "--json").json() as? [[String: Any]]
        #expect(list?.first?["key_id"] as? String == signed.keyID && list?.first?["name"] as? String == "Calendar team")
        let actions = try await sandbox.boardFile.strings("SELECT action FROM audit_log")
        #expect(actions.contains("plugin.sign") && actions.contains("signer.add"))
        // The private key never reaches the board.
        let privateKey = try String(contentsOfFile: signed.key, encoding: .utf8).split(separator: "\n")[1]
        #expect(!(try await sandbox.boardFile.dump().contains(privateKey)))
        #expect(try await sandbox.ok("audit", "verify").status == 0)
    }

    @Test func aSignatureReplayedOntoAnotherVersionIsRefusedAndTheBoardIsUnchanged() async throws {
        let signed = try await Self.signedBoard()
        let sandbox = signed.sandbox
        try await sandbox.ok("plugin", "register", try sandbox.write("v11.json", manifest("com.example.calendar", "1.1.0")))
        let before = try await sandbox.snapshot()
        let sig = sandbox.root.appendingPathComponent("calendar.sig").path
        let result = try await sandbox.run(["plugin", "add-signature", "com.example.calendar", "1.1.0", sig])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "error: the signature by key \(signed.keyID) covers com.example.calendar@1.0.0, not com.example.calendar@1.1.0; sign com.example.calendar@1.1.0 itself\n"
        )
        #expect(try await sandbox.snapshot() == before)

        // A signature file edited after signing never reaches the board.
        var text = try String(contentsOfFile: sig, encoding: .utf8)
        text = text.replacingOccurrences(of: "version=1.0.0", with: "version=1.1.0")
        let forged = try sandbox.write("forged.sig", text)
        let refused = try await sandbox.run(["plugin", "add-signature", "com.example.calendar", "1.1.0", forged])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("does not verify with key \(signed.keyID)"), "\(refused.stderr)")
        #expect(try await sandbox.snapshot() == before)

        // A huge file is refused before it is read whole.
        let huge = try await sandbox.run(["plugin", "add-signature", "com.example.calendar", "1.1.0", "/dev/zero"])
        #expect(huge.status == 1 && huge.stderr.contains("larger than 16 KiB"), "\(huge.stderr)")
    }

    @Test func signingAfterRegistrationWithAddSignature() async throws {
        let signed = try await Self.signedBoard()
        let sandbox = signed.sandbox
        let v2 = try sandbox.write("v2.json", manifest("com.example.calendar", "2.0.0"))
        try await sandbox.ok("plugin", "register", v2)
        let out = try await sandbox.ok("plugin", "sign", v2, "--key", signed.key)
        let sig = try sandbox.write("v2.sig", out.stdout)
        let added = try await sandbox.ok("plugin", "add-signature", "com.example.calendar", "2.0.0", sig)
        #expect(added.stdout.contains("Added the signature by key \(signed.keyID) to com.example.calendar@2.0.0."), "\(added.stdout)")
        let show = try await sandbox.ok("plugin", "show", "com.example.calendar")
        #expect(show.stdout.components(separatedBy: "valid (key \(signed.keyID))").count == 3, "\(show.stdout)")
    }

    @Test func revokingAKeyCoversWhatItSignedBefore() async throws {
        let signed = try await Self.signedBoard()
        let sandbox = signed.sandbox
        let revoked = try await sandbox.ok("signer", "revoke", signed.keyID, "--reason", "laptop stolen (INC-12)")
        #expect(revoked.stdout.contains("including earlier ones"))
        let show = try await sandbox.ok("plugin", "show", "com.example.calendar")
        #expect(show.stdout.contains("revoked (key \(signed.keyID))"), "\(show.stdout)")
        let list = try await sandbox.ok("signer", "list")
        #expect(list.stdout.contains("laptop stolen (INC-12)"))
        let again = try await sandbox.run(["signer", "add", "com.example.calendar", signed.publicKey])
        #expect(again.status == 1 && again.stderr.contains("cannot be trusted again"), "\(again)")
    }

    @Test func thePolicyIsSetPerEnvironmentByAdmins() async throws {
        let sandbox = try await Sandbox.withBoard()
        let set = try await sandbox.ok("policy", "set", "--env", "production", "--signatures", "require")
        #expect(set.stdout.contains("Set the signature policy of production to require"), "\(set.stdout)")
        let shown = try await sandbox.ok("policy", "show", "--json").json() as? [[String: Any]]
        #expect(shown?.map { $0["environment"] as? String } == ["default", "production"])
        #expect(shown?.map { $0["signatures"] as? String } == ["off", "require"])
        let bad = try await sandbox.run(["policy", "set", "--env", "production", "--signatures", "maybe"])
        #expect(bad.status == 2)
        let auditRows =
            try await sandbox.boardFile.int("SELECT count(*) FROM audit_log WHERE action = 'policy.set' AND environment = 'production'")
            ?? 0
        #expect(auditRows == 1)
    }

    @Test func signerAddNeedsAnIDOrAll() async throws {
        let signed = try await Self.signedBoard()
        let usage = try await signed.sandbox.run(["signer", "add", signed.publicKey])
        #expect(usage.status == 2)
        let badKey = try await signed.sandbox.run(["signer", "add", "com.example.calendar", "bm90IGEga2V5"])
        #expect(badKey.status == 1 && badKey.stderr.contains("is not an Ed25519 public key"), "\(badKey)")
        try await signed.sandbox.ok("signer", "add", "--all", signed.publicKey)
        let list = try await signed.sandbox.ok("signer", "list")
        #expect(list.stdout.contains("every plug-in"))
    }

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/Scripts/audit-verify").path

    @Test func aSignerRowInsertedWithSQLiteIsNamedByAuditVerify() async throws {
        let signed = try await Self.signedBoard()
        let sandbox = signed.sandbox
        try await sandbox.ok("audit", "verify")
        try await sandbox.boardFile.execute(
            "INSERT INTO signers VALUES ('0123456789abcdef', '*', 'AAAA', 'mallory', '2026-01-01T00:00:00.000Z', 'mallory')")
        let verify = try await sandbox.run(["audit", "verify"])
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("signers: row 0123456789abcdef/* was added without an audit row"), "\(verify)")
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            let script = try await sandbox.run([Self.script, sandbox.board], db: false, executable: "/usr/bin/python3")
            #expect(script.status == 1)
            #expect(script.stdout.contains("signers: row [\"0123456789abcdef\",\"*\"] was added without an audit row"), "\(script)")
        }
    }

    @Test func aVersionPointedAtAnotherArtifactWithSQLiteIsNamed() async throws {
        let signed = try await Self.signedBoard()
        let sandbox = signed.sandbox
        let other = String(repeating: "cd", count: 32)
        try await sandbox.boardFile.execute(
            """
            INSERT INTO artifacts (sha256, size_bytes, file_name, stored_at, stored_by) VALUES ('\(other)', 1, 'evil.so', '2026-01-01T00:00:00.000Z', 'm');
            UPDATE plugin_versions SET artifact_sha256 = '\(other)' WHERE plugin_id = 'com.example.calendar';
            """)
        let verify = try await sandbox.run(["audit", "verify"])
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("plugin_versions: row com.example.calendar@1.0.0 was changed outside the log"), "\(verify)")
        // The signature no longer covers the artifact the row names.
        let show = try await sandbox.ok("plugin", "show", "com.example.calendar")
        #expect(show.stdout.contains("modified (key \(signed.keyID))"), "\(show.stdout)")
    }
}
