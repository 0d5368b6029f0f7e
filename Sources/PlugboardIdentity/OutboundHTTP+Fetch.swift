import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1

extension OutboundHTTP {
    /// GETs `url` and answers its body, with the same bounds as every call of this client: the host resolved and every
    /// address checked before connecting to a checked one, no redirects followed, the connection within
    /// ``connectTimeout`` and the whole exchange, the body read included, within ``requestTimeout``. A body over
    /// ``bodyLimit`` bytes is refused, by its `Content-Length` before it is read, else as soon as it passes the limit.
    ///
    /// - Throws: `IdentityError` with code `privateAddress` for an address the client does not call,
    ///   `providerUnreachable` for a status other than 2xx, an answer too slow or too large, or a failed connection; its
    ///   message names ``party`` and `what`.
    public func fetch(_ url: URL, what: String) async throws(IdentityError) -> Data {
        let (limit, party) = (bodyLimit, party)
        return try await send(url, what: what, method: .GET, headers: [("Accept", "application/json")], body: nil) { response in
            let status = Int(response.status.code)
            guard (200..<300).contains(status) else {
                return .failure(IdentityError(.providerUnreachable, "\(party)'s \(what) answered with the status \(status)"))
            }
            let tooLarge = IdentityError(
                .providerUnreachable, "\(party)'s \(what) sent more than \(limit >> 20) MiB, which Plugboard refuses to read")
            do {
                return try await Self.body(of: response, limit: limit, tooLarge: tooLarge).map { Data($0.readableBytesView) }
            } catch {
                return .failure(Self.failure(error, party: party, what: what))
            }
        }
    }
}
