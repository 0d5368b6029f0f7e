import Foundation
import Logging
import NIOCore
import PlugboardModel
import PlugboardStore
import PlugboardTestSupport
import Synchronization
import Testing

@testable import PlugboardServer

/// What `serve --relay-publish` queues for the relay: the signed snapshot of each change, once per environment, and
/// never more than a few events per environment (a relay that is slow or away loses the oldest).
@Suite("relay publisher", .timeLimit(.hangGuard))
struct RelayPublisherTests {
    static let publisher = RelayPublisher(url: URL(string: "http://127.0.0.1:9/plugboard-publish")!, logger: Logger(label: "test"))!

    @Test func onlyHTTPURLsArePublishedTo() {
        #expect(RelayPublisher(url: URL(string: "https://relay.example.com/p/")!, logger: Logger(label: "test")) == nil)
        #expect(Self.publisher.path == "/plugboard-publish/" && Self.publisher.port == 9)
        #expect(RelayPublisher.pathSegment("prod eu/1") == "prod%20eu%2F1")
    }

    @Test func aSlowRelayLosesTheOldestEventsOfAnEnvironmentOnly() {
        let publisher = RelayPublisher(url: URL(string: "http://127.0.0.1:9/p/")!, logger: Logger(label: "test"))!
        for index in 0..<10 { publisher.publish("default", name: "changed", data: ByteBuffer(string: "\(index)")) }
        publisher.publish("staging", name: "fresh", data: ByteBuffer(string: "s"))
        let waiting = publisher.waiting("default").map { String(buffer: $0.data) }
        #expect(waiting == ["6", "7", "8", "9"])
        #expect(publisher.waiting("staging").map(\.name) == ["fresh"])
    }

    @Test func aRelayedEnvironmentGetsTheSignedSnapshotOfEachChangeOnce() throws {
        let (board, _, _) = try HostFeedTests.feedOfOneEnabledPlugin()
        let metrics = ServerMetrics()
        let relay = RelayPublisher(url: URL(string: "http://127.0.0.1:9/p/")!, logger: Logger(label: "test"))!
        let feeds = HostFeeds(
            board: board, metrics: metrics, logger: Logger(label: "test"), keyring: .generate(), lifetime: .seconds(60), relay: relay)
        #expect(try feeds.relayEnvironment("default"))
        #expect(try feeds.relayEnvironment("default"))
        #expect(metrics.relayChannels.current == 1)

        _ = try board.kill(.plugin(HostFeedTests.plugin), reason: "INC-1", by: HostFeedTests.admin)
        feeds.boardChanged()
        let events = relay.waiting("default")
        #expect(events.map(\.name) == ["changed"])
        let data = String(buffer: try #require(events.first).data)
        #expect(data.hasPrefix("{\"revision\":") && data.contains(",\"snapshot\":{"), "\(data.prefix(80))")

        feeds.broadcastFreshness()
        #expect(relay.waiting("default").map(\.name) == ["changed", "fresh"])
        let unrelayed = HostFeeds(
            board: board, metrics: metrics, logger: Logger(label: "test"), keyring: .generate(), lifetime: .seconds(60))
        #expect(try !unrelayed.relayEnvironment("default"))
    }

    @Test func aTokenTheRelayCheckedEndsItsEnvironmentsRelayedStreamsOnceTheBoardRefusesIt() throws {
        let (board, _, _) = try HostFeedTests.feedOfOneEnabledPlugin()
        let relay = RelayPublisher(url: URL(string: "http://127.0.0.1:9/p/")!, logger: Logger(label: "test"))!
        let feeds = HostFeeds(
            board: board, metrics: ServerMetrics(), logger: Logger(label: "test"), keyring: .generate(), lifetime: .seconds(60),
            relay: relay)
        _ = try board.createAPIToken(name: "edge", environment: "default", kind: .hosts, by: HostFeedTests.admin)
        let token = try #require(try board.apiTokenCredentials().first { $0.name == "edge" })
        #expect(try feeds.relayEnvironment("default"))
        feeds.noteRelayed(token)
        relay.publish("default", name: "fresh", data: ByteBuffer(string: "f"))

        // While the board accepts the token, nothing is dropped.
        feeds.endStreams { _ in nil }
        #expect(relay.waitingDrops.isEmpty)
        // Once it refuses it, the environment's channel is to be deleted, once; the events that wait stay (drops go first).
        feeds.endStreams { $0 == token.digest ? "revoked" : nil }
        feeds.endStreams { $0 == token.digest ? "revoked" : nil }
        #expect(relay.waitingDrops == ["default"])
        #expect(feeds.relayedTokens.withLock { $0.isEmpty })
        #expect(relay.waiting("default").map(\.name) == ["fresh"])
    }
}
