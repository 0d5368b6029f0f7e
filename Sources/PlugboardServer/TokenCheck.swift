import Foundation
import HTTPTypes
import Hummingbird
import PlugboardStore
import Synchronization

/// Checks presented tokens against the board's token digests, in memory and in constant time per comparison.
final class TokenCheck: Sendable {
    /// Why a request is refused.
    enum Refusal: Error {
        /// 401, with a sentence.
        case unauthorized(String)
        /// 403, with a sentence.
        case forbidden(String)
    }

    private let byDigest = Mutex<[[UInt8]: APITokenCredential]>([:])
    private let lastUsed = Mutex<[String: Date]>([:])

    /// Replaces the known tokens (after a board change).
    func reload(_ credentials: [APITokenCredential]) {
        let index = Dictionary(credentials.map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
        byDigest.withLock { $0 = index }
    }

    /// The token of a request, or why it is refused. `Authorization: TOKEN` (Unleash) and `Authorization: Bearer
    /// TOKEN` (OFREP) are both accepted. A request that names an environment (`?environment=` or the
    /// `X-Plugboard-Environment` header) other than the token's is refused with 403.
    func authenticate(_ fields: HTTPFields, requestedEnvironment: String?) -> Result<APITokenCredential, Refusal> {
        guard var value = fields[.authorization]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return .failure(
                .unauthorized(
                    "no token: send Authorization: TOKEN (Unleash SDKs) or Authorization: Bearer TOKEN (OFREP), from plugboard token create"
                ))
        }
        if value.count > 7, value.prefix(7).lowercased() == "bearer " {
            value = String(value.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        }
        let digest = APITokenSecret.digest(value)
        guard let credential = byDigest.withLock({ $0[digest] }), APITokenSecret.constantTimeEquals(credential.digest, digest) else {
            return .failure(.unauthorized("the token is not known to this board; create one with plugboard token create"))
        }
        if credential.revoked {
            return .failure(.unauthorized("the token '\(credential.name)' was revoked; ask for a new one (plugboard token create)"))
        }
        let now = Date()
        if let expires = credential.expiresAt, expires <= now {
            return .failure(
                .unauthorized(
                    "the token '\(credential.name)' expired at \(Timestamp.format(expires)); ask for a new one (plugboard token create)"))
        }
        if let requestedEnvironment, requestedEnvironment != credential.environment {
            return .failure(
                .forbidden(
                    "the token '\(credential.name)' reads the environment '\(credential.environment)', not '\(requestedEnvironment)'; use a token for that environment"
                ))
        }
        lastUsed.withLock { $0[credential.name] = now }
        return .success(credential)
    }

    /// When each token was last accepted since the previous call.
    func takeLastUsed() -> [String: Date] {
        lastUsed.withLock { used in
            defer { used = [:] }
            return used
        }
    }
}
