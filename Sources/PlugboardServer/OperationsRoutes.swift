import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlugboardIdentity
import PlugboardModel
import PlugboardOperations
import PlugboardPluginAPI
import PlugboardStore
import Synchronization

/// The operations API under `/api/admin/`: every operation of ``OperationsAPI``, performed on the board as the principal of the
/// access token presented, with that principal's rights; read-only tokens only read.
///
/// Every route but the OpenAPI document is behind ``OperationsAuthentication``, which puts the caller in the request
/// context. A request is authorized before its body is read: a large body (``BodyAdmission``) needs a principal who
/// holds a role on the board and a place in their quotas; an artifact upload (``StagedUploads``) a token that is not
/// read-only and a place in its principal's quota, larger for a principal who holds a role. Changes are recorded in the
/// audit log with the principal as actor and `token NAME from ADDRESS`. A failure is thrown as a ``Refusal``.
package struct OperationsRoutes: Sendable {
    let board: Board
    let configuration: ServerConfiguration
    let failures: FailedAuthentications
    let bodies: BodyAdmission
    let uploads: StagedUploads
    let recognized: RecognizedTokens
    /// The web console's sessions and remembered audit verification (``ConsoleRoutes``), served with the operations API.
    let consoleSessions = ConsoleSessions()
    let consoleVerifier = ConsoleVerifier()
    /// The identity provider the console signs in with, and the logins begun with it and not yet finished.
    var identityProvider: ConsoleIdentityProvider? { configuration.identityProvider }
    let pendingLogins = PendingLogins()
    /// The logins of `plugboard login` begun with the identity provider and not yet finished (``LoginRoutes``).
    let cliLogins = CLILogins()
    /// Blocking work (the board's connection) runs off the threads that answer requests, in four lanes, each route's
    /// named by its operation's declared access (``OperationAccess``): reads on two threads, changes on one, the stops (kill switches, aborted
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

    /// The threads of a lane: an operation's declared access names it.
    func threads(_ lane: OperationAccess) -> WorkerThreads {
        switch lane {
        case .read: reads
        case .write: changes
        case .stop: stops
        }
    }

    func add(to router: Router<ServeContext>) {
        // The document needs no token.
        router.get("/api/admin/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: OperationsOpenAPI.document())))
        }
        let admin = router.group("/api/admin")
        for type in OperationsAPI.requests { add(type, to: admin) }
        AlertTrigger(admin: self).add(to: router)
        let console = ConsoleRoutes(admin: self)
        console.add(to: router)
        if let oidc = console.oidc { LoginRoutes(admin: self, console: console, oidc: oidc).add(to: router) }
        route(admin, .put, "/artifacts/{sha256}", .write, action: .artifactUpload) { request, context, _ in
            try await self.upload(request, context, context.requireCaller())
        }
        route(admin, .get, "/backup", .read, action: .boardBackup) { _, context, _ in
            try await self.backup(context.requireCaller())
        }
        route(admin, .get, "/whoami", .read, action: .whoami) { _, context, _ in
            let caller = try context.requireCaller()
            return Reply.json(
                .ok,
                object: [
                    "principal": caller.principal.osUser, "token": caller.token?.name ?? NSNull(), "read_only": caller.readOnly,
                    "address": caller.address,
                ])
        }
    }

    /// Registers `handler` for `method` on `path` under `/api/admin`, behind ``OperationsAuthentication`` (the caller in the
    /// context): the authentication of a token seen before, like the route's work, runs in the lane of `access`, whose
    /// threads the handler is given.
    private func route(
        _ admin: RouterGroup<ServeContext>, _ method: HTTPRequest.Method, _ path: String, _ access: OperationAccess, action: AuditAction,
        _ handler: @escaping @Sendable (Request, ServeContext, WorkerThreads) async throws -> Response
    ) {
        let threads = threads(access)
        let authentication = OperationsAuthentication(
            board: board, failures: failures, recognized: recognized, guesses: guesses, access: access,
            action: action, lane: threads)
        admin.group().add(middleware: authentication).on(RouterPath(path), method: method) { request, context in
            try await handler(request, context, threads)
        }
    }

    /// `POST /api/admin/{name}`: the operation `R`, its request the JSON body, admitted, read, decoded, performed as the
    /// caller and answered, in the operation's lane.
    private func add<R: OperationRequest>(_ type: R.Type, to admin: RouterGroup<ServeContext>) {
        route(admin, .post, "/" + R.name, R.access, action: R.declaration.action) { request, context, lane in
            let caller = try context.requireCaller()
            let ticket = try await self.admitBody(R.self, request, caller, lane: lane)
            defer { ticket?.leave() }
            let body = try await self.collect(R.self, request)
            // From here on the body is read: a refusal keeps the connection open.
            return try await Self.afterBody {
                let (board, actor) = (self.board, caller.principal)
                // Decoded, performed and encoded in the lane: a large body's decoding or a large answer's encoding
                // never holds the threads that answer requests.
                let options = try OperationsWire.changeOptions(request.headers[.plugboardChangeAt], request.headers[.plugboardEmergency])
                let (encoded, notes, requested) = try await lane.run { () throws -> (Data, [String], Int64?) in
                    let decoded = try R.fromWire(body.map { Data($0.readableBytesView) } ?? Data())
                    switch try decoded.submit(on: board, as: actor, options: options) {
                    case .performed(let reply): return (R.encodeResponse(reply.value), reply.notes, nil)
                    case .requested(let reply):
                        return (Data(OperationJSON.text(reply.value, pretty: false).utf8), reply.notes, reply.value.id)
                    }
                }
                var response = Self.answer(encoded, notes: notes)
                if let requested {
                    // A change request opened (or applied as an emergency): 202, with its number.
                    response.status = .accepted
                    response.headers[.plugboardChangeRequest] = String(requested)
                }
                return response
            }
        }
    }

    /// `GET /api/admin/backup`: a verified backup, for board admins, streamed from a private file removed once sent.
    private func backup(_ caller: Caller) async throws -> Response {
        let board = self.board
        let actor = caller.principal
        let (path, description) = try await reads.run { () throws -> (String, BackupDownload.Description) in
            try BackupDownload.take(board, for: actor)
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            unlink(path)
            throw BoardError(.io, "cannot read the backup \(path)")
        }
        var headers: HTTPFields = [.contentType: "application/vnd.sqlite3", .contentLength: String(description.size)]
        headers[.plugboardBackup] = OperationsWire.headerValue(OperationJSON.text(description, pretty: false))
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

    /// The access token whose secret was presented, in whatever state it is, looked up in `lane`; one accepted now has
    /// its use noted. Nil when the board knows no such token.
    static func lookUp(_ secret: String, on board: Board, in lane: WorkerThreads) async throws -> AccessToken? {
        try await lane.run { () throws -> AccessToken? in
            let found = try board.accessToken(secret: secret)
            if let found, found.state == .active { board.noteAccessTokenUse(found) }
            return found
        }
    }

    /// Who a request acts as.
    struct Caller: Sendable {
        /// Who acts, and how the change arrived (`via`).
        let principal: Principal
        /// Whether the caller may only read: a read-only access token, or a console session whose identity provider's
        /// groups give read-only.
        let readOnly: Bool
        /// What the caller proved who they are with, for sentences: `the access token 'laptop' of bob`, `the sign-in of
        /// bob with https://login.example.com`.
        let credential: String
        /// The access token, for a caller that came with one (the API; a console session opened with a token).
        let token: AccessToken?
        let address: String
    }

    /// The whole body of a request (bounded by the operation's limit).
    private func collect<R: OperationRequest>(_ type: R.Type, _ request: Request) async throws -> ByteBuffer? {
        switch await Body.collect(request, limit: R.bodyLimit ?? configuration.maxBodyBytes) {
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

    /// A successful answer: the value as the CLI's `--json` prints it, notes as `Plugboard-Note` headers.
    static func answer(_ body: Data, notes: [String]) -> Response {
        var response = Reply.json(.ok, ByteBuffer(bytes: body))
        for note in notes { response.headers.append(HTTPField(name: .plugboardNote, value: OperationsWire.headerValue(note))) }
        return response
    }
}

extension HTTPField.Name {
    static let plugboardNote = HTTPField.Name(OperationsWire.noteHeader)!
    static let plugboardOnBehalfOf = HTTPField.Name(OperationsWire.onBehalfOfHeader)!
    static let plugboardBackup = HTTPField.Name(BackupDownload.header)!
    static let plugboardChangeAt = HTTPField.Name(OperationsWire.changeAtHeader)!
    static let plugboardEmergency = HTTPField.Name(OperationsWire.emergencyHeader)!
    static let plugboardChangeRequest = HTTPField.Name(OperationsWire.changeRequestHeader)!
    /// On a refusal: the request's body was read whole, so the connection may stay open (removed before it is sent).
    static let plugboardBodyRead = HTTPField.Name("Plugboard-Body-Read")!
}

// In an extension, so that Swift still writes the caller's memberwise initializer.
extension OperationsRoutes.Caller {
    /// A caller with an access token.
    init(token: AccessToken, principal: Principal, address: String) {
        self.init(
            principal: principal, readOnly: token.readOnly, credential: "the access token '\(token.name)' of \(token.principal)",
            token: token, address: address)
    }
}
