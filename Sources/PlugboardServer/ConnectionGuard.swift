import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import Synchronization

/// Keeps rejected requests and crowds of connections from holding the server's memory:
///
/// - a request refused with a body the server did not read (no token, a body over the limit, too many requests) is
///   answered with `Connection: close`, and the connection is closed right after the answer: the body is never read
///   into memory, and the connection does not wait for the idle timeout;
/// - one client address has at most ``ServerConfiguration/maxRequestsPerClient`` requests in progress (event streams
///   and health checks apart); the rest get `429` and a closed connection.
///
/// The number of open connections is bounded by Hummingbird (``ServerConfiguration/maxConnections``): past it, the
/// server stops accepting until one closes.
final class ConnectionGuard: Sendable {
    let maxRequestsPerClient: Int
    /// Connections to close once their current answer is written (by object identity).
    private let closing = Mutex<Set<ObjectIdentifier>>([])
    private let inFlight = Mutex<[String: Int]>([:])

    init(maxRequestsPerClient: Int) {
        self.maxRequestsPerClient = maxRequestsPerClient
    }

    /// Wraps Hummingbird's responder: after the answer, closes a connection marked by ``closeAfterAnswer(_:)``. Its
    /// input is closed (Hummingbird then stops reading it, flushes the answer and closes the connection, as it does at
    /// shutdown), and the whole connection a moment later whatever happens (a TLS connection cannot close its input alone).
    func wrap(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        { request, writer, channel in
            let id = ObjectIdentifier(channel)
            defer {
                if self.closing.withLock({ $0.remove(id) != nil }) {
                    channel.close(mode: .input, promise: nil)
                    channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
                }
            }
            try await responder(request, writer, channel)
        }
    }

    /// Marks the connection to be closed once the current answer is written.
    func closeAfterAnswer(_ channel: (any Channel)?) {
        guard let channel else { return }
        _ = closing.withLock { $0.insert(ObjectIdentifier(channel)) }
    }

    /// Takes a place for a request from `address`; false when the client has too many in progress.
    func enter(_ address: String) -> Bool {
        inFlight.withLock { counts in
            let count = counts[address, default: 0]
            guard count < maxRequestsPerClient else { return false }
            counts[address] = count + 1
            return true
        }
    }

    func leave(_ address: String) {
        inFlight.withLock { counts in
            let count = (counts[address] ?? 1) - 1
            counts[address] = count > 0 ? count : nil
        }
    }

    /// Whether a request carries a body (a length above zero, or chunks).
    static func hasBody(_ request: Request) -> Bool {
        if let length = request.headers[.contentLength].flatMap(Int.init) { return length > 0 }
        return request.headers[.transferEncoding] != nil
    }
}

/// Applies ``ConnectionGuard`` to every request.
struct ConnectionGuardMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let connections: ConnectionGuard

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        // Event streams last for hours and a health check costs nothing: neither takes a client's place.
        let exempt = path == "/api/client/streaming" || path == "/api/host/stream" || path == "/health"
        let address: String? = exempt ? nil : context.remoteAddress?.ipAddress
        if let address {
            guard connections.enter(address) else {
                let refusal = Refusal(.tooManyRequests, "this client has too many requests in progress; wait for them and try again")
                return close(refusal.retryAfter(1).response(from: request, context: context), context)
            }
        }
        defer { if let address { connections.leave(address) } }
        var answer: Response
        do {
            answer = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // A refusal, or no route (an unknown path or method): answered here, so that the connection can be closed
            // after the answer.
            answer = try error.response(from: request, context: context)
        } catch {
            if ConnectionGuard.hasBody(request) { connections.closeAfterAnswer(context.channel) }
            throw error
        }
        // A refused request's body may be unread (the token is checked first, the length before reading): never read it,
        // close the connection after the answer instead, unless the route says it read the body whole; the answer says
        // so (a client that kept the connection would send its next request after that body).
        let bodyRead = answer.headers[HTTPField.Name.plugboardBodyRead] != nil
        answer.headers[HTTPField.Name.plugboardBodyRead] = nil
        if answer.status.code >= 400, ConnectionGuard.hasBody(request), !bodyRead { return close(answer, context) }
        return answer
    }

    private func close(_ response: Response, _ context: Context) -> Response {
        var response = response
        response.headers[.connection] = "close"
        connections.closeAfterAnswer(context.channel)
        return response
    }
}
