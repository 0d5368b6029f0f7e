import Foundation
import HTTPTypes
import Hummingbird
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// The authentication of an operations API route: the access token presented (`Authorization: Bearer pba_…`) is looked up
/// on the board and the caller put in the context (``ServeContext/caller``), acting as the token's principal; a
/// read-only token is refused a route that writes, a token that may only stop every route but the alerting trigger's
/// (``AlertTrigger``), and the refusal recorded in the audit log as a refused `action` on the request
/// (`POST /api/admin/…`).
///
/// Each request looks its token up on the board, so a revoked or expired token is refused from its next request. A
/// token seen before is looked up in the route's lane, one not seen before (``RecognizedTokens``) in the guesses' lane,
/// so that guesses never queue in front of the route's work. Failed authentications are counted per client address and
/// from all addresses (``FailedAuthentications``): past a limit, failing requests get `429` with `Retry-After`; a
/// request whose token is accepted is always answered. A failure of the route is answered as
/// ``Refusal/answering(_:)`` says.
struct OperationsAuthentication: RouterMiddleware {
    typealias Context = ServeContext
    let board: Board
    let failures: FailedAuthentications
    let recognized: RecognizedTokens
    /// The lane of tokens not seen before.
    let guesses: WorkerThreads
    /// Whether the route writes: a read-only token is refused a write.
    let access: OperationAccess
    /// The route's action in the audit log (`plugin.kill`).
    let action: AuditAction
    /// The route's lane.
    let lane: WorkerThreads
    /// Whether the route takes a token that may only stop (``AccessTokenScope/stop``): the alerting trigger's does;
    /// every other route refuses one with `403`.
    var acceptsStopTokens = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            var context = context
            let caller = try await authenticate(request, context)
            if caller.token?.stopsOnly == true, !acceptsStopTokens { try await refuseStopOnly(request, caller) }
            if access != .read, caller.readOnly { try await refuseReadOnly(request, caller) }
            context.caller = caller
            return try await next(request, context)
        } catch {
            throw Refusal.answering(error)
        }
    }

    private func authenticate(_ request: Request, _ context: Context) async throws -> OperationsRoutes.Caller {
        let address = context.remoteAddress?.ipAddress ?? "unknown"
        func refuse(_ sentence: String, counted: Bool = true) -> Refusal {
            // Only failures are limited, never an address: a token the board accepts is answered whatever was sent
            // before it. A request without a token guesses nothing and does not count.
            if counted, let wait = failures.fail(address) {
                return Refusal(
                    BoardError(
                        .notAllowed,
                        "too many failed authentications from \(address) or from all clients; this request's token was not accepted, and failing requests get this answer for \(wait) seconds"
                    ), status: .tooManyRequests
                ).retryAfter(wait)
            }
            return Refusal(BoardError(.notAllowed, sentence), status: .unauthorized)
                .with(.wwwAuthenticate, "Bearer realm=\"plugboard-admin\"")
        }
        guard var secret = request.headers[.authorization]?.httpTrimmed, !secret.isEmpty else {
            throw refuse("no access token: send Authorization: Bearer TOKEN, from plugboard access-token create", counted: false)
        }
        if secret.lowercased().hasPrefix("bearer ") { secret = secret.dropFirst(7).httpTrimmed }
        let presented = secret
        // A token not seen before is looked up in a lane of its own: guesses never queue in front of the route's work.
        let seen = recognized.contains(secret: presented)
        let token = try await OperationsRoutes.lookUp(presented, on: board, in: seen ? lane : guesses)
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
        return OperationsRoutes.Caller(token: token, principal: principal, address: address)
    }

    /// Refuses a write to a read-only token, and records the refusal in the audit log.
    private func refuseReadOnly(_ request: Request, _ caller: OperationsRoutes.Caller) async throws {
        try await refuse(
            request, caller,
            BoardError(.notAllowed, "\(caller.credential) is read-only; use a token created without --read-only to change the board"))
    }

    /// Refuses any route but the alerting trigger to a token that may only stop, and records the refusal in the audit log.
    private func refuseStopOnly(_ request: Request, _ caller: OperationsRoutes.Caller) async throws {
        try await refuse(
            request, caller,
            BoardError(
                .notAllowed,
                "\(caller.credential) may only stop plug-ins through POST \(AlertTrigger.path); use a token created without --scope stop for anything else"
            ))
    }

    /// Records `error` as a refusal of the request in the audit log, and throws it.
    private func refuse(_ request: Request, _ caller: OperationsRoutes.Caller, _ error: BoardError) async throws {
        let (board, principal) = (self.board, caller.principal)
        let refusal = AuditEntry(action: action, targetType: "admin_api", targetID: "\(request.method.rawValue) \(request.uri.path)")
        try await lane.run { board.recordRefusal(refusal, by: principal, because: error) }
        throw error
    }
}
