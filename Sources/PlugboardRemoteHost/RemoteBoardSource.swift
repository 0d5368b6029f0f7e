import AsyncHTTPClient
import Crypto
public import Foundation
public import Logging
import NIOCore
import NIOHTTP1
import PlugboardClient
public import PlugboardFlags
public import PlugboardHost
public import PlugboardModel
import PlugboardPluginAPI
import Synchronization

/// A board served by `plugboard serve`, for remote hosts: the same loading rules, reasons and events as a
/// host on the board's machine, with changes pushed over one event stream and a cache that lets the host start and run
/// while the server is unreachable.
///
/// - The host reads `GET /api/host/snapshot` (with `If-None-Match`) when the event stream (`GET /api/host/stream`)
///   says something changed, when it reconnects, or again after a read that failed (with the reconnection's backoff).
///   It never polls the server.
/// - Every snapshot is signed with the board's own key (`SignedSnapshot`): the host checks the
///   signature against the board keys it was given (never a key the server or the cache offers), that the snapshot is
///   of its environment and not older than its anchor (no rollback), and checks each release's signatures itself
///   from the evidence the snapshot carries. A proxy, a tampered cache or another board cannot make it load what the
///   board killed.
/// - A snapshot vouches for the board's state until it expires; the server's `fresh` notices on the event stream
///   renew it. A host that hears nothing newer reports its snapshot as stale (a frozen feed).
/// - A host without an anchor (no snapshot accepted yet: a new container, a wiped cache) takes as its first state only
///   a snapshot proven fresh: it sends a random nonce with the request, and the server answers with a
///   `FreshnessProof` of that nonce and the snapshot's head, signed by the board's key. A snapshot
///   without it (an older one replayed by a proxy, expired or not) is refused with why, and the host loads nothing
///   from it and reads again with the reconnection's backoff. `acceptStaleFirstSnapshot` or a `minimumSequence` lets
///   an operator accept a first snapshot without that proof.
/// - Every snapshot read is written to `cacheFolder` (atomically, mode 0600 in a 0700 folder) before the host acts on
///   it, with the artifacts the host fetched. A host that starts while the server is unreachable runs from that cache
///   (verified like a snapshot from the server) and says so; a kill switch it has seen is in the cache, so a restart
///   never forgets it.
/// - Reconnection waits with exponential backoff and full jitter, so that a restarted server is not met by every host
///   in the same millisecond.
public final class RemoteBoardSource: HostSource, Sendable {
    /// The server, for example `https://flags.example.com:4242`.
    public let server: URL
    /// The folder the host keeps its last snapshot and artifacts in.
    public let cacheFolder: String
    /// Where the event stream is read when it comes through a relay (nil: from the server).
    public let relayStream: URL?
    /// The first reconnection delay (then doubled on each failure, up to ``maximumBackoff``, with full jitter).
    public let initialBackoff: Duration
    /// The longest reconnection delay.
    public let maximumBackoff: Duration
    /// The largest artifact the host downloads.
    public let maximumArtifactBytes: Int

    let token: String
    let logger: Logger
    /// The process's HTTP client for served boards (``PlugboardClient/HTTPClientSettings/hostClient``).
    let client: HTTPClient
    /// The board keys the host trusts: those it was given, and those a statement signed by one of them named.
    let trusted: Mutex<[String]>
    /// Whether the keys of the first snapshot are trusted when the host was given none (with a warning).
    let trustOnFirstUse: Bool
    /// Whether a host without an anchor takes a first snapshot that is not proven fresh (expired, or without a
    /// freshness proof of its nonce), with a warning.
    public let acceptStaleFirstSnapshot: Bool
    /// The lowest audit row a snapshot may be of: one below it is refused, even fresh; a first snapshot at or above it
    /// is taken without a freshness proof.
    public let minimumSequence: Int64?
    let changes = ChangeSignal()
    let state = Mutex(State())
    let streaming = Mutex<Task<Void, Never>?>(nil)
    let reports = Mutex(Outbox())
    /// The longest random delay before a load report is sent.
    public let reportDelay: Duration

