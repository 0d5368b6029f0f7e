import Crypto
package import Foundation
import GRDB
package import PlugboardModel

extension Board {
    /// Creates an access token that acts as `principal` (or only reads, with `readOnly`), and returns its secret: the
    /// board keeps only its SHA-256. A board admin may create tokens for anyone; anyone may create tokens for
    /// themselves. Audited, without the secret. The principals Plugboard acts as itself are refused
    /// (``Validate/personPrincipal(_:field:)``).
    ///
    /// A token created with an access token (`actor.accessToken`, the operations API) records it as its parent: it may not
    /// outlive it (a request for a later expiry, or none, of a token made with an expiring one is refused, saying
    /// until when it may last), and revoking the parent revokes it (``revokeAccessToken(principal:name:reason:by:)``).
    ///
    /// A token of scope ``AccessTokenScope/stop`` may only stop; it is not read-only too (it reads nothing), and a token
    /// made with a stop token is refused: a stop token makes no tokens, so no token made from it has more rights.
    ///
    /// - Parameters:
    ///   - scope: What it may do with its principal's rights: all of them, or only stop.
    ///   - expiresAt: When the token stops being accepted; nil for never. Must be in the future.
    package func createAccessToken(
        principal: String, name: String, readOnly: Bool, scope: AccessTokenScope = .all, expiresAt: Date? = nil, by actor: Principal
    ) throws(BoardError) -> CreatedAccessToken {
        try Validate.personPrincipal(principal)
        try Validate.tokenName(name)
        if readOnly, scope == .stop {
            throw BoardError.invalid("a token of scope stop may only stop and reads nothing; give --scope stop or --read-only, not both")
        }
        let expires = try APITokenSecret.expiry(expiresAt)
        let secret = AccessTokenSecret.generate()
        let prefix = AccessTokenSecret.displayPrefix(secret)
        let target = "\(principal)/\(name)"
        return try change(actor, refusal: AuditEntry(action: .accessTokenCreate, targetType: "access_token", targetID: target)) {
            change in
            try Self.requireSelfOrAdmin(change, principal, doing: "create access tokens for")
            let parent = try Self.parentToken(change, readOnly: readOnly, expires: expires)
            if let existing = try AccessTokenQueries.token(change.db, principal: principal, name: name) {
                throw BoardError.conflict(
                    "\(principal) already has an access token named '\(name)' (created \(existing.createdAt) by \(existing.createdBy), \(existing.state.rawValue)); choose another name"
                )
            }
            try AccessTokenQueries.insert(
                change.db, principal: principal, name: name, hash: SHA256.hex(Data(secret.utf8)), prefix: prefix, readOnly: readOnly,
                scope: scope, expiresAt: expires, parent: parent, by: change.actor, at: change.now)
            try change.record(
                AuditEntry(
                    action: .accessTokenCreate, targetType: "access_token", targetID: target,
                    after: .object([
                        "principal": .string(principal), "name": .string(name), "prefix": .string(prefix), "read_only": .bool(readOnly),
                        "scope": .string(scope.rawValue), "expires_at": .optional(expires),
                        "parent": .optional(parent.map { "\($0.principal)/\($0.name)" }),
                    ])))
            guard let token = try AccessTokenQueries.token(change.db, principal: principal, name: name) else {
                throw BoardError(.integrity, "the access token '\(target)' was not stored; this is a bug in Plugboard")
            }
            return CreatedAccessToken(token: token, secret: secret)
        }
    }

