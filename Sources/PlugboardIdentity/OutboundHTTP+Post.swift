import AsyncHTTPClient
public import Foundation
import NIOHTTP1

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
        let limit = bodyLimit
        return try await send(url, what: what, method: .POST, headers: headers, body: body) { response in
            _ = try? await response.body.collect(upTo: limit)
            return .success(OutboundAnswer(status: Int(response.status.code), retryAfter: response.headers.first(name: "Retry-After")))
        }
    }
}
