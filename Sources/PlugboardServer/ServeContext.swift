import Hummingbird
import HummingbirdCore
import NIOCore
import PlugboardStore

/// The request context of `plugboard serve`: Hummingbird's, the connection it came on, and who the request is from,
/// put here by the authentication middleware of its routes (``OperationsAuthentication``, ``APITokenAuthentication``).
struct ServeContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection (nil in tests that run the router without sockets).
    let channel: (any Channel)?
    /// The operations API's caller: set for every route under `/api/admin` but its document.
    var caller: OperationsRoutes.Caller?
    /// The API token of a request to the SDK routes, `/api/host` or `/metrics`.
    var token: APITokenCredential?
    /// The console's session: set for every console page behind ``ConsoleAuthentication``.
    var consoleSession: ConsoleSessionReference?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    var remoteAddress: SocketAddress? { channel?.remoteAddress }

    /// The operations API's caller; a route behind ``OperationsAuthentication`` always has one.
    func requireCaller() throws -> OperationsRoutes.Caller {
        guard let caller else { throw Refusal(.internalServerError, "the route has no authenticated caller") }
        return caller
    }

    /// The request's API token; a route behind ``APITokenAuthentication`` always has one.
    func requireToken() throws -> APITokenCredential {
        guard let token else { throw Refusal(.internalServerError, "the route has no authenticated token") }
        return token
    }
}
