import AsyncHTTPClient
import Crypto
public import Foundation
public import Logging
import NIOCore
import NIOHTTP1
public import PlugboardFlags
public import PlugboardHost
public import PlugboardModel
public import PlugboardPluginAPI
import Synchronization

/// A board served by `plugboard serve`, for hosts on other machines: the same loading rules, reasons and events as a
/// host on the board's machine, with changes pushed over one event stream and a cache that lets the host start and run
/// while the server is unreachable.
///
/// - The host reads `GET /api/host/snapshot` (with `If-None-Match`) when the event stream (`GET /api/host/stream`)
///   says something changed, when it reconnects, or again after a read that failed (with the reconnection's backoff).
///   It never polls the server.
/// - Every snapshot is signed with the board's own key (``PlugboardStore/SignedSnapshot``): the host checks the
///   signature against the board keys it was given (never a key the server or the cache offers), that the snapshot is
///   of its environment and not older than its anchor (no rollback), and checks each release's signatures itself
///   from the evidence the snapshot carries. A proxy, a tampered cache or another board cannot make it load what the
///   board killed.
/// - A snapshot vouches for the board's state until it expires; the server's `fresh` notices on the event stream
///   renew it. A host that hears nothing newer reports its snapshot as stale (a frozen feed).
/// - Every snapshot read is written to `cacheFolder` (atomically, mode 0600 in a 0700 folder) before the host acts on
///   it, with the artifacts the host fetched. A host that starts while the server is unreachable runs from that cache
///   (verified like a snapshot from the server) and says so; a kill switch it has seen is in the cache, so a restart
///   never forgets it.
/// - Reconnection waits with exponential backoff and full jitter, so that a restarted server is not met by every host
///   in the same millisecond.
public final class ServedBoardSource: HostSource, Sendable {
    /// The server, for example `https://flags.example.com:4242`.
    public let server: URL
    /// The folder the host keeps its last snapshot and artifacts in.
    public let cacheFolder: String
    /// The first reconnection delay (then doubled on each failure, up to ``maximumBackoff``, with full jitter).
    public let initialBackoff: Duration
    /// The longest reconnection delay.
    public let maximumBackoff: Duration
    /// The largest artifact the host downloads.
    public let maximumArtifactBytes: Int

    private let token: String
    private let logger: Logger
    /// The board keys the host trusts: those it was given, and those a statement signed by one of them named.
    private let trusted: Mutex<[String]>
    /// Whether the keys of the first snapshot are trusted when the host was given none (with a warning).
    private let trustOnFirstUse: Bool
    private let changes = ChangeSignal()
    private let state = Mutex(State())
    private let streaming = Mutex<Task<Void, Never>?>(nil)
    private let reports = Mutex(Outbox())
    /// The longest random delay before a load report is sent.
    public let reportDelay: Duration

    private struct State {
        /// The revision the event stream last announced.
        var revision = 0
        /// Reasons to read a snapshot again that the event stream did not announce: each connection it made (a
        /// reconnection also resends the report) and each retry after a failed read.
        var rereads: Int64 = 0
        /// Snapshot reads that failed in a row (the retry's backoff), and whether a retry is waiting.
        var failedReads = 0
        var retryWaiting = false
        /// The last snapshot read and the request it answers (for `If-None-Match`).
        var view: HostView?
        var viewRequest: String?
        var etag: String?
        /// When ``view`` was read from the server.
        var fetchedAt: Date?
        /// The verified statement of ``view`` (its head, environment, expiry).
        var statement: SnapshotStatement?
        /// Until when a signed word of the board vouches for ``view``: its own expiry, renewed by `fresh` notices of
        /// the same head.
        var validUntil: Date?
        /// The environment the host reads (known from its first snapshot request), for `fresh` notices.
        var environment: String?
    }

