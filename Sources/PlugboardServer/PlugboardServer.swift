import Foundation
import HTTPTypes
public import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
public import PlugboardModel
public import PlugboardOperations
package import PlugboardStore
import ServiceLifecycle
import UnixSignals

/// `plugboard serve`: the board's flags over HTTP, for every Unleash SDK (client API: features with ETag, delta,
/// server-sent-event streaming, register, metrics) and every OpenFeature SDK (OFREP).
///
/// Every route except `GET /health` needs an API token (`plugboard token create`) of the route's kind: SDK routes take
/// SDK tokens, `/api/host/` takes tokens for hosts. An event stream ends when its token is revoked or expires. The
/// server reads the board and never writes a flag definition (it writes rollouts' steps and the guard's aborts, see
/// ``ServerConfiguration/rolloutInterval``); what SDKs and remote hosts report (registrations, usage
/// counts, load reports) is aggregated in memory and written in batches to the telemetry file beside the board, never
/// to the board itself. A change committed by any process reaches connected streams within
/// ``ServerConfiguration/pollInterval`` plus the time to compute the delta.
public struct PlugboardServer: Sendable {
    let board: any ServedBoard
    let configuration: ServerConfiguration
    let metrics = ServerMetrics()
    let tokens: TokenCheck
    let watcher: BoardWatcher
    let usage: UsageBuffer
    let connections: ConnectionGuard
    let health: HealthCheck
    /// The operations API, when ``ServerConfiguration/admin`` is on.
    let admin: OperationsRoutes?
    /// The rollouts' guard and schedule, for a board file (nil for other served boards).
    let rollouts: BoardSchedule?
    /// Writes the refusals the operations API counts, with the operations API.
    let refusals: RefusalWriter?

    /// Creates a server for `board`, as `plugboard serve` does: it reads the board, writes telemetry beside it, signs
    /// hosts' snapshots with the board's key file (`<board>.board-key`, made on first use) and, with
    /// ``ServerConfiguration/admin``, performs the operations its callers send.
    public init(board: BoardFile, configuration: ServerConfiguration = ServerConfiguration()) throws(BoardError) {
        var configuration = configuration
        if board.path != ":memory:" { configuration.boardKeys = try BoardKeyring.loadOrCreate(boardPath: board.path) }
        self.init(board: board.board, configuration: configuration)
    }

    /// Creates a server for `board` with the configuration's keys as they are.
    package init(board: Board, configuration: ServerConfiguration = ServerConfiguration()) {
        self.init(
            served: board, configuration: configuration,
            admin: configuration.admin ? OperationsRoutes(board: board, configuration: configuration) : nil,
            rollouts: configuration.rolloutInterval.map { BoardSchedule(board: board, interval: $0, logger: configuration.logger) })
    }

    /// Creates a server for any ``ServedBoard`` (tests serve a board in memory this way).
    package init(
        served board: any ServedBoard, configuration: ServerConfiguration = ServerConfiguration(), admin: OperationsRoutes? = nil,
        rollouts: BoardSchedule? = nil
    ) {
        self.admin = admin
        self.rollouts = rollouts
        refusals = admin.map { RefusalWriter(board: $0.board, logger: configuration.logger) }
        self.board = board
        self.configuration = configuration
        tokens = TokenCheck(clock: configuration.clock)
        watcher = BoardWatcher(board: board, tokens: tokens, metrics: metrics, configuration: configuration)
        usage = UsageBuffer(board: board, tokens: tokens, metrics: metrics, configuration: configuration)
        connections = ConnectionGuard(maxRequestsPerClient: configuration.maxRequestsPerClient)
        health = HealthCheck(board: board)
    }

