import Foundation
import PlugboardTestSupport
import Testing

/// Advisory feeds through the CLI: publishing a signed feed, the subscriptions, and the refusals that leave the board
/// and the feed file as they were.
@Suite("CLI: advisory feeds", .timeLimit(.hangGuard))
struct AdvisoryFeedCLITests {
    /// A board with the fixtures' advisories and a key file; answers the sandbox, the key's path and its public key.
    static func publisher() async throws -> (Sandbox, String, String) {
        let sandbox = try await Sandbox.withBoard()
        try await sandbox.ok("advisory", "import", AdvisoryFixtures.folder)
        let key = sandbox.root.appendingPathComponent("feed.key").path
        let generated = try await sandbox.run(["signing-key", "generate", "--out", key, "--json"], db: false)
        let publicKey = try #require((try generated.json() as? [String: Any])?["publicKey"] as? String, "\(generated)")
        return (sandbox, key, publicKey)
    }

    @Test func publishWritesAFeedThatNamesThePreviousOneAndRefusesWhatWouldGoBack() async throws {
        let (sandbox, key, _) = try await Self.publisher()
        let out = sandbox.root.appendingPathComponent("feed.json").path
        let first = try await sandbox.run(["advisory", "feed", "publish", "--key", key, "--out", out, "--sequence", "10", "--json"])
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first)")
        let published = try first.json() as? [String: Any]
        #expect(published?["sequence"] as? Int == 10 && published?["advisories"] as? Int == 4, "\(first)")
        let firstHead = try #require(published?["head"] as? String)

        // The envelope: DSSE, the payload the feed's content.
        let envelope = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])
        #expect(envelope["payloadType"] as? String == "application/vnd.plugboard.advisory-feed+json")
        let payload = try #require(Data(base64Encoded: envelope["payload"] as? String ?? ""))
        let content = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        #expect(content["ecosystem"] as? String == "Plugboard" && (content["documents"] as? [String])?.count == 4)
        #expect((envelope["signatures"] as? [[String: Any]])?.count == 1)

        // The same or a lower sequence: refused, the file as it was.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: out))
        let again = try await sandbox.run(["advisory", "feed", "publish", "--key", key, "--out", out, "--sequence", "10"])
        #expect(again.status == 1 && again.stdout.isEmpty && again.stderr.contains("needs a greater one"), "\(again)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == bytes)

        // A second key, and the next sequence: two signatures, the previous head named.
        let second = sandbox.root.appendingPathComponent("second.key").path
        try await sandbox.ok("signing-key", "generate", "--out", second)
        let next = try await sandbox.ok(["advisory", "feed", "publish", "--key", key, "--key", second, "--out", out, "--sequence", "11"])
        #expect(next.stdout.contains("sequence 11"), "\(next)")
        let later = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])
        #expect((later["signatures"] as? [[String: Any]])?.count == 2)
        let laterContent = try JSONSerialization.jsonObject(with: Data(base64Encoded: later["payload"] as? String ?? "") ?? Data())
        #expect((laterContent as? [String: Any])?["previousHead"] as? String == firstHead)

        // A feed file signed by another key is not overwritten; a key file others can read is refused.
        let stranger = sandbox.root.appendingPathComponent("stranger.key").path
        try await sandbox.ok("signing-key", "generate", "--out", stranger)
        let foreign = try await sandbox.run(["advisory", "feed", "publish", "--key", stranger, "--out", out])
        #expect(foreign.status == 1 && foreign.stderr.contains("is not a feed signed by these keys"), "\(foreign)")
        chmod(stranger, 0o644)
        let open = try await sandbox.run(["advisory", "feed", "publish", "--key", stranger, "--out", out + ".2"])
        #expect(open.status == 1 && open.stderr.contains("readable by other users"), "\(open)")
        #expect(!FileManager.default.fileExists(atPath: out + ".2"))
        // Not with --server: the keys stay on this machine.
        let remote = try await sandbox.run(
            ["advisory", "feed", "publish", "--key", key, "--out", out, "--server", "http://127.0.0.1:9"], db: false)
        #expect(remote.status == 2 && remote.stderr.contains("cannot run with --server"), "\(remote)")
    }

    @Test func subscriptionsAreAuditedAndBadInputChangesNothing() async throws {
        let (sandbox, _, publicKey) = try await Self.publisher()
        let url = "https://advisories.example.com/feed.json"
        let subscribed = try await sandbox.ok("advisory", "feed", "subscribe", url, "--key", publicKey, "--interval", "30m")
        #expect(subscribed.stdout.contains("Subscribed to the feed advisories.example.com"), "\(subscribed)")
        let listed = try await sandbox.ok("advisory", "feed", "list").stdout
        #expect(listed.contains("advisories.example.com") && listed.contains("30m"), "\(listed)")
        let before = try await sandbox.ok("audit").stdout
        for (arguments, words) in [
            (["subscribe", url, "--key", publicKey], "already exists"),
            (["subscribe", "https://other.example.com/feed.json", "--key", "not-a-key"], "is not an Ed25519 public key"),
            (["subscribe", url, "--key", publicKey, "--interval", "10s"], "is not a duration of 1m to 7d"),
            (["subscribe", "ftp://example.com/feed.json", "--key", publicKey], "is not an http or https URL"),
            (["subscribe", "https://feed:hunter2@example.com/feed.json", "--key", publicKey], "must not hold a user name or password"),
        ] {
            let result = try await sandbox.run(["advisory", "feed"] + arguments)
            #expect(result.status != 0 && result.stdout.isEmpty && result.stderr.contains(words), "\(arguments): \(result)")
            #expect(!result.stderr.contains("hunter2"), "\(result)")
        }
        #expect(try await sandbox.ok("audit").stdout == before)
        let nobody = try await sandbox.run(["advisory", "feed", "unsubscribe", "nobody"])
        #expect(nobody.status == 1 && nobody.stderr.contains("subscribes to no feed named nobody"), "\(nobody)")
        let gone = try await sandbox.ok("advisory", "feed", "unsubscribe", "advisories.example.com")
        #expect(gone.stdout.contains("the advisories it brought stay"), "\(gone)")
        let audit = try await sandbox.ok("audit").stdout
        #expect(audit.contains("advisory-feed.subscribe") && audit.contains("advisory-feed.unsubscribe"))
        #expect(try await sandbox.ok("audit", "verify").stdout.contains("intact"))
    }
}
