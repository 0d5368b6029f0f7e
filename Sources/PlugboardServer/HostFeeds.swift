import Crypto
import Foundation
import Logging
import NIOCore
import PlugboardModel
import PlugboardStore
import Synchronization

/// What `plugboard serve` keeps for remote hosts: per environment, a digest of what every host of
/// it sees (the enabled plug-ins and their dependencies, their checks, the flags) and a revision that moves only when
/// that digest does; the hosts' event streams; and host snapshots computed once per board version.
///
/// A load report, a client's usage counts or a change in another environment moves the board's version but not the
/// digest, so no host is woken for it.
///
/// A host may read a snapshot of a state the board watcher has not looked at yet (it reads one when it connects, and
/// the board may have moved since the last check). So the feed's digest is that of the newest state anyone read, by
/// board version: the watcher's checks and every snapshot computed for a host both take note of what they read
/// (``observe(_:digest:at:)``), each read at one board version. Otherwise a quick change and its undoing (a kill and a
/// revive between two checks) would leave the digest where it was, and a host that read the state in between would
/// never be told of the undoing.
final class HostFeeds: Sendable {
    struct Feed {
        /// The digest of the newest state read, and the board version it was read at (nil: not read at one version).
        var digest: String
        var version: BoardVersion?
        var revision: Int
        var streams: [UInt64: BoardWatcher.Stream] = [:]
        /// Its events are published to the relay (``HostFeeds/relay``).
        var relayed = false
        /// Whether a `changed` event of this environment is to carry the signed snapshot.
        var pushes: Bool { relayed || streams.values.contains(where: \.push) }
    }

    private struct Cached {
        let version: BoardVersion
        let body: ByteBuffer
        let etag: String
        /// The audit head the snapshot was read at (what a freshness proof vouches for).
        let head: AuditCheckpoint
    }

    struct State {
        var feeds: [String: Feed] = [:]
        var nextStreamID: UInt64 = 0
        var closed = false
    }

    /// How many distinct host snapshots (environment and plug-in list) are kept per board version.
    static let snapshotCacheLimit = 256
    /// Snapshots not cached are computed one at a time; a few more wait, the rest are told to come back.
    let computeSlots = ConcurrencyLimit(width: 1, queueLimit: 32)
    /// How many times a read is tried again when the board changed while it ran (see ``atOneVersion(_:)``).
    static let readAttempts = 4

    let board: any ServedBoard
    let metrics: ServerMetrics
    let logger: Logger
    /// The board's keys, which sign every snapshot and freshness notice.
    let keyring: BoardKeyring
    /// How long a signed snapshot or notice vouches for the state.
    let lifetime: Duration
    let state = Mutex(State())
    /// The newest audit head a host view was read at: what freshness notices vouch for.
    private let head = Mutex<AuditCheckpoint?>(nil)
    private let snapshots = Mutex<[String: Cached]>([:])
    /// Snapshots being computed, by key, with the requests waiting for them.
    private let flights = Mutex<[String: [CheckedContinuation<Bool, Never>]]>([:])
    /// The registered plug-ins' ids, by board version.
    private let registered = Mutex<(version: BoardVersion, ids: Set<String>)?>(nil)
    /// The first revision of this run: milliseconds since 1970, so a host can tell a restarted server from the one it knew.
    let firstRevision = Int(Date().timeIntervalSince1970 * 1000)

    /// Where the hosts' events are published for a relay (`--relay-publish`), if anywhere.
    let relay: RelayPublisher?
    /// The tokens the relay checked for a stream, with their environment (``endRelayedStreams(refusal:)``).
    let relayedTokens = Mutex<[[UInt8]: String]>([:])

    init(
        board: any ServedBoard, metrics: ServerMetrics, logger: Logger, keyring: BoardKeyring, lifetime: Duration,
        relay: RelayPublisher? = nil
    ) {
        self.relay = relay
        self.board = board
        self.metrics = metrics
        self.logger = logger
        self.keyring = keyring
        self.lifetime = lifetime
    }

