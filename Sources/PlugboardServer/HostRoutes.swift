import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlugboardModel
import PlugboardStore
import ServiceLifecycle

/// What remote hosts read and write, with API tokens made for hosts (`plugboard token create
/// --for hosts`; a token reads its own environment, and an SDK token is refused with 403):
///
/// - `GET /api/host/snapshot?plugin=ID…`: the ``PlugboardStore/HostView`` of the token's environment for a host that
///   names its compiled-in, active and reported plug-ins, with a strong `ETag` (`If-None-Match` gives `304`); only
///   plug-ins enabled in the environment come with their releases; with `nonce=HEX` (a host's first contact), the
///   answer carries a ``PlugboardModel/FreshnessProof`` of that nonce and the snapshot's head in the
///   `Plugboard-Freshness` header (and is never `304`);
/// - `GET /api/host/stream`: server-sent events, `connected` then `changed` whenever what the environment's hosts see
///   changes (a kill switch, an enablement, a flag); each event's `id` is the revision; it ends when its token is
///   revoked or expires; with `push=snapshot`, a `changed` event also carries the environment's signed snapshot, so
///   that a host acts without reading one (see `HostFeeds` and its pushed snapshots);
/// - `GET /api/host/relay-auth`: a relay's check of a host token (`serve --relay-publish`, see ``relayAuth(token:)``);
/// - `GET /api/host/artifacts/{sha256}`: the artifact of a release of a plug-in enabled in the token's environment
///   (the host checks the digest again); any other digest is 404;
/// - `POST /api/host/report`: the host's load report, shown by `plugboard plugin status` like a local host's.
struct HostRoutes: Sendable {
    let api: ClientAPIRoutes

    /// The most plug-ins a host may name in a snapshot request.
    static let pluginLimit = 500
    /// The most entries a load report may carry; the server keeps the first ``PlugboardStore/TelemetryLimits/maxEntriesPerReport``.
    static let reportEntryLimit = 10_000

    func add(to router: Router<ServeContext>) {
        router.group("/api/host").add(middleware: api.authentication(.hosts))
            .get("snapshot") { request, context in try await self.snapshot(request, token: context.requireToken()) }
            .get("stream") { request, context in try self.stream(request, token: context.requireToken()) }
            .get("relay-auth") { _, context in try self.relayAuth(token: context.requireToken()) }
            .get("artifacts/{sha256}") { request, context in
                try self.artifact(request, sha256: context.parameters.get("sha256") ?? "", token: context.requireToken())
            }
            .post("report") { request, context in try await self.report(request, token: context.requireToken()) }
    }

