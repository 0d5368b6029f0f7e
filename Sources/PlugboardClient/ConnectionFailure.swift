/// Why a request did not reach a served board, read from the HTTP client's error (NIO's descriptions are long and
/// repeat themselves): one table for the CLI's sentences and a host's few words.
package enum ConnectionFailure: Sendable, Hashable {
    /// The server refused the connection.
    case refused
    /// No connection within the connect timeout.
    case connectTimeout
    /// The server's certificate is not trusted here.
    case untrustedCertificate
    /// The TLS handshake failed.
    case handshake
    /// The exchange did not end within its deadline.
    case deadline
    /// The server sent nothing for the read timeout.
    case readTimeout
    /// The server closed the connection.
    case closed
    /// The server's name does not resolve.
    case unresolved
    /// The connection was reset.
    case reset
    /// The network is unreachable.
    case networkUnreachable
    /// There is no route to the server.
    case noRoute
    /// Anything else: the error's description, shortened.
    case other(String)

    /// The kind of failure `error` is.
    package init(_ error: any Error) {
        let text = String(describing: error)
        for (needles, failure) in Self.table where needles.contains(where: text.contains) {
            self = failure
            return
        }
        self = .other(text)
    }

    /// What each failure's description contains, the first match winning.
    private static let table: [([String], ConnectionFailure)] = [
        (["Connection refused", "connectionRefused", "ECONNREFUSED", "connect(descriptor:"], .refused),
        (["connectTimeout"], .connectTimeout),
        (["certificate"], .untrustedCertificate),
        (["handshake", "SSL", "TLS"], .handshake),
        (["deadlineExceeded"], .deadline),
        (["readTimeout"], .readTimeout),
        (["remoteConnectionClosed"], .closed),
        (["NXDOMAIN", "Name or service not known"], .unresolved),
        (["Connection reset"], .reset),
        (["Network is unreachable"], .networkUnreachable),
        (["No route to host"], .noRoute),
    ]
}

extension HTTPClientSettings {
    /// Why a request failed, in a few words, for a host's log and its load report.
    package func words(for error: any Error) -> String {
        switch ConnectionFailure(error) {
        case .refused: "connection refused"
        case .connectTimeout: "no connection within \(connectTimeout.components.seconds) s"
        case .untrustedCertificate:
            "its TLS certificate is not trusted here (add its CA to the system's trust store, or name it in PLUGBOARD_CA_FILE)"
        case .handshake: "the TLS handshake failed (is it https, with a certificate this machine trusts?)"
        case .deadline: "no answer in time"
        case .readTimeout: "no data for \(readTimeout.components.seconds) s"
        case .closed: "the server closed the connection"
        case .unresolved: "the name does not resolve"
        case .reset: "the connection was reset"
        case .networkUnreachable: "the network is unreachable"
        case .noRoute: "no route to the server"
        case .other(let text): text.count > 200 ? String(text.prefix(200)) + "…" : text
        }
    }

    /// Why a request to `server` failed, as the CLI's one sentence.
    package func sentence(for error: any Error, server: String) -> String {
        switch ConnectionFailure(error) {
        case .refused, .connectTimeout:
            "cannot reach the server at \(server): the connection was refused or timed out; is plugboard serve --admin running there?"
        case .untrustedCertificate, .handshake:
            "cannot reach the server at \(server): the TLS connection failed (its certificate is not trusted here, or it does not speak TLS)"
        case .deadline, .readTimeout:
            deadlineSentence(server)
        case .other(let text):
            "cannot reach the server at \(server) (\(text.count > 160 ? String(text.prefix(160)) + "…" : text))"
        default:
            "cannot reach the server at \(server): \(words(for: error))"
        }
    }

    /// The sentence for a request to `server` that did not end within `deadline` (by default ``deadline``).
    package func deadlineSentence(_ server: String, _ deadline: Duration? = nil) -> String {
        "the server at \(server) did not answer within \((deadline ?? self.deadline).components.seconds) seconds (the deadline of a whole request; set PLUGBOARD_TIMEOUT to change it)"
    }
}
