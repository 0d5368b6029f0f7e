import Crypto
import Foundation
import Hummingbird
import Logging
import PlugboardHost
import PlugboardModel
import PlugboardPluginAPI
import PlugboardRemoteHost
import PlugboardStore
import PlugboardTestSupport
import ServiceLifecycle
import Synchronization
import Testing

/// A served host whose server fails a read while its event stream stays connected.
@Suite("served board source: failed reads", .timeLimit(.hangGuard))
struct RemoteSourceRetryTests {
    /// The server answers one snapshot read with 503 and keeps the event stream open, announcing nothing more: the
    /// source wakes the host to read again by itself, with the reconnection's backoff, instead of leaving it on what it
    /// had until the next change.
    @Test func aFailedSnapshotReadIsTriedAgainWhileTheStreamStaysConnected() async throws {
        let t = try TestBoard()
        try t.register("com.example.a", "1.0.0")
        let (hostView, head) = try t.board.hostView(environment: "default", relevantTo: [])
        let keys = BoardKeyring.generate()
        let content = hostView.encoded()
        let statement = SnapshotStatement(
            environment: "default", head: head!, issuedAt: Date(), expiresAt: Date().addingTimeInterval(600),
            contentSHA256: SHA256.hash(data: content).map { String(format: "%02x", $0) }.joined(), boardKeys: keys.publicKeys)
        let view = SignedSnapshot.sign(statement, content: content, keys: keys.keys).encoded()
        let reads = Mutex(0)
        let router = Self.routerWithAStream()
        router.get("/api/host/snapshot") { request, _ -> Response in
            let read = reads.withLock {
                $0 += 1
                return $0
            }
            guard read > 1 else { return Response(status: .serviceUnavailable) }
            var headers: HTTPFields = [.eTag: "\"v1\""]
            // A host without an anchor sends a nonce: its first snapshot comes with the board's proof of it.
            if let nonce = request.uri.queryParameters.get("nonce") {
                headers[.init(FreshnessProof.httpHeader)!] = FreshnessProof(
                    environment: "default", nonce: nonce, head: head!, issuedAt: Date(), expiresAt: Date().addingTimeInterval(600)
                ).signed(keys: keys.keys)
            }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: view)))
        }
        let (group, port) = await Self.serve(router)
        let source = try RemoteBoardSource(
            server: URL(string: "http://127.0.0.1:\(port)")!, token: "token", cacheFolder: t.folder.appendingPathComponent("cache").path,
            boardKeys: keys.publicKeys, initialBackoff: .milliseconds(20))

        // Connected, and the connection's own wake taken.
        _ = try source.version()
        await source.waitForChange(interval: .seconds(1))
        #expect(try source.version().dataVersion == 7)
        let before = try source.version()

        // No cache yet: the failed read throws, and the host has nothing newer to wait for.
        await #expect(throws: BoardError.self) { try await source.snapshot(environment: "default", relevantTo: [], anchor: nil) }
        let woke =
            await within(.eventDeadline) {
                await source.waitForChange(interval: .seconds(1))
                return !Task.isCancelled
            } ?? false
        #expect(woke, "the source did not wake the host to read again")
        #expect(try source.version() != before)
        let read = try await source.snapshot(environment: "default", relevantTo: [], anchor: nil)
        #expect(read.stale == nil)
        #expect(read.registry.plugins["com.example.a"]?.enabled == true)
        #expect(reads.withLock { $0 } == 2)
        await source.finish()
        await group.triggerGracefulShutdown()
    }

    /// The server answers the first load report with 503 and takes the next, and keeps the event stream open: the
    /// source sends the report again by itself, instead of keeping it until the stream reconnects or the host changes.
    @Test func aLoadReportTheServerCouldNotTakeIsSentAgainWhileTheStreamStaysConnected() async throws {
        let t = try TestBoard()
        let posts = Mutex<[Data]>([])
        let router = Self.routerWithAStream()
        router.post("/api/host/report") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 16)
            let count = posts.withLock {
                $0.append(Data(body.readableBytesView))
                return $0.count
            }
            return Response(status: count == 1 ? .serviceUnavailable : .ok)
        }
        let (group, port) = await Self.serve(router)
        let source = try RemoteBoardSource(
            server: URL(string: "http://127.0.0.1:\(port)")!, token: "token", cacheFolder: t.folder.appendingPathComponent("cache").path,
            boardKeys: [BoardKeyring.generate().publicKeys[0]], initialBackoff: .milliseconds(20), reportDelay: .milliseconds(1))
        _ = try source.version()
        await source.waitForChange(interval: .seconds(1))
        #expect(try source.version().dataVersion == 7, "the event stream is connected")

        let entry = LoadReportEntry(pluginID: "com.example.a", version: "1.0.0", state: .loaded)
        let identity = HostIdentity(hostID: "h", environment: "default", hostVersion: "2.1.0")
        try await source.writeLoadReport(identity, entries: [entry], source: nil)
        try await eventually("the load report sent again after the server's 503") { posts.withLock { $0.count } >= 2 }
        let sent = posts.withLock { $0 }
        #expect(sent[0] == sent[1], "the report sent again is the one refused")
        #expect(String(decoding: sent[1], as: UTF8.self).contains("com.example.a"))
        await source.finish()
        await group.triggerGracefulShutdown()
    }

    /// A router whose event stream announces revision 7 and then stays open, announcing nothing more.
    static func routerWithAStream() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/api/host/stream") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/event-stream"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "event: connected\nid: 7\ndata: {\"revision\":7}\n\n"))
                    // A comment each second keeps the connection from the client's read timeout, as the server's do.
                    for _ in 0..<600 {
                        do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(1)) } } catch { break }
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    }
                    try await writer.finish(nil)
                })
        }
        return router
    }

    /// Serves `router` on a free loopback port.
    static func serve(_ router: Router<BasicRequestContext>) async -> (group: ServiceGroup, port: Int) {
        await serveOnLoopback(logger: Logger(label: "test.fake-serve")) { listening in
            Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in await listening(channel.localAddress?.port ?? 0) })
        }
    }
}
