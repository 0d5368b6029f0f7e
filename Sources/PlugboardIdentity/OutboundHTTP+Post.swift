import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import PlugboardNetwork

/// The answer to a POST whose body the caller does not read (a webhook delivery): its status and its `Retry-After`.
public struct OutboundAnswer: Sendable, Equatable {
    /// The status code.
    public let status: Int
    /// The `Retry-After` header, as sent.
    public let retryAfter: String?
}

extension OutboundHTTP {
    /// POSTs `body` to `url` with `headers`, with the same bounds as every call of this client: the host resolved and
    /// every address checked before connecting to a checked one, no redirects followed (a 3xx is answered as it is),
    /// the connection within ``connectTimeout`` and the whole exchange within ``requestTimeout``. At most
    /// ``bodyLimit`` bytes of the answer are read, then dropped.
    ///
    /// - Throws: `IdentityError` with code `privateAddress` for an address the client does not call,
    ///   `providerUnreachable` when no answer came in time or the connection failed.
    public func post(_ url: URL, what: String, body: Data, headers: [(String, String)]) async throws(IdentityError) -> OutboundAnswer {
        let target = try await checkedTarget(url, what: what)
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Self.nanoseconds(connectTimeout)), read: .nanoseconds(Self.nanoseconds(requestTimeout))))
        if let address = target.address { configuration.dnsOverride = [target.host: address.description] }
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "User-Agent", value: "Plugboard")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let (prepared, limit, deadline, party) = (request, bodyLimit, requestTimeout, party)
        let result = await withTaskGroup(of: Result<OutboundAnswer, IdentityError>?.self) { group in
            group.addTask {
                do {
                    let response = try await client.execute(prepared, timeout: .nanoseconds(Self.nanoseconds(deadline)))
                    _ = try? await response.body.collect(upTo: limit)
                    return .success(
                        OutboundAnswer(status: Int(response.status.code), retryAfter: response.headers.first(name: "Retry-After")))
                } catch {
                    return .failure(IdentityError(.providerUnreachable, "\(party)'s \(what) could not be reached (\(Self.reason(error)))"))
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
        try? await client.shutdown()
        return try result.get()
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "no connection in time"
            case .readTimeout, .deadlineExceeded: return "no answer in time"
            default: break
            }
        }
        return "\(type(of: error))"
    }
}
