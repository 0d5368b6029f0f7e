import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import PlugboardNetwork
import Synchronization

/// The one way this module calls out: bounded, JSON only, to public addresses.
///
/// Every call resolves the host first, checks every address it resolves to (see `AddressScope` in PlugboardNetwork), then connects to
/// one checked address (the TLS server name stays the host's), so that a second DNS answer cannot send the request
/// elsewhere. `https` only, except a loopback host; redirects are never followed (a 3xx answer is an error); the
/// connection must open within ``connectTimeout`` and the whole exchange end within ``requestTimeout``; a body over
/// ``bodyLimit`` bytes is refused.
public struct OutboundHTTP: Sendable {
    /// How long opening a connection may take (3 s).
    public var connectTimeout: Duration
    /// How long a whole exchange may take, the body read included (10 s).
    public var requestTimeout: Duration
    /// The largest answer body read, in bytes (256 KiB).
    public var bodyLimit: Int
    /// Whether hosts on private, carrier-grade NAT, unique-local and loopback addresses may be called (an
    /// on-premises provider). Link-local addresses (169.254/16, fe80::/10), where cloud metadata services answer, and
    /// reserved ones are never called.
    public var allowPrivateNetwork: Bool
    /// Whether hosts on loopback addresses may be called (a provider on this machine, in tests): set by
    /// ``OIDCProvider/discover(_:http:logger:)`` when the issuer itself is on loopback.
    public var allowLoopback: Bool
    /// Whether plain `http` may be called on any host (a webhook endpoint), not only on a loopback one.
    public var allowPlainHTTP = false
    /// Who is called, for the sentences of refusals: the identity provider, or a webhook endpoint.
    public var party = "the identity provider"
    /// Where connections are kept open between calls, or nil to open and close one for every call.
    public var connections: OutboundConnections?

    /// A client with the house bounds.
    public init(
        connectTimeout: Duration = .seconds(3), requestTimeout: Duration = .seconds(10), bodyLimit: Int = 256 << 10,
        allowPrivateNetwork: Bool = false, allowLoopback: Bool = false
    ) {
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.bodyLimit = bodyLimit
        self.allowPrivateNetwork = allowPrivateNetwork
        self.allowLoopback = allowLoopback
    }

    /// An answer: its status and its JSON body.
    struct Answer: Sendable {
        var status: Int
        var body: Data
    }

    /// Whether `host` names this machine: `localhost`, 127.0.0.0/8 or `::1`.
    static func isLoopbackHost(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" { return true }
        return NetworkAddress(bare)?.scope == .loopback
    }

    /// GET `url`, with `Accept: application/json` and an optional bearer token.
    func get(_ url: URL, what: String, bearer: String? = nil) async throws(IdentityError) -> Answer {
        var headers: [(String, String)] = []
        if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
        return try await exchange(url, what: what, method: .GET, headers: headers, body: nil)
    }

    /// POST `form` to `url` as `application/x-www-form-urlencoded`.
    func post(_ url: URL, what: String, form: [(String, String)], headers: [(String, String)]) async throws(IdentityError) -> Answer {
        let body = form.map { "\(Self.formEncoded($0.0))=\(Self.formEncoded($0.1))" }.joined(separator: "&")
        return try await exchange(
            url, what: what, method: .POST, headers: headers + [("Content-Type", "application/x-www-form-urlencoded")],
            body: Data(body.utf8))
    }

