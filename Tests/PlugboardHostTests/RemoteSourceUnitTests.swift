import Foundation
import PlugboardModel
import PlugboardTestSupport
import Testing

@testable import PlugboardRemoteHost

/// The parts of a served host that need no server: the reconnection delays and the event-stream parser.
@Suite("served board source: backoff and event stream", .timeLimit(.hangGuard))
struct RemoteSourceUnitTests {
    @Test func reconnectionDelaysAreJitteredDoubledAndCapped() {
        let initial = Duration.milliseconds(200)
        let maximum = Duration.seconds(5)
        for failures in 0..<30 {
            let ceiling = min(maximum, initial * (1 << min(failures, 20)))
            let delays = (0..<200).map { _ in RemoteBoardSource.backoff(failures: failures, initial: initial, maximum: maximum) }
            #expect(delays.allSatisfy { $0 >= .zero && $0 <= ceiling }, "failures \(failures)")
            // Full jitter: 200 hosts that failed as often do not come back at one moment.
            #expect(Set(delays).count > 20, "failures \(failures): \(Set(delays).count) distinct delays")
        }
    }

    @Test func theEventStreamParserReadsEventsAcrossChunksAndIgnoresComments() throws {
        var parser = EventStreamParser()
        let text = ": keep-alive\n\nevent: connected\nid: 41\ndata: {\"revision\":41}\n\nevent: chan"
        var events = try parser.feed(Array(text.utf8))
        #expect(events.map(\.id) == [41] && events.first?.name == "connected")
        events = try parser.feed(Array("ged\r\nid: 42\r\ndata: {}\r\n\r\n".utf8))
        #expect(events.map(\.id) == [42] && events.first?.name == "changed")
    }

    /// A `changed` event that carries a snapshot gives its envelope and its JSON as sent (what the cache keeps); a notice
    /// alone, or data that is not an envelope, gives nothing.
    @Test func aPushedSnapshotIsTakenFromAChangedEvent() throws {
        let envelope = SignedSnapshot(statement: "s", signatures: [], content: "Y29udGVudA==")
        let json = String(decoding: envelope.encoded(), as: UTF8.self)
        let pushed = try #require(RemoteBoardSource.pushedSnapshot("{\"revision\":7,\"snapshot\":\(json)}"))
        #expect(pushed.envelope == envelope && pushed.json == envelope.encoded())
        #expect(RemoteBoardSource.pushedSnapshot("{\"revision\":7}") == nil)
        #expect(RemoteBoardSource.pushedSnapshot("{\"revision\":7,\"snapshot\":[1]}") == nil)
    }

    @Test func anEndlessLineIsRefused() {
        var parser = EventStreamParser()
        #expect(throws: EventStreamParser.TooLong.self) {
            try parser.feed([UInt8](repeating: UInt8(ascii: "a"), count: EventStreamParser.lineLimit + 1))
        }
    }
}