    struct State {
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
        /// The last snapshot the event stream carried, not verified yet: the next read takes it instead of a request.
        var pushed: (envelope: SignedSnapshot, json: Data)?
    }

    /// Snapshots, streams and artifacts: bounded waits (``PlugboardClient/HTTPClientSettings/host``), so an
    /// unreachable server costs a host at most this much. A refused connection fails at once (the source has its own
    /// reconnection with backoff and jitter), so a host whose server is down starts from its cache without waiting.
    static let settings = HTTPClientSettings.host

    /// How long a server that accepted the connection has to answer a snapshot, stream or load report request:
    /// generous, because a busy server is not a server that is down (that one refuses the connection, or misses the 1 s
    /// connect timeout, and the host runs from its cache at once).
    static let answerTimeout = settings.deadlineAmount

    /// A source for the server at `server`, with an API token for hosts of the host's environment (`plugboard token create
    /// --for hosts`).
    ///
    /// - Throws: `BoardError` when the URL is not http(s), the cache folder cannot be made private, or `$PLUGBOARD_CA_FILE`
    ///   is not a readable PEM file of certificates.
    /// - Parameters:
    ///   - server: The server's base URL (`http://` or `https://`).
    ///   - token: An API token for hosts (`plugboard token create --for hosts`).
    ///   - cacheFolder: A folder the host owns (created with mode 0700 if missing).
    ///   - initialBackoff: The first wait before reconnecting the event stream; it doubles up to `maximumBackoff`.
    ///   - maximumBackoff: The longest wait between reconnections.
    ///   - reportDelay: Load reports are sent after a random delay up to this, so that a fleet does not report at once.
    ///   - maximumArtifactBytes: The largest artifact the host downloads.
    ///   - logger: Where the source logs what it cannot do.
    ///   - boardKeys: The board's public keys (base64), as `plugboard board-key show` prints them: only snapshots
    ///     signed by one of them (or by a key a statement signed by one of them named) are used.
    ///   - trustOnFirstUse: With no board key given, trust the keys of the first snapshot read (said in a warning) and
    ///     keep them in the cache folder. Without either, the source refuses to start.
    ///   - acceptStaleFirstSnapshot: Without an anchor, take a first snapshot that is not proven fresh (expired, or
    ///     without the server's freshness proof of the host's nonce) instead of refusing it.
    ///   - minimumSequence: Refuse every snapshot of an audit row below this one; without an anchor, take one at or above
    ///     it without a freshness proof.
    ///   - relayStream: Read the event stream from this URL (a pub/sub relay's EventSource location, such as nginx with
    ///     Nchan, which carries the server's signed events to many hosts over one upstream stream) instead of the
    ///     server's own; snapshots are still read from `server`, and every pushed snapshot is verified as one read.
    public init(
        server: URL, token: String, cacheFolder: String, boardKeys: [String] = [], trustOnFirstUse: Bool = false,
        acceptStaleFirstSnapshot: Bool = false, minimumSequence: Int64? = nil, relayStream: URL? = nil,
        initialBackoff: Duration = .milliseconds(200),
        maximumBackoff: Duration = .seconds(5), reportDelay: Duration = .milliseconds(250), maximumArtifactBytes: Int = 1 << 30,
        logger: Logger = Logger(label: "plugboard.host.served")
    ) throws(BoardError) {
        guard let scheme = server.scheme?.lowercased(), scheme == "http" || scheme == "https", server.host != nil else {
            throw BoardError(.invalidInput, "the server address \(server.absoluteString) is not an http:// or https:// URL")
        }
        if let relayStream, !["http", "https"].contains(relayStream.scheme?.lowercased() ?? "") || relayStream.host == nil {
            throw BoardError(.invalidInput, "the relay stream address \(relayStream.absoluteString) is not an http:// or https:// URL")
        }
        guard !token.isEmpty, !token.contains(where: \.isNewline) else {
            throw BoardError(
                .invalidInput, "the API token is empty or spans lines; pass the token plugboard token create --for hosts printed")
        }
        self.server = server
        self.relayStream = relayStream
        self.token = token
        self.cacheFolder = cacheFolder
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.reportDelay = reportDelay
        self.maximumArtifactBytes = maximumArtifactBytes
        self.logger = logger
        self.client = try HTTPClientSettings.hostClient.get()
        try HostCache.prepare(cacheFolder)
        for key in boardKeys { _ = try SigningKeys.publicKey(base64: key) }
        let keys = boardKeys + HostCache.learnedKeys(cacheFolder).filter { !boardKeys.contains($0) }
        guard !keys.isEmpty || trustOnFirstUse else {
            throw BoardError(
                .invalidInput,
                "a remote host needs the board's public key (plugboard board-key show on the board's machine): give it, or ask for trust on first use"
            )
        }
        self.trusted = Mutex(keys)
        self.trustOnFirstUse = trustOnFirstUse
        self.acceptStaleFirstSnapshot = acceptStaleFirstSnapshot
        self.minimumSequence = minimumSequence
    }

