import Crypto
package import Foundation
package import PlugboardModel

extension Board {
    /// Creates an access token that acts as `principal` (or only reads, with `readOnly`), and returns its secret: the
    /// board keeps only its SHA-256. A board admin may create tokens for anyone; anyone may create tokens for
    /// themselves. Audited, without the secret.
    ///
    /// - Parameter expiresAt: When the token stops being accepted; nil for never. Must be in the future.
    package func createAccessToken(
        principal: String, name: String, readOnly: Bool, expiresAt: Date? = nil, by actor: Principal
    ) throws(BoardError) -> CreatedAccessToken {
        try Validate.principal(principal)
        try Validate.tokenName(name)
        let expires = try APITokenSecret.expiry(expiresAt)
        let secret = AccessTokenSecret.generate()
        let prefix = AccessTokenSecret.displayPrefix(secret)
        let target = "\(principal)/\(name)"
        return try change(actor, refusal: AuditEntry(action: "access-token.create", targetType: "access_token", targetID: target)) {
            change in
            try Self.requireSelfOrAdmin(change, principal, doing: "create access tokens for")
            if let existing = try AccessTokenQueries.token(change.db, principal: principal, name: name) {
                throw BoardError.conflict(
                    "\(principal) already has an access token named '\(name)' (created \(existing.createdAt) by \(existing.createdBy), \(existing.state.rawValue)); choose another name"
                )
            }
            try AccessTokenQueries.insert(
                change.db, principal: principal, name: name, hash: SHA256.hex(Data(secret.utf8)), prefix: prefix, readOnly: readOnly,
                expiresAt: expires, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: "access-token.create", targetType: "access_token", targetID: target,
                    after: .object([
                        "principal": .string(principal), "name": .string(name), "prefix": .string(prefix), "read_only": .bool(readOnly),
                        "expires_at": .optional(expires),
                    ])))
            guard let token = try AccessTokenQueries.token(change.db, principal: principal, name: name) else {
                throw BoardError(.integrity, "the access token '\(target)' was not stored; this is a bug in Plugboard")
            }
            return CreatedAccessToken(token: token, secret: secret)
        }
    }

    /// Revokes an access token: servers refuse it from their next request. Its principal or a board admin; audited.
    package func revokeAccessToken(principal: String, name: String, reason: String? = nil, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.principal(principal)
        try Validate.tokenName(name)
        if let reason { try Validate.reason(reason) }
        let target = "\(principal)/\(name)"
        return try change(actor, refusal: AuditEntry(action: "access-token.revoke", targetType: "access_token", targetID: target)) {
            change in
            try Self.requireSelfOrAdmin(change, principal, doing: "revoke the access tokens of")
            guard let token = try AccessTokenQueries.token(change.db, principal: principal, name: name) else {
                throw BoardError.notFound("\(principal) has no access token named '\(name)'; see plugboard access-token list")
            }
            if token.state == .revoked {
                return ChangeResult(
                    changed: false, "the access token '\(target)' was already revoked (\(token.revokedAt ?? "")); nothing changed.")
            }
            try AccessTokenQueries.revoke(change.db, principal: principal, name: name, reason: reason, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: "access-token.revoke", targetType: "access_token", targetID: target, reason: reason,
                    before: .object(["state": .string(token.state.rawValue)]), after: .object(["state": .string("revoked")])))
            return ChangeResult(changed: true, "Revoked the access token '\(target)'; servers refuse it from their next request.")
        }
    }

    /// Every access token, or those of one principal, sorted by principal and name; never a secret or a hash.
    package func accessTokens(principal: String? = nil) throws(BoardError) -> [AccessToken] {
        if let principal { try Validate.principal(principal) }
        return try read { db in try AccessTokenQueries.all(db, principal: principal) }
    }

    /// The access token whose secret is `secret`, in whatever state it is (active, revoked, expired), or nil when the
    /// board knows no such token. The board keeps only SHA-256 digests: the secret's digest is looked up, then compared
    /// with the stored one in constant time.
    package func accessToken(secret: String) throws(BoardError) -> AccessToken? {
        guard secret.hasPrefix(AccessTokenSecret.marker), secret.utf8.count <= 128 else { return nil }
        let digest = SHA256.hex(Data(secret.utf8))
        guard let found = try read({ db in try AccessTokenQueries.token(db, hash: digest) }) else { return nil }
        guard APITokenSecret.constantTimeEquals(Array(found.storedHash.utf8), Array(digest.utf8)) else { return nil }
        return found.token
    }

    /// Notes that a server accepted `token` now: its `last_used_at`, at most once a minute, without an audit row (a
    /// column the state proof leaves out). A failure to note it is ignored: it never refuses the request.
    package func noteAccessTokenUse(_ token: AccessToken, at now: Date = Date()) {
        if let last = token.lastUsedAt.flatMap(Timestamp.parse), now.timeIntervalSince(last) < 60 { return }
        let at = Timestamp.format(now)
        _ = try? writeUnaudited(.clientUsage) { db in try AccessTokenQueries.touch(db, principal: token.principal, name: token.name, at: at)
        }
    }

    /// Passes when the change's actor is `principal` itself (its OS user) or a board admin.
    private static func requireSelfOrAdmin(_ change: AuditedChange, _ principal: String, doing what: String) throws {
        guard change.actor.osUser != principal else { return }
        try Access.requireAdmin(change.db, by: change.actor, doing: "\(what) \(principal)")
    }
}