    func snapshot(_ request: Request, token: APITokenCredential) async throws -> Response {
        let named = request.uri.queryParameters.getAll("plugin")
        let nonce = request.uri.queryParameters.get("nonce")
        if let nonce, !FreshnessProof.isNonce(nonce) {
            throw Refusal(.badRequest, "the nonce must be 32 to 128 lowercase hexadecimal digits")
        }
        guard named.count <= Self.pluginLimit * 2 else {
            throw Refusal(.badRequest, "the request names more than \(Self.pluginLimit) plug-ins; name fewer")
        }
        let ids = Set(named).sorted()
        guard ids.count <= Self.pluginLimit else {
            throw Refusal(.badRequest, "the request names more than \(Self.pluginLimit) plug-ins; name fewer")
        }
        let hosts = api.watcher.hosts
        let environment = token.environment
        guard ids.allSatisfy({ $0.utf8.count <= 255 && !Self.hasControl($0, newlines: false) }) else {
            throw Refusal(.badRequest, "a plug-in id is longer than 255 bytes or contains control characters")
        }
        // From memory, after one look at the board's version (and a read of the registered plug-ins after a change).
        let (relevant, cached) = try api.board { () throws(BoardError) in
            let relevant = try hosts.registered(ids)
            return (relevant, try hosts.cachedSnapshot(environment: environment, pluginIDs: relevant))
        }
        var snapshot = cached
        while snapshot == nil {
            let key = HostFeeds.key(environment: environment, pluginIDs: relevant)
            guard await hosts.lead(key) else {
                // Another request computed it meanwhile.
                snapshot = try api.board { () throws(BoardError) in try hosts.cachedSnapshot(environment: environment, pluginIDs: relevant)
                }
                continue
            }
            defer { hosts.land(key) }
            // Computing a snapshot costs CPU and the board's connection: one at a time, so that it holds at most one of
            // the threads that answer requests, and health checks and kill switches are never queued behind a crowd.
            guard let slot = await hosts.computeSlots.enter() else {
                throw Refusal(.serviceUnavailable, "the server is computing many snapshots; try again in a moment").retryAfter(1)
            }
            defer { slot.leave() }
            snapshot = try api.board { () throws(BoardError) in try hosts.snapshot(environment: environment, pluginIDs: relevant) }
        }
        let (body, etag, head) = snapshot!
        if nonce == nil, Reply.matches(request.headers, etag) { return Reply.notModified(etag: etag) }
        var response = Reply.json(.ok, body, etag: etag)
        if let nonce, let name = HTTPField.Name(FreshnessProof.httpHeader) {
            response.headers[name] = hosts.freshnessProof(environment, nonce: nonce, head: head)
        }
        // Shared caches (a reverse proxy) may keep it, but must ask again each time: a kill switch is never served stale.
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    func stream(_ request: Request, token: APITokenCredential) throws -> Response {
        let push = request.uri.queryParameters.get("push") == "snapshot"
        let stream = try api.board { () throws(BoardError) in
            try api.watcher.hosts.openStream(token.environment, token: token, push: push)
        }
        return Reply.eventStream(stream)
    }

    /// The relay's check of a host token (nginx's `auth_request`): 204 with the token's environment in
    /// `X-Plugboard-Environment` (the relay's channel), and from then on the environment's events are published to the
    /// relay; 404 when the server publishes to no relay. An unknown, revoked or expired token is refused (401, 403) as on
    /// every host route. The server remembers the token: once the board refuses it, the relay's streams of its
    /// environment are ended (``HostFeeds/endStreams(refusal:)``), so that its host's next subscription is refused.
    func relayAuth(token: APITokenCredential) throws -> Response {
        let relayed = try api.board { () throws(BoardError) in try api.watcher.hosts.relayEnvironment(token.environment) }
        guard relayed else {
            throw Refusal(.notFound, "this server publishes to no relay; start plugboard serve with --relay-publish")
        }
        api.watcher.hosts.noteRelayed(token)
        var response = Response(status: .noContent)
        response.headers[HTTPField.Name("X-Plugboard-Environment")!] = token.environment
        response.headers[.cacheControl] = "no-store"
        return response
    }

    func artifact(_ request: Request, sha256: String, token: APITokenCredential) throws -> Response {
        guard
            let path = try api.board({ () throws(BoardError) in
                try api.watcher.board.artifactFile(sha256: sha256, environment: token.environment)
            }),
            let handle = FileHandle(forReadingAtPath: path)
        else {
            throw Refusal(
                .notFound,
                "no release of a plug-in enabled in \(token.environment) has an artifact with SHA-256 \(sha256.prefix(64))")
        }
        let size = (try? handle.seekToEnd()).map(Int.init) ?? 0
        try? handle.seek(toOffset: 0)
        var headers: HTTPFields = [
            .contentType: "application/octet-stream", .eTag: "\"\(sha256)\"", .cacheControl: "public, max-age=31536000, immutable",
        ]
        headers[.contentLength] = String(size)
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { try? handle.close() }
                while let chunk = try handle.read(upToCount: 1 << 18), !chunk.isEmpty {
                    try await writer.write(ByteBuffer(bytes: chunk))
                }
                try await writer.finish(nil)
            })
    }

    func report(_ request: Request, token: APITokenCredential) async throws -> Response {
        let body = try await Body.decodeHeavy(HostReport.self, request, limit: api.configuration.maxBodyBytes, what: "/api/host/report")
        try Self.checkText(body.hostId, "hostId", limit: 255, allowEmpty: false)
        try Self.checkText(body.hostVersion, "hostVersion", limit: 64)
        if let stale = body.stale { try Self.checkText(stale, "stale", limit: 1000) }
        guard body.entries.count <= Self.reportEntryLimit else {
            throw Refusal(.badRequest, "the report has more than \(Self.reportEntryLimit) entries; send fewer")
        }
        let kept = Array(body.entries.prefix(TelemetryLimits.maxEntriesPerReport))
        try await HeavyWork.run(heavy: kept.count > 100) {
            for entry in kept {
                try Self.checkText(entry.pluginID, "a plug-in id", limit: 255)
                for (text, field) in [(entry.version, "a version"), (entry.reasonCode, "a reason code")] {
                    if let text { try Self.checkText(text, field, limit: 255) }
                }
                for (text, field) in [(entry.reason, "a reason"), (entry.warning, "a warning")] {
                    if let text { try Self.checkText(text, field, limit: 4000, newlines: true) }
                }
                guard (entry.state == .loaded) == (entry.reasonCode == nil) else {
                    throw Refusal(.badRequest, "the entry of \(entry.pluginID) must have a reasonCode exactly when it is not loaded")
                }
            }
        }
        api.usage.noteDropped(TelemetryDrop.Kind.reportEntriesOverCap, body.entries.count - kept.count)
        let source = body.stale ?? "served (token \(token.name))"
        let usage = api.usage
        let hostID = body.hostId
        let existing = try await api.boardAsync { () throws(BoardError) in try usage.reportingEnvironment(hostID: hostID) }
        if let existing, existing != token.environment {
            usage.noteDropped(TelemetryDrop.Kind.reportOtherEnvironment, 1)
            throw Self.otherEnvironment(hostID, existing)
        }
        do {
            try usage.report(
                LoadReport(
                    hostID: hostID, environment: token.environment, hostVersion: body.hostVersion, entries: kept, source: source,
                    reporter: "token:\(token.name)"),
                token: token.name)
        } catch {
            switch error {
            case .otherEnvironment(let existing): throw Self.otherEnvironment(hostID, existing)
            case .tooManyHosts(let limit):
                throw Refusal(
                    .tooManyRequests,
                    "the token \(token.name) reported for more than \(limit) host ids this hour; give each group of hosts a token of its own"
                )
            case .busy:
                throw Refusal(.serviceUnavailable, "the server has too many load reports waiting to be stored; try again").retryAfter(5)
            }
        }
        return Reply.accepted()
    }

    static func otherEnvironment(_ hostID: String, _ existing: String) -> Refusal {
        Refusal(
            .forbidden, "the host id \(hostID) already reports from the environment \(existing); give each host an id of its own")
    }

    /// A text a host sent: at most `limit` bytes and no control characters (newlines allowed in sentences only), and
    /// not empty unless `allowEmpty`.
    static func checkText(_ value: String, _ field: String, limit: Int, newlines: Bool = false, allowEmpty: Bool = true) throws {
        guard allowEmpty || !value.isEmpty, value.utf8.count <= limit, !hasControl(value, newlines: newlines) else {
            throw Refusal(.badRequest, "\(field) is empty, longer than \(limit) bytes or contains control characters")
        }
    }

    /// Whether `value` holds a control character (a newline allowed when `newlines`); ASCII text, the usual case, is
    /// checked byte by byte.
    static func hasControl(_ value: String, newlines: Bool) -> Bool {
        if value.utf8.allSatisfy({ $0 < 0x80 }) {
            return value.utf8.contains { ($0 < 0x20 && !(newlines && $0 == 0x0A)) || $0 == 0x7F }
        }
        return value.unicodeScalars.contains { $0.properties.generalCategory == .control && !(newlines && $0 == "\n") }
    }
}
