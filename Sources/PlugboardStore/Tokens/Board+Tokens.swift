import Crypto
package import Foundation
package import PlugboardModel

extension Board {
    /// Creates an API token that reads `environment`, and returns its secret: the board stores only its SHA-256.
    /// Admins only; audited (without the secret).
    ///
    /// - Parameters:
    ///   - kind: The routes it reads: ``APIToken/Kind/sdk`` (flags, the default) or ``APIToken/Kind/hosts`` (what
    ///     plug-in hosts read).
    ///   - expiresAt: When the token stops being accepted; nil for never. Must be in the future.
    package func createAPIToken(
        name: String, environment: String, kind: APIToken.Kind = .sdk, expiresAt: Date? = nil, by actor: Principal
    ) throws(BoardError) -> CreatedAPIToken {
        try Validate.tokenName(name)
        try Validate.environment(environment)
        let expires = try APITokenSecret.expiry(expiresAt)
        let secret = APITokenSecret.generate(environment: environment)
        let prefix = APITokenSecret.displayPrefix(secret)
        return try change(
            actor, refusal: AuditEntry(action: .tokenCreate, targetType: "api_token", targetID: name, environment: environment),
            requiring: .admin(doing: "create API tokens")
        ) { change in
            try RegistryQueries.requireEnvironment(change.db, environment)
            if let existing = try TokenQueries.token(change.db, name) {
                throw BoardError.conflict(
                    "a token named '\(name)' already exists (created \(existing.createdAt) by \(existing.createdBy), \(existing.state.rawValue)); choose another name"
                )
            }
            try TokenQueries.insert(
                change.db, name: name, environment: environment, kind: kind, hash: SHA256.hex(Data(secret.utf8)), prefix: prefix,
                expiresAt: expires,
                by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .tokenCreate, targetType: "api_token", targetID: name, environment: environment,
                    after: .object([
                        "environment": .string(environment), "kind": .string(kind.rawValue), "prefix": .string(prefix),
                        "expires_at": .optional(expires),
                    ])))
            guard let token = try TokenQueries.token(change.db, name) else {
                throw BoardError(.integrity, "the token '\(name)' was not stored; this is a bug in Plugboard")
            }
            return CreatedAPIToken(token: token, secret: secret)
        }
    }

    /// Revokes a token: servers refuse it, and end its open event streams, from their next board check on (within a
    /// second). Admins only; audited.
    package func revokeAPIToken(_ name: String, reason: String? = nil, by actor: Principal) throws(BoardError) -> ChangeResult {
        try Validate.tokenName(name)
        if let reason { try Validate.reason(reason) }
        return try change(
            actor, refusal: AuditEntry(action: .tokenRevoke, targetType: "api_token", targetID: name),
            requiring: .admin(doing: "revoke API tokens")
        ) { change in
            guard let token = try TokenQueries.token(change.db, name) else {
                throw BoardError.notFound("there is no token named '\(name)'; see plugboard token list")
            }
            if token.state == .revoked {
                return ChangeResult(changed: false, "token '\(name)' was already revoked (\(token.revokedAt ?? "")); nothing changed.")
            }
            try TokenQueries.revoke(change.db, name, reason: reason, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .tokenRevoke, targetType: "api_token", targetID: name, environment: token.environment, reason: reason,
                    before: .object(["state": .string(token.state.rawValue)]), after: .object(["state": .string("revoked")])))
            return ChangeResult(changed: true, "Revoked token '\(name)'; servers refuse it from now on.")
        }
    }

    /// Every token, active or not, sorted by name.
    package func apiTokens() throws(BoardError) -> [APIToken] {
        try read { db in try TokenQueries.all(db) }
    }

    /// The digests and states of every token, for a server that checks presented tokens in memory.
    package func apiTokenCredentials() throws(BoardError) -> [APITokenCredential] {
        try read { db in try TokenQueries.credentials(db) }
    }
}
