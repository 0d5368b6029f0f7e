import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlugboardStore
import ServiceLifecycle

/// What plug-in hosts on other machines read and write, with API tokens made for hosts (`plugboard token create
/// --for hosts`; a token reads its own environment, and an SDK token is refused with 403):
///
/// - `GET /api/host/snapshot?plugin=ID…`: the ``PlugboardStore/HostView`` of the token's environment for a host that
///   names its compiled-in, active and reported plug-ins, with a strong `ETag` (`If-None-Match` gives `304`); only
///   plug-ins enabled in the environment come with their releases;
/// - `GET /api/host/stream`: server-sent events, `connected` then `changed` whenever what the environment's hosts see
///   changes (a kill switch, an enablement, a flag); each event's `id` is the revision; it ends when its token is
///   revoked or expires;
/// - `GET /api/host/artifacts/{sha256}`: the artifact of a release of a plug-in enabled in the token's environment
///   (the host checks the digest again); any other digest is 404;
/// - `POST /api/host/report`: the host's load report, shown by `plugboard plugin status` like a local host's.
struct HostRoutes: Sendable {
    let api: ClientAPIRoutes

    /// The most plug-ins a host may name in a snapshot request.
    static let pluginLimit = 2000
    /// The most entries of one load report.
    static let reportEntryLimit = 10_000

    func add(to router: Router<some RequestContext>) {
        router.get("/api/host/snapshot") { request, _ in api.respond { try self.snapshot(request) } }
        router.get("/api/host/stream") { request, _ in api.respond { try self.stream(request) } }
        router.get("/api/host/artifacts/{sha256}") { request, context in
            api.respond { try self.artifact(request, sha256: context.parameters.get("sha256") ?? "") }
        }
        router.post("/api/host/report") { request, _ in await api.respondAsync { try await self.report(request) } }
    }

    func snapshot(_ request: Request) throws -> Response {
        let token = try api.authenticate(request, for: .hosts)
        let ids = Set(request.uri.queryParameters.getAll("plugin")).sorted()
        guard ids.count <= Self.pluginLimit else {
            throw ResponseFailure(Reply.error(.badRequest, "the request names more than \(Self.pluginLimit) plug-ins; name fewer"))
        }
        for id in ids { try Self.checkText(id, "a plug-in id", limit: 255) }
        let (body, etag) = try api.board { () throws(BoardError) in
            try api.watcher.hosts.snapshot(environment: token.environment, pluginIDs: ids)
        }
        if Reply.matches(request.headers, etag) { return Reply.notModified(etag: etag) }
        var response = Reply.json(.ok, body, etag: etag)
        // Shared caches (a reverse proxy) may keep it, but must ask again each time: a kill switch is never served stale.
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    func stream(_ request: Request) throws -> Response {
        let token = try api.authenticate(request, for: .hosts)
        let stream = try api.board { () throws(BoardError) in try api.watcher.hosts.openStream(token.environment, token: token) }
        return Reply.eventStream(stream)
    }

    func artifact(_ request: Request, sha256: String) throws -> Response {
        let token = try api.authenticate(request, for: .hosts)
        guard
            let path = try api.board({ () throws(BoardError) in
                try api.watcher.board.artifactFile(sha256: sha256, environment: token.environment)
            }),
            let handle = FileHandle(forReadingAtPath: path)
        else {
            throw ResponseFailure(
                Reply.error(
                    .notFound,
                    "no release of a plug-in enabled in \(token.environment) has an artifact with SHA-256 \(sha256.prefix(64))"))
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

    struct ReportBody: Decodable {
        var hostId: String
        var hostVersion: String
        /// Nil when the host reads the server; otherwise why its snapshot is not current.
        var stale: String?
        var entries: [LoadReportEntry]
    }

    func report(_ request: Request) async throws -> Response {
        let token = try api.authenticate(request, for: .hosts)
        let body: ReportBody
        switch await Body.decode(ReportBody.self, request, limit: api.configuration.maxBodyBytes, what: "/api/host/report") {
        case .success(let value): body = value
        case .failure(let failure): throw failure
        }
        try Self.checkText(body.hostId, "hostId", limit: 255, allowEmpty: false)
        try Self.checkText(body.hostVersion, "hostVersion", limit: 64)
        if let stale = body.stale { try Self.checkText(stale, "stale", limit: 1000) }
        guard body.entries.count <= Self.reportEntryLimit else {
            throw ResponseFailure(Reply.error(.badRequest, "the report has more than \(Self.reportEntryLimit) entries; send fewer"))
        }
        for entry in body.entries {
            try Self.checkText(entry.pluginID, "a plug-in id", limit: 255)
            for (text, field) in [(entry.version, "a version"), (entry.reasonCode, "a reason code")] {
                if let text { try Self.checkText(text, field, limit: 255) }
            }
            for (text, field) in [(entry.reason, "a reason"), (entry.warning, "a warning")] {
                if let text { try Self.checkText(text, field, limit: 4000, newlines: true) }
            }
            guard (entry.state == .loaded) == (entry.reasonCode == nil) else {
                throw ResponseFailure(
                    Reply.error(.badRequest, "the entry of \(entry.pluginID) must have a reasonCode exactly when it is not loaded"))
            }
        }
        let source = body.stale ?? "served (token \(token.name))"
        do {
            try await BoardWatcher.offPool { () throws(BoardError) in
                try api.watcher.board.writeRemoteLoadReport(
                    hostID: body.hostId, environment: token.environment, hostVersion: body.hostVersion, entries: body.entries,
                    source: source, reporter: "token:\(token.name)")
            }
        } catch  where error.code == .notAllowed {
            throw ResponseFailure(Reply.error(.forbidden, error.message))
        } catch {
            api.configuration.logger.error("cannot store a load report", metadata: ["error": "\(error.message)"])
            throw ResponseFailure(Reply.error(.serviceUnavailable, "the server cannot write the board right now; try again"))
        }
        return Reply.accepted()
    }

    /// A text a host sent: at most `limit` bytes and no control characters (newlines allowed in sentences only), and
    /// not empty unless `allowEmpty`.
    static func checkText(_ value: String, _ field: String, limit: Int, newlines: Bool = false, allowEmpty: Bool = true) throws {
        let allowed: Set<Unicode.Scalar> = newlines ? ["\n"] : []
        guard allowEmpty || !value.isEmpty, value.utf8.count <= limit,
            !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && !allowed.contains($0) })
        else {
            throw ResponseFailure(Reply.error(.badRequest, "\(field) is empty, longer than \(limit) bytes or contains control characters"))
        }
    }
}
