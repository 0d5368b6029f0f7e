import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlugboardAdmin
import PlugboardModel
import PlugboardPluginAPI
import PlugboardStore
import Synchronization

/// The admin API under `/api/admin/`: every operation of ``AdminAPI``, performed on the board as the principal of the
/// access token presented, with that principal's rights; read-only tokens only read.
///
/// Every route but the OpenAPI document is behind ``AdminAuthentication``, which puts the caller in the request
/// context. A request is authorized before its body is read: a large body (``BodyAdmission``) needs a principal who
/// holds a role on the board and a place in their quotas; an artifact upload (``StagedUploads``) a token that is not
/// read-only and a place in its principal's quota, larger for a principal who holds a role. Changes are recorded in the
/// audit log with the principal as actor and `token NAME from ADDRESS`. A failure is thrown as a ``Refusal``.
package struct AdminRoutes: Sendable {
    let board: Board
    let configuration: ServerConfiguration
    let failures: FailedAuthentications
    let bodies: BodyAdmission
    let uploads: StagedUploads
    let recognized: RecognizedTokens
    /// Blocking work (the board's connection) runs off the threads that answer requests, in four lanes, each route's
    /// named on it (``AdminRoute/lane``): reads on two threads, changes on one, the stops (kill switches, aborted
    /// rollouts, disables, yanks and revocations) on one of their own, so that no flood of reads or changes a token
    /// holder sends queues in front of a stop, and the authentication of tokens not seen before (``RecognizedTokens``)
    /// on one more, so that no flood of guessed tokens does either. Only a request whose token was accepted reaches the
    /// stops' lane.
    let reads: WorkerThreads
    let changes: WorkerThreads
    let stops: WorkerThreads
    let guesses: WorkerThreads

    init(board: Board, configuration: ServerConfiguration) {
        self.board = board
        self.configuration = configuration
        failures = FailedAuthentications(
            limit: configuration.adminFailedAuthLimit, globalLimit: configuration.adminFailedAuthGlobalLimit,
            window: configuration.adminFailedAuthWindow)
        bodies = BodyAdmission(perPrincipal: configuration.adminLargeBodiesPerPrincipal, budget: configuration.adminLargeBodyBytes)
        uploads = StagedUploads(limits: configuration.adminUploadQuota)
        recognized = RecognizedTokens()
        reads = WorkerThreads(name: "plugboard-admin", count: 2)
        changes = WorkerThreads(name: "plugboard-admin-changes", count: 1)
        stops = WorkerThreads(name: "plugboard-admin-stops", count: 1)
        guesses = WorkerThreads(name: "plugboard-admin-guesses", count: 1)
    }

    /// The threads of a lane.
    func threads(_ lane: AdminRoute.Lane) -> WorkerThreads {
        switch lane {
        case .read: reads
        case .change: changes
        case .stop: stops
        }
    }

    func add(to router: Router<ServeContext>) {
        // The document needs no token.
        router.get("/api/admin/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: AdminOpenAPI.document())))
        }
        let admin = router.group("/api/admin")
        for type in AdminAPI.requests { add(type, to: admin) }
        route(admin, .put, "/artifacts/{sha256}", .write, lane: .change, action: "artifact.upload") { request, context, _ in
            try await self.upload(request, context, context.requireCaller())
        }
        route(admin, .get, "/backup", .read, lane: .read, action: "board.backup") { _, context, _ in
            try await self.backup(context.requireCaller())
        }
        route(admin, .get, "/whoami", .read, lane: .read, action: "whoami") { _, context, _ in
            let caller = try context.requireCaller()
            return Reply.json(
                .ok,
                object: [
                    "principal": caller.token.principal, "token": caller.token.name, "read_only": caller.token.readOnly,
                    "address": caller.address,
                ])
        }
    }

    /// Registers `handler` for `method` on `path` under `/api/admin`, behind ``AdminAuthentication`` for `access` (the
    /// caller in the context): the authentication of a token seen before, like the route's work, runs in `lane`, which
    /// the handler is given.
    private func route(
        _ admin: RouterGroup<ServeContext>, _ method: HTTPRequest.Method, _ path: String, _ access: AdminRoute.Access,
        lane: AdminRoute.Lane, action: String,
        _ handler: @escaping @Sendable (Request, ServeContext, WorkerThreads) async throws -> Response
    ) {
        let threads = threads(lane)
        let authentication = AdminAuthentication(
            board: board, failures: failures, recognized: recognized, guesses: guesses, access: access, action: action, lane: threads)
        admin.group().add(middleware: authentication).on(RouterPath(path), method: method) { request, context in
            try await handler(request, context, threads)
        }
    }

    /// The route of an operation: its body admitted, read, decoded as `R` with the path's and the query's parameters,
    /// performed as the caller and answered, in the operation's lane.
    private func add<R: AdminRequest>(_ type: R.Type, to admin: RouterGroup<ServeContext>) {
        let route = R.route
        self.route(admin, HTTPRequest.Method(route.method), route.path, route.access, lane: route.lane, action: route.name) {
            request, context, lane in
            let caller = try context.requireCaller()
            let ticket = try await self.admitBody(R.self, request, caller, lane: lane)
            defer { ticket?.leave() }
            let body = try await self.collect(R.self, request)
            // From here on the body is read: a refusal keeps the connection open.
            return try await Self.afterBody {
                let (board, actor) = (self.board, caller.principal)
                let pathValues = Dictionary(
                    route.pathParameters.compactMap { name in context.parameters.get(name).map { (name, $0) } },
                    uniquingKeysWith: { first, _ in first })
                // Decoded, performed and encoded in the lane: a large body's decoding or a large answer's encoding
                // never holds the threads that answer requests.
                let (encoded, notes) = try await lane.run { () throws -> (Data, [String]) in
                    let decoded: R = try Self.decode(R.self, body, request, pathValues)
                    let reply = try decoded.perform(on: board, as: actor)
                    return (R.encodeResponse(reply.value), reply.notes)
                }
                return Self.answer(encoded, notes: notes)
            }
        }
    }

    /// `GET /api/admin/backup`: a verified backup, for board admins, streamed from a private file removed once sent.
    private func backup(_ caller: Caller) async throws -> Response {
        let board = self.board
        let actor = caller.principal
        let (path, description) = try await reads.run { () throws -> (String, AdminBackup.Description) in
            try AdminBackup.take(board, for: actor)
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            unlink(path)
            throw BoardError(.io, "cannot read the backup \(path)")
        }
        var headers: HTTPFields = [.contentType: "application/vnd.sqlite3", .contentLength: String(description.size)]
        headers[.plugboardBackup] = AdminWire.headerValue(AdminJSON.text(description, pretty: false))
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer {
                    try? handle.close()
                    unlink(path)
                }
                while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                    try await writer.write(ByteBuffer(bytes: chunk))
                }
                try await writer.finish(nil)
            })
    }

    /// Who a request acts as.
    struct Caller: Sendable {
        let token: AccessToken
        let principal: Principal
        let address: String
    }

    /// The whole body of a request that takes one (bounded by the route's limit), or nil for `GET`.
    private func collect<R: AdminRequest>(_ type: R.Type, _ request: Request) async throws -> ByteBuffer? {
        guard R.route.method != .get else { return nil }
        switch await Body.collect(request, limit: R.route.bodyLimit ?? configuration.maxBodyBytes) {
        case .success(let collected): return collected
        case .failure(.tooLarge(let limit)): throw Self.tooLarge(limit)
        case .failure(.unreadable): throw BoardError(.invalidInput, "the request body could not be read; send it again")
        }
    }

    /// Runs `body` once the request's body is read: a refusal is marked (``HTTPField/Name/plugboardBodyRead``) so that
    /// the connection stays open; ``ConnectionGuardMiddleware`` closes one after a refusal only while a body may be unread.
    static func afterBody(_ body: () async throws -> Response) async throws -> Response {
        do { return try await body() } catch { throw Refusal.answering(error).with(.plugboardBodyRead, "1") }
    }

    /// The request as one JSON object: the body's fields (not for `GET`), the query's, then the path's, decoded as `R`.
    private static func decode<R: AdminRequest>(_ type: R.Type, _ buffer: ByteBuffer?, _ request: Request, _ pathValues: [String: String])
        throws
        -> R
    {
        var object: [String: Any] = [:]
        if let buffer {
            if buffer.readableBytes > 0 {
                guard let parsed = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any] else {
                    throw BoardError(.invalidInput, "the request body is not a JSON object")
                }
                object = parsed
            }
        }
        let query = request.uri.queryParameters
        for parameter in R.route.parameters where parameter.place == .query {
            let values = query.getAll(parameter.name)
            guard let first = values.first else { continue }
            switch parameter.kind {
            case .integer:
                guard let number = Int(first) else {
                    throw BoardError(.invalidInput, "the query parameter \(parameter.name) must be an integer")
                }
                object[parameter.name] = number
            case .boolean:
                guard let flag = Bool(first) else {
                    throw BoardError(.invalidInput, "the query parameter \(parameter.name) must be true or false")
                }
                object[parameter.name] = flag
            case .stringArray: object[parameter.name] = values
            case .string, .object: object[parameter.name] = first
            }
        }
        for name in R.route.pathParameters {
            guard let raw = pathValues[name] else { continue }
            object[name] = raw.removingPercentEncoding ?? raw
        }
        let data: Data
        do { data = try JSONSerialization.data(withJSONObject: object) } catch {
            throw BoardError(.invalidInput, "the request cannot be read as JSON")
        }
        do { return try AdminJSON.decoder().decode(R.self, from: data) } catch {
            throw BoardError(.invalidInput, "the request does not have the expected fields: \(Body.describe(error))")
        }
    }

    /// A successful answer: the value as the CLI's `--json` prints it, notes as `Plugboard-Note` headers.
    static func answer(_ body: Data, notes: [String]) -> Response {
        var response = Reply.json(.ok, ByteBuffer(bytes: body))
        for note in notes { response.headers.append(HTTPField(name: .plugboardNote, value: AdminWire.headerValue(note))) }
        return response
    }

}

extension HTTPField.Name {
    static let plugboardNote = HTTPField.Name(AdminWire.noteHeader)!
    static let plugboardOnBehalfOf = HTTPField.Name(AdminWire.onBehalfOfHeader)!
    static let plugboardBackup = HTTPField.Name(AdminBackup.header)!
    /// On a refusal: the request's body was read whole, so the connection may stay open (removed before it is sent).
    static let plugboardBodyRead = HTTPField.Name("Plugboard-Body-Read")!
}

extension HTTPRequest.Method {
    /// The method of an admin route.
    init(_ method: AdminRoute.Method) {
        switch method {
        case .get: self = .get
        case .post: self = .post
        case .put: self = .put
        case .delete: self = .delete
        }
    }
}