    /// Serves until SIGTERM or SIGINT, then closes event streams, finishes requests in flight, writes buffered usage
    /// and returns.
    ///
    /// - Parameter onListening: Called with the bound port once the server accepts connections.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let application = try makeApplication(onListening: onListening)
        let group = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: configuration.logger))
        try await group.run()
    }

    /// The Hummingbird application (server plus board watcher and usage writer), for tests and embedding.
    public func makeApplication(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        do { try watcher.start() } catch { throw error }
        let server: HTTPServerBuilder
        let idle = TimeAmount.seconds(max(1, configuration.idleTimeout.components.seconds))
        let connections = self.connections
        let http1 = HTTPServerBuilder { responder in
            HTTP1Channel(responder: connections.wrap(responder), configuration: HTTP1Channel.Configuration(idleTimeout: idle))
        }
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
            server = try .tls(http1, tlsConfiguration: ServerTLS.configuration(certificate: certificate, key: key))
        } else {
            server = http1
        }
        let logger = configuration.logger
        var services: [any Service] = [watcher, usage, health]
        if let relay = watcher.hosts.relay { services.append(relay) }
        if let rollouts { services.append(rollouts) }
        if let refusals { services.append(refusals) }
        if let settings = configuration.webhooks, let board = board as? Board {
            services.append(WebhookService(board: board, settings: settings, logger: logger, boardChanges: watcher.changes))
        }
        if let settings = configuration.advisoryFeeds, let board = board as? Board {
            services.append(AdvisoryFeedService(board: board, settings: settings, logger: logger))
        }
        if let admin, let address = configuration.adminAddress {
            // The operations API on an address of its own: its own listener, the same connection guard.
            let adminRouter = Router(context: ServeContext.self)
            adminRouter.middlewares.add(AccessLogMiddleware(metrics: metrics, logger: logger))
            adminRouter.middlewares.add(ConnectionGuardMiddleware(connections: connections))
            admin.add(to: adminRouter)
            let adminServer: HTTPServerBuilder
            if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsKeyPath {
                adminServer = try .tls(http1, tlsConfiguration: ServerTLS.configuration(certificate: certificate, key: key))
            } else {
                adminServer = http1
            }
            services.append(
                Application(
                    router: adminRouter, server: adminServer,
                    configuration: .init(address: .hostname(address.host, port: address.port), serverName: "plugboard"),
                    onServerRunning: { channel in
                        logger.notice("serving the operations API", metadata: ["address": "\(channel.localAddress?.description ?? "?")"])
                    },
                    logger: logger))
        }
        return Application(
            router: makeRouter(),
            server: server,
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "plugboard",
                availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxConnections, logger: logger)),
            services: services,
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.notice("serving the board", metadata: ["address": "\(channel.localAddress?.description ?? "?")"])
                await onListening(port)
            },
            logger: logger
        )
    }

    func makeRouter() -> Router<ServeContext> {
        let router = Router(context: ServeContext.self)
        router.middlewares.add(AccessLogMiddleware(metrics: metrics, logger: configuration.logger))
        router.middlewares.add(ConnectionGuardMiddleware(connections: connections))
        let api = ClientAPIRoutes(
            watcher: watcher, usage: usage, configuration: configuration,
            tokenReread: TokenReread(board: board, tokens: tokens, clock: configuration.clock))
        api.add(to: router)
        OFREPRoutes(api: api).add(to: router)
        HostRoutes(api: api).add(to: router)
        if let admin, configuration.adminAddress == nil { admin.add(to: router) }
        let health = self.health
        router.get("/health") { _, _ in
            if let problem = await health.problem() {
                return Reply.json(.serviceUnavailable, object: ["status": "unhealthy", "message": problem])
            }
            return Reply.json(.ok, object: ["status": "ok"])
        }
        router.group("/metrics").add(middleware: api.authentication(.any)).get { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        return router
    }

    /// Checks the board once for changes now (tests; the watcher does it every ``ServerConfiguration/pollInterval``).
    func checkBoard() { watcher.check() }

    /// Writes buffered usage now (tests; the writer does it every ``ServerConfiguration/usageFlushInterval``).
    func flushUsage() { usage.flush() }
}
