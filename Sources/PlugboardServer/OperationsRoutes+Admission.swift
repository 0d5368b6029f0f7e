import Foundation
import HTTPTypes
import Hummingbird
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// What the operations API decides before it reads a byte of a request's body: whether the principal may send a body that
/// large, and whether the quotas have room for it or for an artifact. A refusal here leaves the body unread (its
/// connection is closed after the answer).
extension OperationsRoutes {
    /// Admits the body of a request that takes one: a declared length over the route's limit gets `413`; a body over
    /// the server's usual limit (or of undeclared length where the route takes more) needs a principal who holds a role
    /// on the board (`403` otherwise) and a place in ``BodyAdmission`` (`429` for the principal, `503` for the server).
    func admitBody<R: OperationRequest>(_ type: R.Type, _ request: Request, _ caller: Caller, lane: WorkerThreads) async throws
        -> BodyAdmission.Ticket?
    {
        guard ConnectionGuard.hasBody(request) else { return nil }
        let limit = R.bodyLimit ?? configuration.maxBodyBytes
        let declared = request.headers[.contentLength].flatMap(Int.init)
        if let declared, declared > limit { throw Self.tooLarge(limit) }
        let bytes = declared ?? limit
        guard bytes > configuration.maxBodyBytes else { return nil }
        try await requireRole(caller, lane: lane, toSend: "a request body larger than \(configuration.maxBodyBytes) bytes")
        switch bodies.admit(principal: caller.principal.osUser, bytes: bytes) {
        case .success(let ticket): return ticket
        case .failure(.principal):
            throw Self.busy(
                "\(caller.principal.osUser) already has \(bodies.perPrincipal) large request bodies in progress, from all of their access tokens; wait for them and try again",
                status: .tooManyRequests, code: .notAllowed)
        case .failure(.server):
            throw Self.busy(
                "the server is reading as many large request bodies as it holds at once; try again in a moment",
                status: .serviceUnavailable,
                code: .io)
        }
    }

    /// `PUT /api/admin/artifacts/{sha256}`: an artifact streamed to a private file while its digest is computed, kept for
    /// the `plugin register` that names it only when the digest matches. Any principal who may register a new plug-in
    /// uploads (a read-only token does not), within the quotas of ``StagedUploads``: one upload waiting at a time for a
    /// principal who holds no role on the board, more for one who does. Both are checked before the body is read.
    func upload(_ request: Request, _ context: ServeContext, _ caller: Caller) async throws -> Response {
        let sha256 = context.parameters.get("sha256") ?? ""
        try ArtifactUploads.check(sha256)
        let limit = configuration.adminMaxArtifactBytes
        let declared = request.headers[.contentLength].flatMap(Int.init)
        if let declared, declared > limit {
            throw Refusal(
                BoardError(.invalidInput, "the artifact is larger than \(limit >> 20) MiB; nothing was kept"), status: .contentTooLarge)
        }
        let board = self.board
        let uploads = self.uploads
        let principal = caller.principal.osUser
        let admitted = try await changes.run { () throws -> Result<StagedUploads.Reservation, StagedUploads.Refusal> in
            let holdsRole = try board.holdsRole(principal)
            return uploads.admit(
                principal: principal, holdsRole: holdsRole, bytes: declared ?? limit, folder: ArtifactUploads.folder(board))
        }
        let reservation: StagedUploads.Reservation
        switch admitted {
        case .success(let admitted): reservation = admitted
        case .failure(let refusal):
            throw Refusal(BoardError(refusal.status == .tooManyRequests ? .notAllowed : .io, refusal.sentence), status: refusal.status)
        }
        var kept = false
        defer { if !kept { reservation.cancel() } }
        let writer = try ArtifactUploads.Writer(board: board, sha256: sha256, limit: limit)
        do {
            for try await chunk in request.body {
                try chunk.withUnsafeReadableBytes { bytes in try writer.write(bytes) }
            }
        } catch let error as BoardError {
            throw error
        } catch {
            writer.abandon()
            throw BoardError(.io, "the upload was cut off before its end; send it again")
        }
        return try await Self.afterBody {
            try writer.finish()
            reservation.staged(at: ArtifactUploads.folder(board) + "/" + sha256, bytes: writer.size)
            kept = true
            return Reply.json(.ok, object: ["sha256": sha256, "size": writer.size])
        }
    }

    /// Passes when the caller's principal is a board admin or an owner or maintainer of some plug-in (those who may
    /// register versions of what is on the board); else `403`, saying the principal may not send `what`.
    private func requireRole(_ caller: Caller, lane: WorkerThreads, toSend what: String) async throws {
        let board = self.board
        let principal = caller.principal.osUser
        guard try await lane.run({ try board.holdsRole(principal) }) else {
            throw Refusal(
                BoardError(
                    .notAllowed,
                    "\(principal) may not send \(what): only board admins and the owners and maintainers of plug-ins may; ask a board admin to register the plug-in or to add \(principal) as its owner"
                ), status: .forbidden)
        }
    }

    /// `413`: the body is larger than `limit` bytes.
    static func tooLarge(_ limit: Int) -> Refusal {
        Refusal(BoardError(.invalidInput, "the request body is larger than \(limit) bytes; send less"), status: .contentTooLarge)
    }

    /// A refusal for a busy moment, with `Retry-After: 1`.
    static func busy(_ sentence: String, status: HTTPResponse.Status, code: BoardError.Code) -> Refusal {
        Refusal(BoardError(code, sentence), status: status).retryAfter(1)
    }
}
