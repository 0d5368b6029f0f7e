import Foundation
import GRDB
import PlugboardModel

/// The SQL of API tokens.
enum TokenQueries {
    static func token(_ db: Database, _ name: String) throws -> APIToken? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM api_token_status WHERE name = ?"), arguments: [name]).map(apiToken)
    }

    static func all(_ db: Database) throws -> [APIToken] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM api_token_status ORDER BY name")).map(apiToken)
    }

    static func insert(
        _ db: Database, name: String, environment: String, kind: APIToken.Kind, hash: String, prefix: String, expiresAt: String?,
        by actor: Principal, at now: String
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO api_tokens (name, environment, kind, token_hash, token_prefix, created_at, created_by, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [name, environment, kind.rawValue, hash, prefix, now, actor.osUser, expiresAt])
    }

    static func revoke(_ db: Database, _ name: String, reason: String?, by actor: Principal, at now: String) throws {
        try db.cachedStatement(
            sql: "UPDATE api_tokens SET revoked_at = ?, revoked_by = ?, revoke_reason = ? WHERE name = ? AND revoked_at IS NULL"
        ).execute(arguments: [now, actor.osUser, reason, name])
    }

    static func credentials(_ db: Database) throws -> [APITokenCredential] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT name, environment, kind, token_hash, expires_at, revoked_at FROM api_tokens"))
            .compactMap { row in
                let hex: String = row["token_hash"]
                guard let digest = bytes(hex: hex) else { return nil }
                let expires: String? = row["expires_at"]
                let revoked: String? = row["revoked_at"]
                // The column's CHECK allows no other kind; one written behind SQLite's back reads no more than an SDK token.
                return APITokenCredential(
                    name: row["name"], environment: row["environment"], kind: APIToken.Kind(rawValue: row["kind"]) ?? .sdk, digest: digest,
                    // An expiry nobody can read is taken as already past: refuse rather than accept forever.
                    expiresAt: expires.map { Timestamp.parse($0) ?? .distantPast }, revoked: revoked != nil)
            }
    }

    /// Records when servers last accepted tokens (telemetry: not audited).
    static func touch(_ db: Database, lastUsed: [String: String]) throws {
        for (name, at) in lastUsed {
            try db.cachedStatement(
                sql: "UPDATE api_tokens SET last_used_at = ? WHERE name = ? AND (last_used_at IS NULL OR last_used_at < ?)"
            ).execute(arguments: [at, name, at])
        }
    }

    private static func apiToken(_ row: Row) -> APIToken {
        APIToken(
            name: row["name"], environment: row["environment"], kind: APIToken.Kind(rawValue: row["kind"]) ?? .sdk,
            prefix: row["token_prefix"], createdAt: row["created_at"],
            createdBy: row["created_by"], expiresAt: row["expires_at"], revokedAt: row["revoked_at"], revokedBy: row["revoked_by"],
            revokeReason: row["revoke_reason"], lastUsedAt: row["last_used_at"],
            state: APIToken.State(rawValue: row["state"]) ?? .revoked)
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var result: [UInt8] = []
        result.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
        }
        return result
    }
}