    /// `value` encoded for a form body (RFC 6749 appendix B): unreserved characters kept, the rest percent-encoded.
    static func formEncoded(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    private func exchange(
        _ url: URL, what: String, method: HTTPMethod, headers: [(String, String)], body: Data?
    ) async throws(IdentityError) -> Answer {
        let (limit, party) = (bodyLimit, party)
        return try await send(url, what: what, method: method, headers: [("Accept", "application/json")] + headers, body: body) {
            await Self.read($0, limit: limit, party: party, what: what)
        }
    }

    /// Sends one request within every bound of this client, and answers what `read` makes of the response: the host
    /// resolved and every address checked, then connected to a checked one; no redirects followed; the connection
    /// within ``connectTimeout`` and the whole exchange, `read` included, within ``requestTimeout``.
    func send<T: Sendable>(
        _ url: URL, what: String, method: HTTPMethod, headers: [(String, String)], body: Data?,
        read: @escaping @Sendable (HTTPClientResponse) async -> Result<T, IdentityError>
    ) async throws(IdentityError) -> T {
        let target = try await checkedTarget(url, what: what)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Self.nanoseconds(connectTimeout)), read: .nanoseconds(Self.nanoseconds(requestTimeout))))
        if let address = target.address { configuration.dnsOverride = [target.host: address.description] }
        let loops: any EventLoopGroup = connections?.eventLoop?.group ?? MultiThreadedEventLoopGroup.singleton
        let make = { HTTPClient(eventLoopGroup: loops, configuration: configuration) }
        let key = "\(url.scheme ?? "") \(target.host) \(target.address?.description ?? "") \(connectTimeout) \(requestTimeout)"
        let client = await connections?.client(for: key, make: make) ?? make()
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        request.headers.add(name: "User-Agent", value: "Plugboard")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let (prepared, deadline, party) = (request, requestTimeout, party)
        let result = await withTaskGroup(of: Result<T, IdentityError>?.self) { group in
            group.addTask {
                do {
                    return await read(try await client.execute(prepared, timeout: .nanoseconds(Self.nanoseconds(deadline))))
                } catch {
                    return .failure(Self.failure(error, party: party, what: what))
                }
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return nil
            }
            let first = await group.next()
            group.cancelAll()
            return (first ?? nil)
                ?? .failure(IdentityError(.providerUnreachable, "\(party)'s \(what) did not answer in time (\(deadline))"))
        }
        if connections == nil { try? await client.shutdown() }
        return try result.get()
    }

    /// The response's body, at most `limit` bytes: a larger one is `tooLarge`, refused by its `Content-Length` before
    /// it is read, else as soon as it passes the limit. Other errors of the read are thrown.
    static func body(of response: HTTPClientResponse, limit: Int, tooLarge: IdentityError) async throws -> Result<ByteBuffer, IdentityError>
    {
        if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > limit { return .failure(tooLarge) }
        do { return .success(try await response.body.collect(upTo: limit)) } catch is NIOTooManyBytesError { return .failure(tooLarge) }
    }

    /// The response's JSON body, at most `limit` bytes; a redirect, a larger body or another content type is refused.
    private static func read(_ response: HTTPClientResponse, limit: Int, party: String, what: String) async -> Result<Answer, IdentityError>
    {
        do {
            let status = Int(response.status.code)
            if (300..<400).contains(status) {
                return .failure(
                    IdentityError(
                        .providerUnreachable,
                        "\(party)'s \(what) answered with a redirect (\(status)), which Plugboard does not follow"))
            }
            let type =
                response.headers.first(name: "Content-Type")?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
                ?? ""
            let body: ByteBuffer
            switch try await Self.body(of: response, limit: limit, tooLarge: tooLarge(party: party, what: what, limit: limit)) {
            case .success(let read): body = read
            case .failure(let error): return .failure(error)
            }
            guard type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json")) else {
                return .failure(
                    IdentityError(
                        .providerUnreachable,
                        "\(party)'s \(what) answered \(status) with \(type.isEmpty ? "no content type" : IdentityError.quoted(type)), not JSON"
                    ))
            }
            return .success(Answer(status: status, body: Data(body.readableBytesView)))
        } catch {
            return .failure(failure(error, party: party, what: what))
        }
    }

    private static func tooLarge(party: String, what: String, limit: Int) -> IdentityError {
        IdentityError(
            .providerUnreachable, "\(party)'s \(what) sent more than \(limit / 1024) KiB, which Plugboard refuses to read")
    }

    static func failure(_ error: any Error, party: String, what: String) -> IdentityError {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout:
                return IdentityError(.providerUnreachable, "\(party)'s \(what) did not accept a connection in time")
            case .readTimeout, .deadlineExceeded:
                return IdentityError(.providerUnreachable, "\(party)'s \(what) did not answer in time")
            default: break
            }
        }
        if error is CancellationError {
            return IdentityError(.providerUnreachable, "the call to \(party)'s \(what) was cancelled")
        }
        return IdentityError(.providerUnreachable, "\(party)'s \(what) could not be reached (\(type(of: error)))")
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The host of `url` and the checked address to connect to (nil when the host is an address itself).
    func checkedTarget(_ url: URL, what: String) async throws(IdentityError) -> (host: String, address: NetworkAddress?) {
        guard let scheme = url.scheme?.lowercased(), var host = url.host, !host.isEmpty else {
            throw IdentityError(.discoveryRejected, "\(party)'s \(what) is not a URL Plugboard can call")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let loopbackHost = Self.isLoopbackHost(host)
        guard scheme == "https" || (scheme == "http" && (loopbackHost || allowPlainHTTP)) else {
            throw IdentityError(
                .discoveryRejected,
                "\(party)'s \(what) at \(IdentityError.quoted(host)) is not https; plain http is allowed only on a loopback address"
            )
        }
        let name = host
        // The system resolver blocks and cannot be cancelled: it runs on a thread of its own, and the answer is
        // waited for no longer than a connection would be.
        let limit = Double(Self.nanoseconds(connectTimeout)) / 1e9
        var resolved = NetworkAddress(host).map { [$0] }
        if resolved == nil {
            resolved = await withCheckedContinuation { (continuation: CheckedContinuation<[NetworkAddress]?, Never>) in
                let waiting = Mutex<CheckedContinuation<[NetworkAddress]?, Never>?>(continuation)
                DispatchQueue.global().async {
                    let found = NetworkAddress.resolve(name)
                    waiting.withLock { $0.take() }?.resume(returning: found)
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + limit) { waiting.withLock { $0.take() }?.resume(returning: nil) }
            }
        }
        guard let addresses = resolved else {
            throw IdentityError(.providerUnreachable, "\(party)'s host \(IdentityError.quoted(host)) did not resolve in time")
        }
        guard let first = addresses.first else {
            throw IdentityError(.providerUnreachable, "\(party)'s host \(IdentityError.quoted(host)) does not resolve")
        }
        for address in addresses {
            let scope = address.scope
            let allowed =
                switch scope {
                case .global: true
                case .loopback: allowLoopback || allowPrivateNetwork
                case .privateNetwork, .sharedAddressSpace, .uniqueLocal: allowPrivateNetwork
                // No provider lives on a link-local address; cloud metadata services do.
                case .linkLocal, .reserved: false
                }
            guard allowed else {
                throw IdentityError(
                    .privateAddress,
                    "\(party)'s host \(IdentityError.quoted(host)) resolves to \(address) (\(scope.sentence)), which Plugboard does not call"
                        + (scope == .reserved || scope == .linkLocal ? "" : " unless private networks are allowed"))
            }
        }
        return (host, NetworkAddress(host) == nil ? first : nil)
    }
}

extension AddressScope {
    var sentence: String {
        switch self {
        case .global: "a public address"
        case .loopback: "a loopback address"
        case .privateNetwork: "a private address"
        case .linkLocal: "a link-local address"
        case .sharedAddressSpace: "a carrier-grade NAT address"
        case .uniqueLocal: "an IPv6 unique local address"
        case .reserved: "a reserved address"
        }
    }
}