    /// Snapshots, streams and artifacts: bounded waits, so an unreachable server costs a host at most this much.
    /// A refused connection fails at once (the source has its own reconnection with backoff and jitter), so a host
    /// whose server is down starts from its cache without waiting.
    /// How long a server that accepted the connection has to answer a snapshot or stream request: generous, because a
    /// busy server is not a server that is down (that one refuses the connection, or misses the 1 s connect timeout,
    /// and the host runs from its cache at once).
    static let answerTimeout: TimeAmount = .seconds(20)

    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(1), read: .seconds(45)))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// A source for the server at `server`, with an API token for hosts of the host's environment (`plugboard token create
    /// --for hosts`).
    ///
    /// - Parameter cacheFolder: A folder the host owns (created with mode 0700 if missing).
    /// - Throws: ``PlugboardStore/BoardError`` when the URL is not http(s) or the cache folder cannot be made private.
    /// - Parameters:
    ///   - boardKeys: The board's public keys (base64), as `plugboard board-key show` prints them: only snapshots
    ///     signed by one of them (or by a key a statement signed by one of them named) are used.
    ///   - trustOnFirstUse: With no board key given, trust the keys of the first snapshot read (said in a warning) and
    ///     keep them in the cache folder. Without either, the source refuses to start.
    public init(
        server: URL, token: String, cacheFolder: String, boardKeys: [String] = [], trustOnFirstUse: Bool = false,
        initialBackoff: Duration = .milliseconds(200),
        maximumBackoff: Duration = .seconds(5), reportDelay: Duration = .milliseconds(250), maximumArtifactBytes: Int = 1 << 30,
        logger: Logger = Logger(label: "plugboard.host.served")
    ) throws(BoardError) {
        guard let scheme = server.scheme?.lowercased(), scheme == "http" || scheme == "https", server.host != nil else {
            throw BoardError(.invalidInput, "the server address \(server.absoluteString) is not an http:// or https:// URL")
        }
        guard !token.isEmpty, !token.contains(where: \.isNewline) else {
            throw BoardError(
                .invalidInput, "the API token is empty or spans lines; pass the token plugboard token create --for hosts printed")
        }
        self.server = server
        self.token = token
        self.cacheFolder = cacheFolder
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.reportDelay = reportDelay
        self.maximumArtifactBytes = maximumArtifactBytes
        self.logger = logger
        try HostCache.prepare(cacheFolder)
        for key in boardKeys { _ = try SigningKeys.publicKey(base64: key) }
        let keys = boardKeys + HostCache.learnedKeys(cacheFolder).filter { !boardKeys.contains($0) }
        guard !keys.isEmpty || trustOnFirstUse else {
            throw BoardError(
                .invalidInput,
                "a host of a served board needs the board's public key (plugboard board-key show on the board's machine): give it, or ask for trust on first use"
            )
        }
        self.trusted = Mutex(keys)
        self.trustOnFirstUse = trustOnFirstUse
    }

    deinit { streaming.withLock { $0?.cancel() } }

    public var name: String { "the server at \(server.absoluteString)" }

    /// The flags of the latest snapshot (cached or current), for ``PlugboardHost/BoardFlagProvider``.
    public func features() throws -> FeatureSet {
        if let view = state.withLock({ $0.view }) { return view.features }
        throw BoardError(.notFound, "no snapshot of the board has been read from \(name) yet")
    }

    // MARK: HostSource

    public func version() throws(BoardError) -> BoardVersion {
        startStreaming()
        // An expiry is a change too: the host then says its snapshot is stale.
        return state.withLock {
            BoardVersion(dataVersion: Int64($0.revision), ownChanges: $0.rereads * 2 + ($0.validUntil.map { $0 < Date() } == true ? 1 : 0))
        }
    }

    public func waitForChange(interval: Duration) async {
        startStreaming()
        // Until the next change, or the snapshot's expiry; once expired, every second (a host that fails closed after
        // a while needs to look).
        let remaining = state.withLock { $0.validUntil }?.timeIntervalSinceNow
        let limit: Duration = remaining.map { $0 > 0 ? .milliseconds(Int(min($0, 3600) * 1000) + 10) : .seconds(1) } ?? .seconds(3600)
        await changes.wait(atMost: limit)
    }

    public func snapshot(environment: String, relevantTo: Set<String>, anchor: AuditCheckpoint?) async throws(BoardError) -> SourceSnapshot
    {
        let version = try version()
        let query = relevantTo.sorted().map { "plugin=" + Self.percentEncoded($0) }.joined(separator: "&")
        let known = state.withLock { $0.viewRequest == query ? $0.etag : nil }
        // The revision the event stream announced: a cache in front of the server (a reverse proxy) keys on the URL, so a
        // new revision is never answered from an older entry.
        let revision = "rev=\(version.dataVersion)"
        var request = self.request("/api/host/snapshot?" + (query.isEmpty ? revision : query + "&" + revision))
        if let known { request.headers.add(name: "If-None-Match", value: known) }
        state.withLock { $0.environment = environment }
        do {
            let response = try await Self.client.execute(request, timeout: Self.answerTimeout)
            switch response.status.code {
            case 200:
                let body = try await response.body.collect(upTo: SignedSnapshot.maximumSize)
                let data = Data(body.readableBytesView)
                let (view, statement) = try verified(try SignedSnapshot.decode(data), environment: environment, anchor: anchor)
                let etag = response.headers.first(name: "ETag")
                // Cached before the host acts on it: a kill switch seen is a kill switch remembered.
                HostCache.write(cacheFolder, view: data, server: server.absoluteString, logger: logger)
                state.withLock {
                    $0.view = view
                    $0.statement = statement
                    $0.validUntil = max(
                        $0.statement?.head == statement.head ? $0.validUntil ?? .distantPast : .distantPast, statement.expiresAt)
                    $0.viewRequest = query
                    $0.etag = etag
                    $0.fetchedAt = Date()
                    $0.failedReads = 0
                }
                return current(version: version)
            case 304:
                if state.withLock({ $0.view }) != nil {
                    state.withLock { $0.failedReads = 0 }
                    return current(version: version)
                }
                throw Unreachable(reason: "the server answered 304 to a snapshot this host does not have")
            case 401, 403:
                throw BoardError(.notAllowed, "\(name) refused the token: \(try await Self.message(response))")
            default:
                let message = try await Self.message(response)
                // The server's own proof of the board failed: it signs nothing, and the host keeps its last good state.
                if response.status.code == 503, message.hasPrefix("the board cannot be proven") {
                    throw Unreachable(reason: "it says \(message)", unproven: true)
                }
                throw Unreachable(reason: "it answered \(response.status.code): \(message)")
            }
        } catch let error as BoardError {
            throw error
        } catch {
            // A host that is stopping cancels its read: that says nothing about the server.
            if Task.isCancelled { throw BoardError(.io, "the read of \(name) was cancelled: the host is stopping") }
            retryRead()
            let unreachable = error as? Unreachable
            return try cachedSnapshot(
                version: version, environment: environment, anchor: anchor, because: unreachable?.reason ?? Self.describe(error),
                unproven: unreachable?.unproven ?? false)
        }
    }

    /// The state proof of the release as the board's signed snapshot gives it, and its signature level computed here
    /// from the evidence the snapshot carries (never the server's conclusion).
    public func check(pluginID: String, version: String, in snapshot: SourceSnapshot) throws(BoardError) -> ReleaseCheck {
        guard let check = snapshot.checks?[ReleaseCheck.key(pluginID, version)] else {
            throw BoardError(.notFound, "\(name) sent no check of \(pluginID)@\(version)")
        }
        guard snapshot.registry.signaturePolicy != .off else { return ReleaseCheck(stateProblem: check.stateProblem) }
        let evidence = state.withLock { $0.view?.evidence }
        let verdict =
            evidence?.verdict(pluginID: pluginID, version: version)
            ?? SignatureCheck.verdict(
                for: ReleaseStatement(pluginID: pluginID, version: version, manifestSHA256: "", artifactSHA256: nil), signatures: [],
                trust: .empty)
        return ReleaseCheck(stateProblem: check.stateProblem, signature: verdict)
    }

    public func localArtifact(sha256: String) -> String? {
        let path = HostCache.artifactPath(cacheFolder, sha256)
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    public func fetchArtifacts(_ digests: [String]) async -> [String: String] {
        var failures: [String: String] = [:]
        for sha in digests {
            do { try await fetchArtifact(sha) } catch { failures[sha] = (error as? Unreachable)?.reason ?? Self.describe(error) }
        }
        return failures
    }

    /// Queues the report and returns: it is sent a moment later (a random delay of up to ``reportDelay``, so that a
    /// fleet that reacted to the same change does not report in the same millisecond, and a newer report replaces one
    /// not sent yet). A report the server could not take is sent again when the event stream reconnects. A refusal of
    /// the token (401, 403) is returned by the next call, and the host stops reporting.
    public func writeLoadReport(_ identity: HostIdentity, entries: [LoadReportEntry], source: String?) async throws(BoardError) {
        let body =
            (try? JSONEncoder().encode(HostReport(hostId: identity.hostID, hostVersion: identity.hostVersion, stale: source, entries: entries)))
            ?? Data()
        let refusal = reports.withLock { outbox -> BoardError? in
            if outbox.refusal == nil { outbox.pending = body }
            return outbox.refusal
        }
        if let refusal { throw refusal }
        sendReports(after: Self.jitter(upTo: reportDelay))
    }

    /// The report waiting to be sent, whether a sender runs, and a refusal that ends reporting.
    private struct Outbox {
        var pending: Data?
        var sending = false
        var refusal: BoardError?
    }

    /// Sends the pending report (and any that replaces it meanwhile) unless a sender already runs.
    private func sendReports(after delay: Duration) {
        let start = reports.withLock { outbox -> Bool in
            guard !outbox.sending, outbox.pending != nil, outbox.refusal == nil else { return false }
            outbox.sending = true
            return true
        }
        guard start else { return }
        Task.detached { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.drainReports()
        }
    }

    private func drainReports() async {
        while let body = reports.withLock({ outbox -> Data? in
            defer { outbox.pending = nil }
            if outbox.pending == nil { outbox.sending = false }
            return outbox.pending
        }) {
            do {
                try await post(body)
            } catch {
                reports.withLock { outbox in
                    if error.code == .notAllowed { outbox.refusal = error } else if outbox.pending == nil { outbox.pending = body }
                    outbox.sending = false
                }
                logger.warning("the load report was not delivered: \(error.message)")
                return
            }
        }
    }

    private func post(_ body: Data) async throws(BoardError) {
        var request = self.request("/api/host/report")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await Self.client.execute(request, timeout: .seconds(5))
            switch response.status.code {
            case 200..<300: _ = try? await response.body.collect(upTo: 1 << 16)
            case 401, 403: throw BoardError(.notAllowed, "\(name) refused the load report: \(try await Self.message(response))")
            default:
                throw BoardError(
                    .io, "\(name) did not store the load report (\(response.status.code)): \(try await Self.message(response))")
            }
        } catch let error as BoardError {
            throw error
        } catch {
            throw BoardError(.io, "\(name) is unreachable: \(Self.describe(error))")
        }
    }

    /// Stops the event stream and delivers the pending load report (waiting at most 2 seconds for the server).
    public func finish() async {
        streaming.withLock {
            $0?.cancel()
            $0 = nil
        }
        sendReports(after: .zero)
        let deadline = ContinuousClock.now + .seconds(2)
        while reports.withLock({ $0.sending }), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// After a failed snapshot read: wakes the host to read again after a backoff (as for reconnections), so that a
    /// server that failed one read while the event stream stayed connected does not leave the host on an older snapshot
    /// until the next change. At most one retry waits at a time.
    private func retryRead() {
        let failures: Int? = state.withLock { state in
            state.failedReads += 1
            guard !state.retryWaiting else { return nil }
            state.retryWaiting = true
            return state.failedReads - 1
        }
        guard let failures else { return }
        let delay = Self.backoff(failures: failures, initial: initialBackoff, maximum: maximumBackoff)
        Task.detached { [weak self] in
            try? await Task.sleep(for: delay)
            guard let self else { return }
            self.state.withLock {
                $0.retryWaiting = false
                $0.rereads += 1
            }
            self.changes.signal()
        }
    }

    // MARK: Trust

    /// The view and statement of a signed snapshot, once it is verified: signed by a board key the host trusts, of
    /// `environment`, with its content, and not older than `anchor`. Keys the statement names are learned.
    private func verified(_ envelope: SignedSnapshot, environment: String, anchor: AuditCheckpoint?) throws(BoardError) -> (
        HostView, SnapshotStatement
    ) {
        var keys = trusted.withLock { $0 }
        if keys.isEmpty, trustOnFirstUse, let offered = SnapshotStatement(text: envelope.statement)?.boardKeys, !offered.isEmpty {
            keys = offered
            logger.warning(
                "trusting the board key(s) \(offered.map { (try? SigningKeys.publicKey(base64: $0)).map { SigningKeys.keyID(publicKey: $0.rawRepresentation) } ?? "?" }.joined(separator: ", ")) of \(name) on first use; give the host the board's key instead (plugboard board-key show)"
            )
        }
        let (statement, content) = try envelope.verify(trusted: keys, environment: environment)
        if let anchor {
            if statement.head.seq < anchor.seq {
                throw BoardError(
                    .integrity,
                    "the snapshot is of audit row \(statement.head.seq), older than row \(anchor.seq) that this host already accepted: an older snapshot is refused"
                )
            }
            if statement.head.seq == anchor.seq, statement.head.hash != anchor.hash {
                throw BoardError(
                    .integrity,
                    "the snapshot is of another audit row \(anchor.seq) than the one this host accepted: another board, or a rewritten log")
            }
        }
        guard let content else { throw BoardError(.integrity, "the snapshot carries no content") }
        let view = try HostView.decode(content)
        guard view.registry.environment == environment else {
            throw BoardError(.integrity, "the snapshot's registry is of another environment than its statement")
        }
        learn(statement.boardKeys, trusting: keys)
        return (view, statement)
    }

    /// Trusts the keys a verified statement names (a rotation the board made), and keeps them in the cache folder.
    private func learn(_ named: [String], trusting keys: [String]) {
        let learned = trusted.withLock { trusted -> [String]? in
            let all = (trusted.isEmpty ? keys : trusted) + named.filter { !trusted.contains($0) && !keys.contains($0) }
            guard all != trusted else { return nil }
            trusted = all
            return all
        }
        guard let learned else { return }
        do { try HostCache.keepKeys(cacheFolder, learned) } catch {
            logger.warning("cannot keep the board keys in \(cacheFolder): \(error)")
        }
    }

    /// The snapshot the host has, as a ``PlugboardHost/SourceSnapshot``: stale when its signed word expired.
    private func current(version: BoardVersion, unreachable: String? = nil) -> SourceSnapshot {
        state.withLock { state in
            let view = state.view!
            var stale: String?
            if let unreachable {
                stale = "a cached snapshot of \(Timestamp.format(state.fetchedAt ?? Date())) (\(name) is unreachable: \(unreachable))"
            } else if let until = state.validUntil, until < Date() {
                stale =
                    "a snapshot of audit row \(state.statement?.head.seq ?? 0) that expired at \(Timestamp.format(until)): nothing newer came from \(name) (the feed may be frozen)"
            }
            return SourceSnapshot(
                registry: view.registry, checks: view.checks, version: version, head: state.statement?.head, stale: stale,
                expiresAt: state.validUntil)
        }
    }

    /// A `fresh` notice from the event stream: renews the snapshot of the same head, or wakes the host to read a newer
    /// one. A notice that does not verify is ignored (and said).
    private func fresh(_ data: String) {
        guard let environment = state.withLock({ $0.environment }) else { return }
        let statement: SnapshotStatement
        do {
            statement = try SignedSnapshot.verify(Data(data.utf8), trusted: trusted.withLock { $0 }, environment: environment).statement
        } catch {
            logger.warning("ignored a freshness notice from \(name): \(error.message)")
            return
        }
        let wake = state.withLock { state -> Bool in
            guard let known = state.statement?.head else { return false }
            if statement.head == known {
                let wasExpired = (state.validUntil ?? .distantPast) < Date()
                state.validUntil = max(state.validUntil ?? .distantPast, statement.expiresAt)
                if wasExpired { state.rereads += 1 }
                return wasExpired
            }
            if statement.head.seq > known.seq {
                state.rereads += 1
                return true
            }
            return false
        }
        if wake { changes.signal() }
    }

    // MARK: The event stream

    private func startStreaming() {
        streaming.withLock { task in
            guard task == nil else { return }
            task = Task.detached { [weak self] in await self?.streamForever() }
        }
    }

    private func streamForever() async {
        var failures = 0
        while !Task.isCancelled {
            if await streamOnce() { failures = 0 } else { failures += 1 }
            if Task.isCancelled { return }
            try? await Task.sleep(for: Self.backoff(failures: failures, initial: initialBackoff, maximum: maximumBackoff))
        }
    }

    /// The delay before reconnection attempt `failures` (0 after a connection that worked): a random duration between
    /// zero and `initial × 2^failures`, capped at `maximum` ("full jitter").
    static func backoff(failures: Int, initial: Duration, maximum: Duration) -> Duration {
        jitter(upTo: max(.milliseconds(1), min(maximum, initial * Int(1 << min(failures, 20)))))
    }

    /// A random duration between zero and `ceiling`, in whole milliseconds.
    static func jitter(upTo ceiling: Duration) -> Duration {
        .milliseconds(Int.random(in: 0...Int(ceiling.components.seconds * 1000 + ceiling.components.attoseconds / 1_000_000_000_000_000)))
    }

    /// One connection of the event stream; true when it was established.
    private func streamOnce() async -> Bool {
        var request = self.request("/api/host/stream")
        request.headers.add(name: "Accept", value: "text/event-stream")
        let last = state.withLock { $0.revision }
        if last != 0 { request.headers.add(name: "Last-Event-ID", value: String(last)) }
        let response: HTTPClientResponse
        do { response = try await Self.client.execute(request, timeout: Self.answerTimeout) } catch { return false }
        guard response.status == .ok else {
            let message = (try? await Self.message(response)) ?? "no message"
            logger.warning("the server refused the event stream (\(response.status.code)): \(message)")
            return false
        }
        state.withLock { $0.rereads += 1 }
        sendReports(after: .zero)  // one the server could not take before
        var parser = EventStreamParser()
        do {
            for try await buffer in response.body {
                for event in try parser.feed(buffer.readableBytesView) {
                    if event.name == "fresh", let data = event.data {
                        fresh(data)
                        continue
                    }
                    guard let id = event.id else { continue }
                    state.withLock { $0.revision = id }
                    changes.signal()
                }
            }
        } catch {}
        changes.signal()  // a disconnection: the host notices nothing until it reconnects, but a waiting host may look
        return true
    }

    // MARK: Helpers

    /// The snapshot in memory, or else the one in the cache folder, verified like one from the server (signed by the
    /// board, of this environment, not older than the anchor): a cache that does not verify is refused.
    private func cachedSnapshot(
        version: BoardVersion, environment: String, anchor: AuditCheckpoint?, because reason: String, unproven: Bool = false
    ) throws(BoardError) -> SourceSnapshot {
        if state.withLock({ $0.view == nil }), let disk = HostCache.read(cacheFolder) {
            let (view, statement): (HostView, SnapshotStatement)
            do { (view, statement) = try verified(disk.snapshot, environment: environment, anchor: anchor) } catch {
                throw BoardError(.integrity, "the cached snapshot in \(cacheFolder) is refused: \(error.message)")
            }
            state.withLock {
                $0.view = view
                $0.statement = statement
                $0.validUntil = statement.expiresAt
                $0.fetchedAt = disk.fetchedAt
            }
        }
        guard state.withLock({ $0.view != nil }) else {
            if unproven { throw BoardError(.integrity, "\(name) \(reason)") }
            throw BoardError(
                .io,
                "\(name) is unreachable (\(reason)) and \(cacheFolder) holds no snapshot yet; the host loads nothing and retries when the server answers"
            )
        }
        return current(version: version, unreachable: reason)
    }

    private func fetchArtifact(_ sha: String) async throws {
        let response = try await Self.client.execute(request("/api/host/artifacts/" + sha), timeout: .seconds(10))
        guard response.status == .ok else {
            throw Unreachable(reason: "the server answered \(response.status.code): \(try await Self.message(response))")
        }
        try await HostCache.storeArtifact(cacheFolder, sha256: sha, from: response.body, limit: maximumArtifactBytes)
    }

    private func request(_ path: String) -> HTTPClientRequest {
        var base = server.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var request = HTTPClientRequest(url: base + path)
        request.headers.add(name: "Authorization", value: token)
        request.headers.add(name: "User-Agent", value: "plugboard-host")
        return request
    }

    private static func message(_ response: HTTPClientResponse) async throws -> String {
        let body = try await response.body.collect(upTo: 1 << 16)
        struct Failure: Decodable { let message: String? }
        return (try? JSONDecoder().decode(Failure.self, from: Data(body.readableBytesView)).message).flatMap { $0 } ?? "no message"
    }

    /// A network error in a few words (NIO's descriptions are long and repeat themselves).
    static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        for (needle, words) in [
            ("Connection refused", "connection refused"), ("connectTimeout", "no connection within 1 s"),
            ("deadlineExceeded", "no answer in time"), ("remoteConnectionClosed", "the server closed the connection"),
            ("NXDOMAIN", "the name does not resolve"), ("readTimeout", "no data for 45 s"),
            ("Connection reset", "the connection was reset"), ("Network is unreachable", "the network is unreachable"),
            ("No route to host", "no route to the server"), ("Name or service not known", "the name does not resolve"),
            ("certificate", "its TLS certificate is not trusted here (add its CA to the system's trust store)"),
            ("handshake", "the TLS handshake failed (is it https, with a certificate this machine trusts?)"),
        ] where text.contains(needle) {
            return words
        }
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }

    /// Why the server could not be used, in a few words.
    struct Unreachable: Error {
        let reason: String
        /// The server said it cannot prove the board (rather than failing to answer).
        var unproven = false
    }
}

