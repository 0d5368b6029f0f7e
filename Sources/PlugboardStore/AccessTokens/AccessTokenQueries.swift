import GRDB
import PlugboardModel

/// The SQL of access tokens (`access_tokens`, read through `access_token_status`).
enum AccessTokenQueries {
    static func token(_ db: Database, principal: String, name: String) throws -> AccessToken? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM access_token_status WHERE principal = ? AND name = ?"), arguments: [principal, name]
        ).map(accessToken)
    }

    /// The token whose secret hashes to `hash`, with its stored hash; nil when none does. (Every request with an access
    /// token reads it, and the token's chain: both statements are prepared once per connection.)
    static func token(_ db: Database, hash: String) throws -> (token: AccessToken, storedHash: String)? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT s.*, t.token_hash AS stored_hash FROM access_tokens t JOIN access_token_status s USING (principal, name)
                    WHERE t.token_hash = ?
                    """), arguments: [hash]
        ).map { (accessToken($0), $0["stored_hash"]) }
    }

    /// Records when a server last accepted a token (telemetry: not audited).
    static func touch(_ db: Database, principal: String, name: String, at: String) throws {
        try db.cachedStatement(sql: "UPDATE access_tokens SET last_used_at = ? WHERE principal = ? AND name = ?").execute(arguments: [
            at, principal, name,
        ])
    }

    /// Every token, or those of one principal, sorted by principal and name.
    static func all(_ db: Database, principal: String?) throws -> [AccessToken] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM access_token_status WHERE ?1 IS NULL OR principal = ?1"), arguments: [principal]
        )
        .map(accessToken)
    }

    static func insert(
        _ db: Database, principal: String, name: String, hash: String, prefix: String, readOnly: Bool, scope: AccessTokenScope,
        expiresAt: String?, parent: AccessToken?, by actor: Principal, at now: String
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO access_tokens (principal, name, token_hash, token_prefix, read_only, scope, created_at, created_by,
                    expires_at, parent_principal, parent_name)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            principal, name, hash, prefix, readOnly, scope.rawValue, now, actor.osUser, expiresAt, parent?.principal, parent?.name,
        ])
    }

    /// Every token made, directly or not, with the token `principal`/`name` that is not revoked yet, parents before
    /// what they made, however deep. A token's parent exists before it, so the tokens form a tree; the walk still stops
    /// at a depth of the number of tokens, which no chain of a tree reaches, so that a board edited into a cycle ends.
    static func unrevokedDescendants(_ db: Database, principal: String, name: String) throws -> [AccessToken] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    WITH RECURSIVE made(principal, name, depth) AS (
                        SELECT principal, name, 1 FROM access_tokens WHERE parent_principal = ?1 AND parent_name = ?2
                        UNION
                        SELECT t.principal, t.name, made.depth + 1 FROM access_tokens t
                        JOIN made ON t.parent_principal = made.principal AND t.parent_name = made.name
                        WHERE made.depth < (SELECT count(*) FROM access_tokens)
                    )
                    SELECT s.* FROM access_token_status s JOIN (SELECT principal, name, min(depth) AS depth FROM made GROUP BY principal, name) m
                    USING (principal, name) WHERE s.revoked_at IS NULL ORDER BY m.depth, s.principal, s.name
                    """), arguments: [principal, name]
        ).map(accessToken)
    }

    /// One link of a token's chain (``chain(_:principal:name:)``): the token, and the token it was made with, by name
    /// (nil for a token made on the board's machine).
    struct Link {
        let token: AccessToken
        let madeWith: (principal: String, name: String)?
    }

    /// The token `principal`/`name` and every token it was made with, directly or not, nearest first: what decides
    /// whether it is accepted and who is behind it. Empty when the token is not on the board. The chain ends at a
    /// token made on the board's machine, or at a parent that is not on the board (its last link then names one). A
    /// token's parent exists before it, so the tokens form a tree; the walk still stops at a depth of the number of
    /// tokens, which no chain of a tree reaches, so that a board edited into a cycle ends.
    static func chain(_ db: Database, principal: String, name: String) throws -> [Link] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    WITH RECURSIVE up(principal, name, depth) AS (
                        SELECT ?1, ?2, 0
                        UNION ALL
                        SELECT t.parent_principal, t.parent_name, up.depth + 1 FROM access_tokens t
                        JOIN up ON t.principal = up.principal AND t.name = up.name
                        WHERE t.parent_principal IS NOT NULL AND up.depth < (SELECT count(*) FROM access_tokens)
                    )
                    SELECT s.*, t.parent_principal, t.parent_name FROM up
                    JOIN access_token_status s USING (principal, name) JOIN access_tokens t USING (principal, name)
                    ORDER BY up.depth
                    """), arguments: [principal, name]
        ).map { row in
            let parent: String? = row["parent_principal"]
            return Link(token: accessToken(row), madeWith: parent.map { ($0, row["parent_name"]) })
        }
    }

    /// The nearest token among those `principal`/`name` was made with, directly or not, that is no longer accepted
    /// (revoked or expired); nil when all of them are accepted, or it was made on the board's machine.
    static func unacceptedAncestor(_ db: Database, principal: String, name: String) throws -> AccessToken? {
        try chain(db, principal: principal, name: name).dropFirst().first { $0.token.state != .active }?.token
    }

    static func revoke(_ db: Database, principal: String, name: String, reason: String?, by actor: Principal, at now: String) throws {
        try db.cachedStatement(
            sql: """
                UPDATE access_tokens SET revoked_at = ?, revoked_by = ?, revoke_reason = ?
                WHERE principal = ? AND name = ? AND revoked_at IS NULL
                """
        ).execute(arguments: [now, actor.osUser, reason, principal, name])
    }

    private static func accessToken(_ row: Row) -> AccessToken {
        AccessToken(
            principal: row["principal"], name: row["name"], prefix: row["token_prefix"], readOnly: row["read_only"],
            // An unknown scope (a board written by a later version) may only stop.
            scope: AccessTokenScope(rawValue: (row["scope"] as String?) ?? "") ?? .stop, createdAt: row["created_at"],
            createdBy: row["created_by"], expiresAt: row["expires_at"], revokedAt: row["revoked_at"],
            revokedBy: row["revoked_by"], revokeReason: row["revoke_reason"], lastUsedAt: row["last_used_at"],
            state: APIToken.State(rawValue: row["state"]) ?? .revoked)
    }
}
