import HTTPTypes
import Hummingbird
import PlugboardStore

/// The authentication of the routes that take API tokens (`plugboard token create`): the Unleash client API and OFREP
/// take SDK tokens, `/api/host` tokens for hosts, `/metrics` a token of any kind (``TokenCheck/Routes``). The token is
/// put in the context (``ServeContext/token``); a request without an accepted token is refused with `401`, one with a
/// token of another kind or for another environment with `403`. A failure of a route that is not a refusal is answered
/// with `500` and a sentence.
struct APITokenAuthentication: RouterMiddleware {
    typealias Context = ServeContext
    let tokens: TokenCheck
    /// Reads the tokens again for a token not known yet (one just created), at a bounded rate.
    let reread: TokenReread
    /// The kind of token the routes take.
    let routes: TokenCheck.Routes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.token = try authenticate(request)
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            throw error
        } catch {
            throw Refusal(.internalServerError, "the server failed to answer; try again")
        }
    }

    /// The request's token, accepted for ``routes``; otherwise the refusal (401 or 403).
    private func authenticate(_ request: Request) throws -> APITokenCredential {
        let requested = request.uri.queryParameters.get("environment") ?? request.headers[.plugboardEnvironment]
        var outcome = tokens.authenticate(request.headers, requestedEnvironment: requested, routes: routes)
        // A token created a moment ago is on the board before the next board check reloads the tokens: read them again
        // once (at a bounded rate) before refusing it.
        if case .failure(.unauthorized) = outcome, request.headers[.authorization] != nil, reread.rereadIfDue() {
            outcome = tokens.authenticate(request.headers, requestedEnvironment: requested, routes: routes)
        }
        switch outcome {
        case .success(let token): return token
        case .failure(.unauthorized(let message)): throw Refusal(.unauthorized, message)
        case .failure(.forbidden(let message)): throw Refusal(.forbidden, message)
        }
    }
}