    deinit { streaming.withLock { $0?.cancel() } }

    public var name: String { "the server at \(server.absoluteString)" }

    /// The flags of the latest snapshot (cached or current), for `BoardFlagProvider`.
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
        if let anchor, let taken = takePushed(environment: environment, anchor: anchor, version: version) { return taken }
        let query = relevantTo.sorted().map { "plugin=" + Self.percentEncoded($0) }.joined(separator: "&")
        let known = state.withLock { $0.viewRequest == query ? $0.etag : nil }
        // The revision the event stream announced: a cache in front of the server (a reverse proxy) keys on the URL, so a
        // new revision is never answered from an older entry.
        // Without an anchor, the host's first state must be proven fresh: a nonce of this request, which the server signs.
        let nonce = anchor == nil ? FreshnessProof.makeNonce() : nil
        let revision = "rev=\(version.dataVersion)" + (nonce.map { "&nonce=" + $0 } ?? "")
        var request = self.request("/api/host/snapshot?" + (query.isEmpty ? revision : query + "&" + revision))
        if let known, nonce == nil { request.headers.add(name: "If-None-Match", value: known) }
        state.withLock { $0.environment = environment }
        do {
            let response = try await client.execute(request, timeout: Self.answerTimeout)
            switch response.status.code {
            case 200:
                let body = try await response.body.collect(upTo: SignedSnapshot.maximumSize)
                let data = Data(body.readableBytesView)
                FanoutTrace.note("fetched", String(data.count))
                let (view, statement): (HostView, SnapshotStatement)
                let provenUntil: Date?
                do {
                    (view, statement) = try verified(try SignedSnapshot.decode(data), environment: environment, anchor: anchor)
                    provenUntil = try firstContact(
                        statement, nonce: nonce, proof: response.headers.first(name: FreshnessProof.httpHeader), environment: environment)
                    FanoutTrace.note("verified", String(statement.head.seq))
                } catch {
                    // A host with nothing yet reads again (with backoff) until a snapshot it may take comes.
                    if nonce != nil { retryRead() }
                    throw error
                }
                let etag = response.headers.first(name: "ETag")
                // Cached before the host acts on it: a kill switch seen is a kill switch remembered.
                HostCache.write(cacheFolder, view: data, server: server.absoluteString, logger: logger)
                state.withLock {
                    $0.view = view
                    $0.statement = statement
                    $0.validUntil = max(
                        $0.statement?.head == statement.head ? $0.validUntil ?? .distantPast : .distantPast, statement.expiresAt,
                        provenUntil ?? .distantPast)
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

    /// After a failed snapshot read: wakes the host to read again after a backoff (as for reconnections), so that a
    /// server that failed one read while the event stream stayed connected does not leave the host on an older snapshot
    /// until the next change. At most one retry waits at a time.
    func retryRead() {
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

}
