import Foundation
import Logging
import NIOCore
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Testing

@testable import PlugboardServer

/// The feeds that tell plug-in hosts on other machines when to read a new snapshot.
@Suite("host feeds", .timeLimit(.hangGuard))
struct HostFeedTests {
    static let admin = try! Principal(osUser: "alice")
    static let plugin = "com.example.a"

    /// A kill switch thrown and revived between two of the watcher's checks: a host that read the killed state in
    /// between (it connected, or read for another reason) must be told when the board moves back, although the
    /// watcher's two checks saw the same state. Found by the served-board host tests, where it left a host without
    /// the revived plug-ins about one run in two hundred under load.
    @Test func aHostThatReadAStateTheWatcherNeverSawIsToldWhenTheBoardMovesOn() async throws {
        let (board, feeds, stream) = try Self.feedOfOneEnabledPlugin()
        var events = stream.makeAsyncIterator()
        #expect(Self.name(await events.next()) == "connected")
        #expect(Self.name(await events.next()) == "fresh")

        _ = try board.kill(.plugin(Self.plugin), reason: "INC-1", by: Self.admin)
        let killed = try feeds.snapshot(environment: "default", pluginIDs: [Self.plugin])
        #expect(try Self.view(killed.body).registry.plugins[Self.plugin]?.killed == true)
        // What the stream said until the host's read.
        feeds.yieldToAll(ByteBuffer(string: ": mark\n\n"))
        while let event = await events.next(), Self.name(event) != nil {}

        _ = try board.revive(.plugin(Self.plugin), reason: "fixed", by: Self.admin)
        feeds.boardChanged()
        feeds.close()
        var after: [String?] = []
        while let event = await events.next() { after.append(Self.name(event)) }
        #expect(after.contains("changed"), "the host holding the killed state was not told of the revive")
        let revived = try feeds.snapshot(environment: "default", pluginIDs: [Self.plugin])
        #expect(revived.etag != killed.etag)
    }

    /// A change that leaves what hosts see as it was (a flag of another environment) wakes no host, also after a host
    /// read a snapshot.
    @Test func aChangeHostsDoNotSeeWakesNoHost() async throws {
        let (board, feeds, stream) = try Self.feedOfOneEnabledPlugin()
        var events = stream.makeAsyncIterator()
        #expect(Self.name(await events.next()) == "connected")
        #expect(Self.name(await events.next()) == "fresh")
        _ = try feeds.snapshot(environment: "default", pluginIDs: [Self.plugin])
        _ = try board.setEnabled(Self.plugin, true, environment: "production", by: Self.admin)
        feeds.boardChanged()
        feeds.close()
        var after: [String?] = []
        while let event = await events.next() { after.append(Self.name(event)) }
        #expect(after.isEmpty)
    }

    /// A change is pushed: every stream that asked for it gets the same bytes, a `changed` event carrying the
    /// environment's snapshot signed by the board's key, with every registered plug-in (one not enabled without
    /// releases); a stream that did not ask gets the notice alone.
    @Test func aChangeIsPushedSignedOnceAndAsTheSameBytesToEveryStreamThatAsked() async throws {
        let (board, feeds, plain) = try Self.feedOfOneEnabledPlugin()
        let manifest = try PluginManifest.parse(Data(#"{"id":"com.example.off","name":"off","version":"1.0.0"}"#.utf8))
        _ = try board.register(manifest, by: Self.admin)
        let credential = try #require(try board.apiTokenCredentials().first)
        let pushed = try (0..<2).map { _ in try feeds.openStream("default", token: credential, push: true) }
        _ = try board.kill(.plugin(Self.plugin), reason: "INC-1", by: Self.admin)
        feeds.boardChanged()
        feeds.close()
        func changed(_ stream: AsyncStream<ByteBuffer>) async -> [ByteBuffer] {
            var found: [ByteBuffer] = []
            for await chunk in stream where Self.name(chunk) == "changed" { found.append(chunk) }
            return found
        }
        let notices = await changed(plain)
        #expect(notices.count == 1 && !String(buffer: notices[0]).contains("snapshot"))
        let first = await changed(pushed[0])
        let second = await changed(pushed[1])
        #expect(first.count == 1 && first == second, "the streams got different bytes")
        let data = try #require(String(buffer: first[0]).split(separator: "\n").first { $0.hasPrefix("data: ") }).dropFirst(6)
        struct Changed: Decodable {
            let revision: Int
            let snapshot: SignedSnapshot
        }
        let event = try JSONDecoder().decode(Changed.self, from: Data(data.utf8))
        let (statement, content) = try event.snapshot.verify(trusted: feeds.keyring.publicKeys, environment: "default")
        let view = try HostView.decode(try #require(content))
        #expect(view.registry.plugins[Self.plugin]?.killed == true)
        #expect(view.registry.plugins["com.example.off"].map { !$0.enabled && $0.versions.isEmpty } == true)
        #expect(statement.head.seq > 0)
    }

    /// A board with one plug-in enabled in `default`, the feeds over it, and a host's event stream of `default`.
    static func feedOfOneEnabledPlugin() throws -> (Board, HostFeeds, AsyncStream<ByteBuffer>) {
        let board = try Board.inMemory(by: Self.admin)
        let manifest = try PluginManifest.parse(Data(#"{"id":"\#(Self.plugin)","name":"a","version":"1.0.0"}"#.utf8))
        _ = try board.register(manifest, by: Self.admin)
        _ = try board.setEnabled(Self.plugin, true, environment: "default", by: Self.admin)
        let feeds = HostFeeds(
            board: board, metrics: ServerMetrics(), logger: Logger(label: "test"), keyring: .generate(), lifetime: .seconds(60))
        let token = try board.createAPIToken(name: "hosts", environment: "default", kind: .hosts, by: Self.admin).secret
        let credential = try #require(try board.apiTokenCredentials().first { $0.digest == APITokenSecret.digest(token) })
        return (board, feeds, try feeds.openStream("default", token: credential))
    }

    /// The view in a signed snapshot's body (its signature is not checked here).
    static func view(_ body: ByteBuffer) throws -> HostView {
        let envelope = try SignedSnapshot.decode(Data(body.readableBytesView))
        return try HostView.decode(Data(base64Encoded: envelope.content ?? "") ?? Data())
    }

    /// The event's name (`connected`, `changed`, `fresh`), or nil for a comment.
    static func name(_ chunk: ByteBuffer?) -> String? {
        guard let chunk else { return nil }
        return String(buffer: chunk).split(separator: "\n").first { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) }
    }
}
