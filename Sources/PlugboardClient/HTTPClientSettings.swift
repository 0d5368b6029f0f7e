package import AsyncHTTPClient
import Foundation
package import NIOCore
import NIOSSL
package import PlugboardModel

/// How Plugboard's HTTP clients reach a served board: the CLI's `--server` client and a host that reads a served
/// board share this one configuration, and differ only in the waits each can afford.
///
/// - Trust: the system's trust roots, or with `$PLUGBOARD_CA_FILE` the certificates of that PEM file (a private CA, a
///   self-signed server). Redirects are never followed: a token goes to the server named, nowhere else.
/// - Waits: a connect timeout, a read timeout (restarted by every byte) and a deadline for a whole exchange.
///   ``cli`` waits long (a large listing from a busy server), and `$PLUGBOARD_TIMEOUT` (seconds) sets its deadline;
///   ``host`` gives up on a connection at once and starts from its cache (it reconnects on its own, with backoff).
/// - Failures: ``words(for:)`` and ``sentence(for:server:)`` say why a request did not reach the server.
package struct HTTPClientSettings: Sendable {
    /// How long a connection may take to open.
    package let connectTimeout: Duration
    /// How long the server may send nothing once connected.
    package let readTimeout: Duration
    /// How long a whole exchange may take (connecting, sending, the answer's head and its last byte).
    package let deadline: Duration
    /// Whether a refused connection is retried (else it fails at once).
    package let retriesConnections: Bool
    /// The PEM file of the certificates to trust instead of the system's, from `$PLUGBOARD_CA_FILE`.
    package let caFile: String?

    /// The CLI's `--server` client: 10 s to connect, 120 s of silence, and a deadline of 120 s or `$PLUGBOARD_TIMEOUT`
    /// seconds (1 to 86,400) for a whole request.
    package static let cli = HTTPClientSettings(
        connectTimeout: .seconds(10), readTimeout: .seconds(120), deadline: timeout(ProcessInfo.processInfo.environment),
        retriesConnections: true, caFile: caFile(ProcessInfo.processInfo.environment))

    /// A host reading a served board: 1 s to connect, with no retry (a host whose server is down starts from its cache
    /// at once), 45 s of silence on the event stream, and 20 s for a server that accepted the connection to answer a
    /// snapshot, stream or load report request (a busy server is not a server that is down).
    package static let host = HTTPClientSettings(
        connectTimeout: .seconds(1), readTimeout: .seconds(45), deadline: .seconds(20), retriesConnections: false,
        caFile: caFile(ProcessInfo.processInfo.environment))

    /// The process's client for ``cli``, made on first use (the environment does not change while it runs).
    package static let cliClient = Result { () throws(BoardError) in try cli.makeClient() }
    /// The process's client for ``host``, made on first use.
    package static let hostClient = Result { () throws(BoardError) in try host.makeClient() }

    /// The deadline `$PLUGBOARD_TIMEOUT` sets in `environment`: its whole seconds from 1 to 86,400, else 120 s.
    package static func timeout(_ environment: [String: String]) -> Duration {
        guard let seconds = Int(environment["PLUGBOARD_TIMEOUT"] ?? ""), seconds > 0, seconds <= 86_400 else { return .seconds(120) }
        return .seconds(seconds)
    }

    /// `$PLUGBOARD_CA_FILE` in `environment`, unless unset or empty.
    package static func caFile(_ environment: [String: String]) -> String? {
        environment["PLUGBOARD_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// An HTTP client with these settings.
    ///
    /// - Throws: ``PlugboardModel/BoardError`` with code `invalidInput` when ``caFile`` is not a readable PEM file of
    ///   certificates.
    package func makeClient() throws(BoardError) -> HTTPClient {
        var configuration = HTTPClient.Configuration(
            timeout: .init(connect: Self.timeAmount(connectTimeout), read: Self.timeAmount(readTimeout)))
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.retryConnectionEstablishment = retriesConnections
        if let caFile {
            let certificates: [NIOSSLCertificate]
            do { certificates = try NIOSSLCertificate.fromPEMFile(caFile) } catch {
                throw BoardError(.invalidInput, "$PLUGBOARD_CA_FILE (\(caFile)) is not a readable PEM file of certificates")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(certificates)
            configuration.tlsConfiguration = tls
        }
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// ``deadline`` as NIO's time amount, for `HTTPClient.execute(_:timeout:)`.
    package var deadlineAmount: TimeAmount { Self.timeAmount(deadline) }

    /// A value with each stored property given.
    package init(connectTimeout: Duration, readTimeout: Duration, deadline: Duration, retriesConnections: Bool, caFile: String?) {
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.deadline = deadline
        self.retriesConnections = retriesConnections
        self.caFile = caFile
    }

    /// `duration` in nanoseconds, for NIO's and Dispatch's deadlines.
    package static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount { .nanoseconds(nanoseconds(duration)) }
}