/// Wakes the host when the event stream says something changed; at most one wake is kept while nobody waits.
final class ChangeSignal: Sendable {
    private struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var next: UInt64 = 0
    }

    private let state = Mutex(State())

    func signal() {
        let waiting = state.withLock { state in
            defer { state.waiters = [:] }
            if state.waiters.isEmpty { state.pending = true }
            return Array(state.waiters.values)
        }
        waiting.forEach { $0.resume() }
    }

    /// Returns at the next signal, or after `limit`.
    func wait(atMost limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait() }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns at the next signal (or at once if one is pending), or when the task is cancelled.
    func wait() async {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// Server-sent events, parsed incrementally (a line is at most 64 KiB).
struct EventStreamParser {
    struct Event {
        var name: String?
        var id: Int?
        /// The event's data lines, joined with newlines.
        var data: String?
    }

    private var line: [UInt8] = []
    private var current = Event()

    struct TooLong: Error {}

    mutating func feed(_ bytes: some Sequence<UInt8>) throws -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                if line.isEmpty {
                    if current.id != nil || current.name != nil || current.data != nil { events.append(current) }
                    current = Event()
                } else if line.first != UInt8(ascii: ":") {
                    let text = String(decoding: line, as: UTF8.self)
                    let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                    let value = parts.count > 1 ? parts[1].drop(while: { $0 == " " }) : ""
                    switch parts[0] {
                    case "event": current.name = String(value)
                    case "id": current.id = Int(value)
                    case "data": current.data = current.data.map { $0 + "\n" + value } ?? String(value)
                    default: break
                    }
                }
                line.removeAll(keepingCapacity: true)
            } else {
                guard line.count < 1 << 16 else { throw TooLong() }
                line.append(byte)
            }
        }
        return events
    }
}