    /// Revokes an access token, and every token made with it, directly or not, in the same change, each with its audit
    /// row: servers refuse them from their next request. Its principal or a board admin.
    package func revokeAccessToken(principal: String, name: String, reason: String? = nil, by actor: Principal) throws(BoardError)
        -> ChangeResult
    {
        try Validate.principal(principal)
        try Validate.tokenName(name)
        if let reason { try Validate.reason(reason) }
        let target = "\(principal)/\(name)"
        return try change(actor, refusal: AuditEntry(action: .accessTokenRevoke, targetType: "access_token", targetID: target)) {
            change in
            try Self.requireSelfOrAdmin(change, principal, doing: "revoke the access tokens of")
            guard let token = try AccessTokenQueries.token(change.db, principal: principal, name: name) else {
                throw BoardError.notFound("\(principal) has no access token named '\(name)'; see plugboard access-token list")
            }
            if token.state == .revoked {
                return ChangeResult(
                    changed: false, "the access token '\(target)' was already revoked (\(token.revokedAt ?? "")); nothing changed.")
            }
            let made = try AccessTokenQueries.unrevokedDescendants(change.db, principal: principal, name: name)
            try Self.revoke(change, token, reason: reason)
            for child in made {
                try Self.revoke(change, child, reason: "revoked with the access token '\(target)' it was made with")
            }
            let names = made.map { "'\($0.principal)/\($0.name)'" }.joined(separator: ", ")
            let also = made.isEmpty ? "" : " and the \(made.count == 1 ? "token" : "\(made.count) tokens") made with it (\(names))"
            return ChangeResult(
                changed: true,
                "Revoked the access token '\(target)'\(also); servers refuse \(made.isEmpty ? "it" : "them") from their next request.")
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
    ///
    /// Its state is the one that decides whether a server accepts it: a token made, directly or not, with a token that
    /// is no longer accepted comes back in that token's state (revoked or expired), whatever its own row says.
    package func accessToken(secret: String) throws(BoardError) -> AccessToken? {
        guard secret.hasPrefix(AccessTokenSecret.marker), secret.utf8.count <= 128 else { return nil }
        let digest = SHA256.hex(Data(secret.utf8))
        guard let found = try read({ db in try AccessTokenQueries.token(db, hash: digest).map { ($0, try Self.accepted(db, $0.token)) } })
        else { return nil }
        guard APITokenSecret.constantTimeEquals(Array(found.0.storedHash.utf8), Array(digest.utf8)) else { return nil }
        return found.1
    }

    /// Notes that a server accepted `token` now: its `last_used_at`, at most once a minute, without an audit row (a
    /// column the state proof leaves out). A failure to note it is ignored: it never refuses the request.
    package func noteAccessTokenUse(_ token: AccessToken, at now: Date = Date()) {
        if let last = token.lastUsedAt.flatMap(Timestamp.parse), now.timeIntervalSince(last) < 60 { return }
        let at = Timestamp.format(now)
        _ = try? writeUnaudited(.clientUsage) { db in try AccessTokenQueries.touch(db, principal: token.principal, name: token.name, at: at)
        }
    }

    /// Revokes `token` in `change`, with its audit row.
    private static func revoke(_ change: AuditedChange, _ token: AccessToken, reason: String?) throws {
        try AccessTokenQueries.revoke(
            change.db, principal: token.principal, name: token.name, reason: reason, by: change.actor, at: change.now)
        try change.record(
            AuditEntry(
                action: .accessTokenRevoke, targetType: "access_token", targetID: "\(token.principal)/\(token.name)", reason: reason,
                before: .object(["state": .string(token.state.rawValue)]), after: .object(["state": .string("revoked")])))
    }

    /// The access token the change arrives with, which a token it makes records as its parent; nil for a change made on
    /// the board's machine. Refuses a token no longer accepted, a token that is not read-only made with a read-only one,
    /// and an expiry (`expires`, nil for never) later than the parent's: a token never outlives, nor does more than, the
    /// token that made it.
    private static func parentToken(_ change: AuditedChange, readOnly: Bool, expires: String?) throws -> AccessToken? {
        guard let name = change.actor.accessToken else { return nil }
        let principal = change.actor.osUser
        guard let stored = try AccessTokenQueries.token(change.db, principal: principal, name: name),
            case let parent = try accepted(change.db, stored), parent.state == .active
        else {
            throw BoardError.notAllowed(
                "the access token '\(principal)/\(name)' of this request is no longer accepted; it may not make tokens")
        }
        if parent.stopsOnly {
            throw BoardError.notAllowed(
                "the access token '\(principal)/\(name)' of this request may only stop plug-ins; it may not make tokens")
        }
        if parent.readOnly, !readOnly {
            throw BoardError.notAllowed(
                "the access token '\(principal)/\(name)' of this request is read-only; a token it makes must be read-only too (--read-only)"
            )
        }
        guard let limit = parent.expiresAt else { return parent }
        if let expires, let end = Timestamp.parse(expires), let last = Timestamp.parse(limit), end <= last { return parent }
        throw BoardError.notAllowed(
            "the access token '\(principal)/\(name)' of this request expires at \(limit), and a token it makes may not outlive it: pass --expires with an age or a time up to \(limit)"
        )
    }

    /// `token` in the state that decides whether it is accepted: its own, or, while that is active, the state of the
    /// nearest token it was made with that is no longer accepted.
    private static func accepted(_ db: Database, _ token: AccessToken) throws -> AccessToken {
        guard token.state == .active,
            let ancestor = try AccessTokenQueries.unacceptedAncestor(db, principal: token.principal, name: token.name)
        else { return token }
        return token.inState(ancestor.state)
    }

    /// Passes when the change's actor is `principal` itself (its OS user) or a board admin.
    private static func requireSelfOrAdmin(_ change: AuditedChange, _ principal: String, doing what: String) throws {
        guard change.actor.osUser != principal else { return }
        try RequiredRole.requireAdmin(change.db, by: change.actor, doing: "\(what) \(principal)")
    }
}
