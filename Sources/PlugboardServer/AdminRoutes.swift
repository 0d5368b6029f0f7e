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
/// access token presented (`Authorization: Bearer pba_…`), with that principal's rights; read-only tokens only read.
///
/// Each request looks its token up on the board, so a revoked or expired token is refused from its next request.
/// Failed authentications are counted per client address and from all addresses (``FailedAuthentications``): past a
/// limit, failing requests get `429` with `Retry-After`; a request whose token is accepted is always answered. A request
/// is authorized before its body is read: a large body (``BodyAdmission``) needs a principal who holds a role on the
/// board and a place in their quotas; an artifact upload (``StagedUploads``) a token that is not read-only and a place in
/// its principal's quota, larger for a principal who holds a role. Changes are recorded in the audit log
/// with the principal as actor and `token NAME from ADDRESS`.
package struct AdminRoutes: Sendable {
    let board: Board
    let configuration: ServerConfiguration
    let failures: FailedAuthentications
    let bodies: BodyAdmission
    let uploads: StagedUploads
    let recognized: RecognizedTokens
    /// Blocking work (the board's connection) runs off the threads that answer requests, in four lanes: reads on two
    /// threads, changes on one, the stops (kill switches, aborted rollouts, disables, yanks and revocations) on one of
    /// their own, so that no flood of reads or changes a token holder sends queues in front of a stop, and the
    /// authentication of tokens not seen before (``RecognizedTokens``) on one more, so that no flood of guessed tokens
    /// does either. Only a request whose token was accepted reaches the stops' lane.
    let workers: WorkerThreads
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
        workers = WorkerThreads(name: "plugboard-admin", count: 2)
        changes = WorkerThreads(name: "plugboard-admin-changes", count: 1)
        stops = WorkerThreads(name: "plugboard-admin-stops", count: 1)
        guesses = WorkerThreads(name: "plugboard-admin-guesses", count: 1)
    }

    /// The lane of an operation's work (the authentication of a token seen before included): its declared access names it.
    func lane(_ access: OperationAccess) -> WorkerThreads {
        switch access {
        case .read: workers
        case .write: changes
        case .stop: stops
        }
    }

    /// The path prefix of every admin route.
    static let prefix = "/api/admin"

    func add(to router: Router<ServeContext>) {
        for type in AdminAPI.requests { add(type, to: router) }
        router.get("\(Self.prefix)/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: AdminOpenAPI.document())))
        }
        router.put("\(Self.prefix)/artifacts/:sha256") { request, context in
            await self.respond(request, context, access: .write, action: "artifact.upload") { caller in
                try await self.upload(request, context, caller)
            }
        }
        router.get("\(Self.prefix)/backup") { request, context in
            await self.respond(request, context, access: .read, action: "board.backup") { caller in try await self.backup(caller) }
        }
        router.get("\(Self.prefix)/whoami") { request, context in
            await self.respond(request, context, access: .read, action: "whoami") { caller in
                Reply.json(
                    .ok,
                    object: [
                        "principal": caller.token.principal, "token": caller.token.name, "read_only": caller.token.readOnly,
                        "address": caller.address,
                    ])
            }
        }
    }

    /// `POST /api/admin/{name}`: the operation `R`, its request the JSON body.
    private func add<R: AdminRequest>(_ type: R.Type, to router: Router<ServeContext>) {
        let lane = self.lane(R.access)
        router.post(RouterPath(Self.prefix + "/" + R.name)) { request, context in
            await self.respond(request, context, access: R.access == .read ? .read : .write, action: R.name, lane: lane) { caller in
                let ticket = try await self.admitBody(R.self, request, caller, lane: lane)
                defer { ticket?.leave() }
                let body = try await self.collect(R.self, request)
                // From here on the body is read: a refusal keeps the connection open.
                return await Self.afterBody {
                    let actor = caller.principal
                    let board = self.board
                    // Decoded, performed and encoded in the lane: a large body's decoding or a large answer's encoding
                    // never holds the threads that answer requests.
                    let (encoded, notes) = try await lane.run { () throws -> (Data, [String]) in
                        let decoded = try R.fromWire(body.map { Data($0.readableBytesView) } ?? Data())
                        let reply = try decoded.perform(on: board, as: actor)
                        return (R.encodeResponse(reply.value), reply.notes)
                    }
                    return Self.answer(encoded, notes: notes)
                }
            }
        }
    }

    /// `GET /api/admin/backup`: a verified backup, for board admins, streamed from a private file removed once sent.
    private func backup(_ caller: Caller) async throws -> Response {
        let board = self.board
        let actor = caller.principal
        let (path, description) = try await workers.run { () throws -> (String, AdminBackup.Description) in
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

    /// Authenticates the request, checks the token may do `access`, runs `body`, and turns every failure into the
    /// answer it deserves (a ``BoardError`` keeps its code and sentence). A write refused to a read-only token is
    /// recorded in the audit log as a refused `action` on the request (`POST /api/admin/…`).
    private func respond(
        _ request: Request, _ context: ServeContext, access: AdminRoute.Access, action: String, lane: WorkerThreads? = nil,
        _ body: (Caller) async throws -> Response
    ) async -> Response {
        do {
            let lane = lane ?? (access == .read ? workers : changes)
            let caller = try await authenticate(request, context, lane: lane)
            if access == .write, caller.token.readOnly {
                let error = BoardError(
                    .notAllowed,
                    "the access token '\(caller.token.name)' of \(caller.token.principal) is read-only; use a token created without --read-only to change the board"
                )
                let (board, principal) = (self.board, caller.principal)
                let refusal = AuditEntry(
                    action: action, targetType: "admin_api", targetID: "\(request.method.rawValue) \(request.uri.path)")
                try await lane.run { board.recordRefusal(refusal, by: principal, because: error) }
                throw error
            }
            return try await body(caller)
        } catch {
            return Self.answer(for: error)
        }
    }

    /// The answer a failure deserves: a ``ResponseFailure``'s own, a ``BoardError``'s code and sentence, else a `500`.
    static func answer(for error: any Error) -> Response {
        switch error {
        case let failure as ResponseFailure: failure.response
        case let error as BoardError: refusal(error)
        default: refusal(BoardError(.io, "the request failed: \(error)"))
        }
    }

    private func authenticate(_ request: Request, _ context: ServeContext, lane: WorkerThreads) async throws -> Caller {
        let address = context.remoteAddress?.ipAddress ?? "unknown"
        func refuse(_ sentence: String, counted: Bool = true) -> ResponseFailure {
            // Only failures are limited, never an address: a token the board accepts is answered whatever was sent
            // before it. A request without a token guesses nothing and does not count.
            if counted, let wait = failures.fail(address) {
                var response = Self.refusal(
                    BoardError(
                        .notAllowed,
                        "too many failed authentications from \(address) or from all clients; this request's token was not accepted, and failing requests get this answer for \(wait) seconds"
                    ), status: .tooManyRequests)
                response.headers[.retryAfter] = String(wait)
                return ResponseFailure(response)
            }
            var response = Self.refusal(BoardError(.notAllowed, sentence), status: .unauthorized)
            response.headers[.wwwAuthenticate] = "Bearer realm=\"plugboard-admin\""
            return ResponseFailure(response)
        }
        guard var secret = request.headers[.authorization]?.trimmingCharacters(in: .whitespaces), !secret.isEmpty else {
            throw refuse("no access token: send Authorization: Bearer TOKEN, from plugboard access-token create", counted: false)
        }
        if secret.lowercased().hasPrefix("bearer ") { secret = String(secret.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
        let board = self.board
        let presented = secret
        // A token not seen before is looked up in a lane of its own: guesses never queue in front of the route's work.
        let seen = recognized.contains(secret: presented)
        let token = try await (seen ? lane : guesses).run { () throws -> AccessToken? in
            let found = try board.accessToken(secret: presented)
            if let found, found.state == .active { board.noteAccessTokenUse(found) }
            return found
        }
        guard let token else { throw refuse("this access token is not known to the board; create one with plugboard access-token create") }
        recognized.note(secret: presented, accepted: token.state == .active)
        switch token.state {
        case .active: break
        case .revoked: throw refuse("the access token '\(token.name)' of \(token.principal) was revoked; create a new one")
        case .expired: throw refuse("the access token '\(token.name)' of \(token.principal) has expired; create a new one")
        }
        let onBehalfOf = request.headers[.plugboardOnBehalfOf]
        let principal = try Principal(
            osUser: token.principal, onBehalfOf: onBehalfOf, via: "token \(token.name) from \(address)", accessToken: token.name)
        return Caller(token: token, principal: principal, address: address)
    }

    /// The whole body of a request (bounded by the operation's limit).
    private func collect<R: AdminRequest>(_ type: R.Type, _ request: Request) async throws -> ByteBuffer? {
        switch await Body.collect(request, limit: R.bodyLimit ?? configuration.maxBodyBytes) {
        case .success(let collected): return collected
        case .failure(.tooLarge(let limit)): throw Self.tooLarge(limit)
        case .failure(.unreadable): throw BoardError(.invalidInput, "the request body could not be read; send it again")
        }
    }

    /// Runs `body` once the request's body is read: a refusal is marked (``HTTPField/Name/plugboardBodyRead``) so that
    /// the connection stays open; ``ConnectionGuardMiddleware`` closes one after a refusal only while a body may be unread.
    static func afterBody(_ body: () async throws -> Response) async -> Response {
        var response: Response
        do { response = try await body() } catch { response = answer(for: error) }
        if response.status.code >= 400 { response.headers[.plugboardBodyRead] = "1" }
        return response
    }

    /// A successful answer: the value as the CLI's `--json` prints it, notes as `Plugboard-Note` headers.
    static func answer(_ body: Data, notes: [String]) -> Response {
        var response = Reply.json(.ok, ByteBuffer(bytes: body))
        for note in notes { response.headers.append(HTTPField(name: .plugboardNote, value: AdminWire.headerValue(note))) }
        return response
    }

    /// A refusal: `{"error": CODE, "message": SENTENCE}` with the status the code deserves.
    static func refusal(_ error: BoardError, status: HTTPResponse.Status? = nil) -> Response {
        let status = status ?? HTTPResponse.Status(code: AdminWire.status(for: error.code))
        return Reply.json(status, object: ["error": error.code.rawValue, "message": error.message])
    }
}

extension HTTPField.Name {
    static let plugboardNote = HTTPField.Name(AdminWire.noteHeader)!
    static let plugboardOnBehalfOf = HTTPField.Name(AdminWire.onBehalfOfHeader)!
    static let plugboardBackup = HTTPField.Name(AdminBackup.header)!
    /// On a refusal: the request's body was read whole, so the connection may stay open (removed before it is sent).
    static let plugboardBodyRead = HTTPField.Name("Plugboard-Body-Read")!
}