    /// The plug-ins of `pluginIDs` that are registered, sorted: a host snapshot depends on no other id a host names, so
    /// requests naming ids the board does not have share one cached snapshot instead of each costing a computation.
    func registered(_ pluginIDs: [String]) throws(BoardError) -> [String] {
        let version = try board.version()
        let known: Set<String>
        if let cached = registered.withLock({ $0 }), cached.version == version {
            known = cached.ids
        } else {
            known = try board.registeredPluginIDs()
            registered.withLock { $0 = (version, known) }
        }
        return pluginIDs.filter { known.contains($0) }
    }

    /// The key of a snapshot in the cache.
    static func key(environment: String, pluginIDs: [String]) -> String {
        environment + "\n" + pluginIDs.joined(separator: ",")
    }

    /// True when the caller is to compute the snapshot of `key` (and then call ``land(_:)``); false once another request
    /// that was computing it finished: the caller looks in the cache again. A crowd asking for the same snapshot after a
    /// change costs one computation, and a host asking for another one is not queued behind the crowd.
    func lead(_ key: String) async -> Bool {
        // Without suspending when nobody computes it: the usual case.
        let leads = flights.withLock { flights -> Bool in
            guard flights[key] == nil else { return false }
            flights[key] = []
            return true
        }
        if leads { return true }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let waiting = flights.withLock { flights -> Bool in
                guard flights[key] != nil else { return false }
                flights[key]!.append(continuation)
                return true
            }
            // It ended meanwhile: look in the cache again.
            if !waiting { continuation.resume(returning: false) }
        }
    }

    /// Ends the computation of `key` (done or failed): the requests waiting for it look in the cache again.
    func land(_ key: String) {
        for waiting in flights.withLock({ $0.removeValue(forKey: key) ?? [] }) { waiting.resume(returning: false) }
    }

    /// The host snapshot of `environment` for a host that names `pluginIDs` when it is cached for the board's current
    /// version; nil when it must be computed (``snapshot(environment:pluginIDs:)``).
    func cachedSnapshot(environment: String, pluginIDs: [String]) throws(BoardError) -> Snapshot? {
        let version = try board.version()
        let key = Self.key(environment: environment, pluginIDs: pluginIDs)
        return snapshots.withLock { cache in
            guard let cached = cache[key], cached.version == version else { return nil }
            return (cached.body, cached.etag, cached.head)
        }
    }

    /// The host snapshot of `environment` for a host that names `pluginIDs`, signed with the board's keys
    /// (``PlugboardStore/SignedSnapshot``: the view, the audit head that proves it, when it expires), as JSON with its
    /// ETag: computed and signed once per board version and kept (at most ``snapshotCacheLimit`` of them), whatever the
    /// number of hosts asking. Blocking: call it off the server's threads (`plugboard serve` computes a few at a time,
    /// see ``computeSlots``).
    ///
    /// The snapshot and the digest of what every host sees are read at one board version, and the feed takes note of
    /// that digest (``observe(_:digest:at:)``): a host that read a state the watcher has not checked yet is told when
    /// the board moves on from it, whatever the watcher saw before.
    func snapshot(environment: String, pluginIDs: [String]) throws(BoardError) -> Snapshot {
        let version = try board.version()
        let key = Self.key(environment: environment, pluginIDs: pluginIDs)
        if let cached = snapshots.withLock({ $0[key] }), cached.version == version { return (cached.body, cached.etag, cached.head) }
        // Computed outside the cache's lock: a slow snapshot never holds up one that is cached.
        let read = try atOneVersion { () throws(BoardError) in
            let (view, head) = try board.hostView(environment: environment, relevantTo: Set(pluginIDs))
            let content = view.encoded()
            let envelope = signed(environment, head: head, content: content)
            let signedHead = head ?? AuditCheckpoint(seq: 0, hash: AuditLog.genesisHash)
            // With no plug-in named, the snapshot is what every host sees: its content's digest is the feed's.
            let digest = pluginIDs.isEmpty ? EnvironmentFeed.etag(content) : try digest(environment)
            return (data: envelope, etag: EnvironmentFeed.etag(envelope), digest: digest, head: signedHead)
        }
        observe(environment, digest: read.value.digest, at: read.version)
        let cached = Cached(
            version: read.version ?? version, body: ByteBuffer(bytes: read.value.data), etag: read.value.etag, head: read.value.head)
        // Kept only when it is the state at that version: a read the board moved under is read again next time.
        if let version = read.version {
            snapshots.withLock { cache in
                if cache.count >= Self.snapshotCacheLimit { cache = cache.filter { $0.value.version == version } }
                if cache.count < Self.snapshotCacheLimit { cache[key] = cached }
            }
        }
        return (cached.body, cached.etag, cached.head)
    }

    /// A host snapshot as sent: its JSON, its ETag, and the audit head it was read at.
    typealias Snapshot = (body: ByteBuffer, etag: String, head: AuditCheckpoint)

    /// The ``PlugboardModel/FreshnessProof`` header value for a host that sent `nonce` and is answered with a snapshot of
    /// `head`: signed now, for ``lifetime``.
    func freshnessProof(_ environment: String, nonce: String, head: AuditCheckpoint) -> String {
        let now = Date()
        return FreshnessProof(environment: environment, nonce: nonce, head: head, issuedAt: now, expiresAt: expiry(from: now))
            .signed(keys: keyring.keys)
    }

    /// When something signed at `now` expires.
    private func expiry(from now: Date) -> Date {
        now.addingTimeInterval(Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) * 1e-18)
    }

    /// Opens a host's event stream for `token`: first `connected` with the current revision (a host that knew another
    /// one reads a new snapshot), then `changed` whenever what the environment's hosts see changes, until the token is
    /// no longer accepted (``endStreams(refusal:)``). A resuming host's `Last-Event-ID` needs no answer of its own: the
    /// first event carries the current revision, which is all it needs. A stream with `push` gets the `changed` events
    /// that carry the environment's signed snapshot (see ``pushSnapshot(_:at:)``).
    func openStream(_ environment: String, token: APITokenCredential, push: Bool = false) throws(BoardError) -> AsyncStream<ByteBuffer> {
        let read = try atOneVersion { () throws(BoardError) in try digest(environment) }
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(16))
        let id: UInt64? = state.withLock { state in
            guard !state.closed else { return nil }
            if state.feeds[environment] == nil {
                state.feeds[environment] = Feed(digest: read.value, version: read.version, revision: firstRevision)
            }
            continuation.yield(Self.event("connected", revision: state.feeds[environment]!.revision))
            if let fresh = freshness(environment) { continuation.yield(fresh) }
            state.nextStreamID += 1
            state.feeds[environment]!.streams[state.nextStreamID] = BoardWatcher.Stream(
                continuation: continuation, token: token.digest, push: push)
            return state.nextStreamID
        }
        return metrics.openStream(stream, continuation, id: id) { [weak self] id in
            self?.state.withLock { _ = $0.feeds[environment]?.streams.removeValue(forKey: id) }
        }
    }

    /// After a board change: recompute the digest of every environment hosts watch, and tell its hosts when it moved.
    /// A digest the board moved under while it was read is left for the next check, which the move brings about.
    func boardChanged() {
        let environments = state.withLock { Array($0.feeds.keys) }
        for environment in environments {
            let read: (value: String, version: BoardVersion?)
            do { read = try atOneVersion { () throws(BoardError) in try digest(environment) } } catch {
                logger.warning("cannot read what hosts see", metadata: ["environment": "\(environment)", "error": "\(error.message)"])
                continue
            }
            guard let version = read.version else { continue }
            FanoutTrace.note("noticed", environment)
            // Signed once for every stream of the environment, and only when its hosts are to be told.
            let payload = announces(environment, digest: read.value, at: version) ? pushSnapshot(environment, at: version) : nil
            observe(environment, digest: read.value, at: version, payload: payload)
        }
    }

    /// Takes note that the state of `environment` with `digest` (what every host of it sees) was read at board
    /// `version`, or while the board moved (nil), by the watcher or for a host. The environment's hosts are told to
    /// read a new snapshot when the digest differs from the feed's, or when the read was not at one version; the feed
    /// keeps the digest when the read is the newest yet. One that is older than the feed's still tells the hosts, since
    /// a host may hold that older state.
    ///
    /// `payload`, the environment's signed snapshot read at `version`, rides on the event to the streams that asked for
    /// it; the others get the notice alone.
    private func observe(_ environment: String, digest: String, at version: BoardVersion?, payload: Data? = nil) {
        state.withLock { state in
            guard var feed = state.feeds[environment] else { return }
            let (announce, newest) = Self.announces(feed, digest: digest, at: version)
            if newest {
                feed.digest = digest
                feed.version = version
            }
            if announce {
                feed.revision += 1
                let chunk = Self.event("changed", revision: feed.revision)
                let pushed = payload.map { Self.pushEvent(revision: feed.revision, envelope: $0) }
                // A stream whose buffer is full keeps only the newest events: each says "read a new snapshot" anyway,
                // and a pushed one carries the whole state.
                for stream in feed.streams.values { stream.continuation.yield(stream.push ? pushed ?? chunk : chunk) }
                if feed.relayed, let relay {
                    let data = payload.map { Self.pushData(revision: feed.revision, envelope: $0) } ?? "{\"revision\":\(feed.revision)}"
                    relay.publish(environment, name: "changed", data: ByteBuffer(string: data))
                }
                FanoutTrace.note("written", "\(environment) revision \(feed.revision) streams \(feed.streams.count)")
            }
            state.feeds[environment] = feed
        }
    }

    /// Whether a read of `digest` at `version` tells the feed's hosts to read a new snapshot, and whether it is the newest
    /// read yet (see ``observe(_:digest:at:payload:)``).
    static func announces(_ feed: Feed, digest: String, at version: BoardVersion?) -> (announce: Bool, newest: Bool) {
        let newest = version.map { version in feed.version.map { isLater(version, than: $0) } ?? true } ?? false
        if newest { return (feed.digest != digest || feed.version == nil, true) }
        return (version == nil || (feed.digest != digest && version != feed.version), false)
    }

    /// Whether a read of `digest` at `version` would tell the hosts of `environment` something, and one of its streams
    /// takes pushed snapshots.
    private func announces(_ environment: String, digest: String, at version: BoardVersion) -> Bool {
        state.withLock { state in
            guard let feed = state.feeds[environment], feed.pushes else { return false }
            return Self.announces(feed, digest: digest, at: version).announce
        }
    }

    /// Whether `version` was read after `other` on this board: both counters only grow, and one of them grew.
    static func isLater(_ version: BoardVersion, than other: BoardVersion) -> Bool {
        version != other && version.dataVersion >= other.dataVersion && version.ownChanges >= other.ownChanges
    }

    /// Runs `body` between two reads of the board's version, again when they differ (another change committed while it
    /// ran), at most ``readAttempts`` times. The version is nil when the board moved under every attempt.
    func atOneVersion<T>(_ body: () throws(BoardError) -> T) throws(BoardError) -> (value: T, version: BoardVersion?) {
        var attempt = 1
        while true {
            let before = try board.version()
            let value = try body()
            if try board.version() == before { return (value, before) }
            if attempt == Self.readAttempts { return (value, nil) }
            attempt += 1
        }
    }

    /// Every open host stream (for keep-alive comments).
    func yieldToAll(_ chunk: ByteBuffer) {
        state.withLock { state in
            for feed in state.feeds.values { for stream in feed.streams.values { stream.continuation.yield(chunk) } }
        }
    }

    /// Ends every stream for which `refusal` gives a reason (its token was revoked or expired), with that reason.
    func endStreams(refusal: ([UInt8]) -> String?) {
        let ended = state.withLock { state -> [(AsyncStream<ByteBuffer>.Continuation, String)] in
            var ended: [(AsyncStream<ByteBuffer>.Continuation, String)] = []
            for (environment, feed) in state.feeds {
                for (id, stream) in feed.streams {
                    guard !stream.token.isEmpty, let reason = refusal(stream.token) else { continue }
                    ended.append((stream.continuation, reason))
                    state.feeds[environment]?.streams.removeValue(forKey: id)
                }
            }
            return ended
        }
        for (continuation, reason) in ended { BoardWatcher.end(continuation, because: reason) }
        endRelayedStreams(refusal: refusal)
    }

    /// Closes every stream (shutdown); hosts reconnect to the next server with backoff.
    func close() {
        let all = state.withLock { state in
            state.closed = true
            defer { for key in state.feeds.keys { state.feeds[key]?.streams = [:] } }
            return state.feeds.values.flatMap(\.streams.values)
        }
        for stream in all { stream.continuation.finish() }
    }

    /// What every host of `environment` sees, as the digest of its snapshot's content.
    func digest(_ environment: String) throws(BoardError) -> String {
        let (view, head) = try board.hostView(environment: environment, relevantTo: [])
        note(head)
        return EnvironmentFeed.etag(view.encoded())
    }

    /// Takes note of a head a view was read at, when it is newer than the one noted.
    private func note(_ read: AuditCheckpoint?) {
        guard let read else { return }
        head.withLock { if ($0?.seq ?? -1) < read.seq { $0 = read } }
    }

    /// The envelope of a snapshot (with `content`) or of a freshness notice (without), signed now for ``lifetime``.
    func signed(_ environment: String, head read: AuditCheckpoint?, content: Data?) -> Data {
        note(read)
        let now = Date()
        let head = read ?? AuditCheckpoint(seq: 0, hash: AuditLog.genesisHash)
        let statement = SnapshotStatement(
            environment: environment, head: head, issuedAt: now,
            expiresAt: expiry(from: now),
            contentSHA256: content.map { SHA256.hex($0) }, boardKeys: keyring.publicKeys)
        return SignedSnapshot.sign(statement, content: content, keys: keyring.keys).encoded()
    }

    /// A `fresh` event for the hosts of `environment`: a notice signed now that the board's head is still the one
    /// noted last, so that a host whose snapshot is of that head keeps it fresh, and one behind it reads again. Nil
    /// before any view was read.
    private func freshness(_ environment: String) -> ByteBuffer? {
        freshNotice(environment).map { ServerSentEvent.frame("fresh", data: $0) }
    }

    /// The data of a `fresh` event for the hosts of `environment` (see ``freshness(_:)``).
    private func freshNotice(_ environment: String) -> String? {
        guard let head = head.withLock({ $0 }) else { return nil }
        return String(decoding: signed(environment, head: head, content: nil), as: UTF8.self)
    }

    /// Sends every host stream a freshness notice of its environment.
    func broadcastFreshness() {
        let environments = state.withLock { state in state.feeds.filter { !$0.value.streams.isEmpty || $0.value.relayed }.map(\.key) }
        for environment in environments {
            guard let notice = freshNotice(environment) else { continue }
            let chunk = ServerSentEvent.frame("fresh", data: notice)
            let relayed = state.withLock { state in
                state.feeds[environment]?.streams.values.forEach { $0.continuation.yield(chunk) }
                return state.feeds[environment]?.relayed == true
            }
            if relayed { relay?.publish(environment, name: "fresh", data: ByteBuffer(string: notice)) }
        }
    }

    static func event(_ name: String, revision: Int) -> ByteBuffer {
        ServerSentEvent.frame(name, id: revision, data: "{\"revision\":\(revision)}")
    }
}
