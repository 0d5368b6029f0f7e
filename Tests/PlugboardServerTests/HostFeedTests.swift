import Foundation
import Logging
import NIOCore
import PlugboardModel
import PlugboardStore
import Testing

@testable import PlugboardServer

/// The feeds that tell plug-in hosts on other machines when to read a new snapshot.
@Suite("host feeds")
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
