import Foundation
import HTTPTypes
import Hummingbird
import PlugboardModel
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

    /// Which routes a request is for, and so which kinds of token it takes.
    enum Routes {
        /// The Unleash client API and OFREP: `sdk` tokens (and tokens of both kinds).
        case sdk
        /// `/api/host/…`: `hosts` tokens (and tokens of both kinds).
        case hosts
        /// `/metrics`: a token of any kind.
        case any
    }

    private let byDigest = Mutex<[[UInt8]: APITokenCredential]>([:])
    private let lastUsed = Mutex<[String: Date]>([:])
    /// Where expiry times are compared with the time.
    private let clock: TimeSource

    /// A check that knows no token yet (``reload(_:)`` gives it the board's), comparing expiry times with `clock`.
    init(clock: TimeSource = .system) {
        self.clock = clock
    }

    /// Replaces the known tokens (after a board change); returns whether any token changed (created, revoked, gone).
    @discardableResult
    func reload(_ credentials: [APITokenCredential]) -> Bool {
        let index = Dictionary(credentials.map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
        return byDigest.withLock { known in
            defer { known = index }
            return known != index
        }
    }

    /// The token of a request, or why it is refused. `Authorization: TOKEN` (Unleash) and `Authorization: Bearer
    /// TOKEN` (OFREP) are both accepted. A request that names an environment (`?environment=` or the
    /// `X-Plugboard-Environment` header) other than the token's, or a token of another kind than `routes` take, is
    /// refused with 403.
    func authenticate(_ fields: HTTPFields, requestedEnvironment: String?, routes: Routes) -> Result<APITokenCredential, Refusal> {
        guard var value = fields[.authorization]?.httpTrimmed, !value.isEmpty else {
            return .failure(
                .unauthorized(
                    "no token: send Authorization: TOKEN (Unleash SDKs) or Authorization: Bearer TOKEN (OFREP), from plugboard token create"
                ))
        }
        if value.count > 7, value.prefix(7).lowercased() == "bearer " {
            value = value.dropFirst(7).httpTrimmed
        }
        let digest = APITokenSecret.digest(value)
        guard let credential = byDigest.withLock({ $0[digest] }), APITokenSecret.constantTimeEquals(credential.digest, digest) else {
            return .failure(.unauthorized("the token is not known to this board; create one with plugboard token create"))
        }
        if credential.revoked {
            return .failure(.unauthorized("the token '\(credential.name)' was revoked; ask for a new one (plugboard token create)"))
        }
        let now = clock.date()
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
        switch routes {
        case .sdk where !credential.kind.readsFlags:
            return .failure(
                .forbidden(
                    "the token '\(credential.name)' is for plug-in hosts and reads only /api/host/; SDKs need a token made with plugboard token create --for sdk"
                ))
        case .hosts where !credential.kind.readsHostRoutes:
            return .failure(
                .forbidden(
                    "the token '\(credential.name)' is for SDKs and cannot read /api/host/; plug-in hosts need a token made with plugboard token create --for hosts"
                ))
        default: break
        }
        lastUsed.withLock { $0[credential.name] = now }
        return .success(credential)
    }

    /// Nil while the token with `digest` is accepted at `now` (known, not revoked, not expired); otherwise why not, in
    /// a few words. An event stream of a token that is no longer accepted is ended with them.
    func refusal(digest: [UInt8], at now: Date) -> String? {
        guard let credential = byDigest.withLock({ $0[digest] }) else { return "the token is no longer known to this board" }
        if credential.revoked { return "the token '\(credential.name)' was revoked" }
        if let expires = credential.expiresAt, expires <= now {
            return "the token '\(credential.name)' expired at \(Timestamp.format(expires))"
        }
        return nil
    }

    /// When each token was last accepted since the previous call.
    func takeLastUsed() -> [String: Date] {
        lastUsed.withLock { used in
            defer { used = [:] }
            return used
        }
    }
}
