import GRDB
import PlugboardModel

/// One stop or narrowing carried from the board a restore replaced into the restored board (or, under
/// `--without-carry-forward`, one stop that was not).
package struct CarriedStop: Sendable, Hashable, Codable {
    /// `kill switch`, `yank`, `signer revocation`, `token revocation`, `access token revocation`, `disable`,
    /// `signature policy`, `admin removal`, `owner removal`, `maintainer removal`, `owner demotion`, `gate flag off`,
    /// `gate flag definition` or `rollout abort`.
    package let kind: String
    /// What it stops or narrows: the kill switch's target, `ID@VERSION`, a key id, a token name, a plug-in id, an
    /// environment (a signature policy), a principal (an admin), `ID/PRINCIPAL` (an owner), a flag name or `ID@VERSION`
    /// (a rollout).
    package let target: String
    /// The environment it applies to, for a disable, a signature policy, a gate flag or a rollout.
    package var environment: String? = nil
    /// The reason it was given on the replaced board, or what the narrowing is.
    package let reason: String?
    /// When and by whom it was made on the replaced board, where the board records it.
    package let madeAt: String?
    package let madeBy: String?
}

/// What stops code or access on a board: active kill switches, yanks, signer revocations, and revocations of API tokens
/// and access tokens. A restore reads them from the board it replaces and carries the ones the backup lacks into the
/// restored board, so that going back in time never revives a plug-in, a release, a key or a token.
package struct StopRecords: Sendable {
    struct Revocation: Sendable, Hashable {
        let name: String
        let reason: String?
        let at: String
        let by: String
    }

    struct Yank: Sendable, Hashable {
        let pluginID: String
        let version: String
        let made: Revocation
    }

    var kills: [KillSwitch] = []
    var yanks: [Yank] = []
    var signers: [Revocation] = []
    var tokens: [Revocation] = []
    struct AccessTokenRevocation: Sendable, Hashable {
        let principal: String
        let name: String
        let made: Revocation
    }

    var accessTokens: [AccessTokenRevocation] = []

    /// How many stops there are.
    package var count: Int { kills.count + yanks.count + signers.count + tokens.count + accessTokens.count }

    /// Reads every stop on the board; a board made before signatures or tokens existed has none of those.
    static func read(_ db: Database) throws -> StopRecords {
        var records = StopRecords()
        let hasSigners = try db.tableExists("signer_revocations")
        let hasTokens = try db.tableExists("api_tokens")
        let hasAccessTokens = try db.tableExists("access_tokens")
        records.kills = try RegistryQueries.killSwitches(db, includeRevived: false).reversed()  // oldest first
        records.yanks = try Row.fetchAll(
            db.cachedStatement(
                sql:
                    "SELECT plugin_id, version, yank_reason, yanked_at, yanked_by FROM plugin_versions WHERE yanked_at IS NOT NULL ORDER BY plugin_id, sort_key"
            )
        ).map {
            Yank(
                pluginID: $0[0], version: $0[1],
                made: Revocation(name: "\($0[0] as String)@\($0[1] as String)", reason: $0[2], at: $0[3], by: $0[4]))
        }
        if hasSigners {
            records.signers = try Row.fetchAll(
                db.cachedStatement(sql: "SELECT key_id, reason, revoked_at, revoked_by FROM signer_revocations ORDER BY key_id")
            )
            .map { Revocation(name: $0[0], reason: $0[1], at: $0[2], by: $0[3]) }
        }
        if hasTokens {
            records.tokens = try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT name, revoke_reason, revoked_at, revoked_by FROM api_tokens WHERE revoked_at IS NOT NULL ORDER BY name")
            ).map { Revocation(name: $0[0], reason: $0[1], at: $0[2], by: $0[3]) }
        }
        if hasAccessTokens {
            records.accessTokens = try Row.fetchAll(
                db.cachedStatement(
                    sql:
                        "SELECT principal, name, revoke_reason, revoked_at, revoked_by FROM access_tokens WHERE revoked_at IS NOT NULL ORDER BY principal, name"
                )
            ).map {
                AccessTokenRevocation(
                    principal: $0[0], name: $0[1],
                    made: Revocation(name: "\($0[0] as String)/\($0[1] as String)", reason: $0[2], at: $0[3], by: $0[4]))
            }
        }
        return records
    }

    /// Makes, inside `change`, every stop of these records that the board lacks and could hold (a kill switch or a
    /// yank of a plug-in the board does not know stops nothing there), each with a `restore.carried-forward` audit row.
    /// With `apply` false, changes nothing and returns the stops it would have made.
    func carry(into change: AuditedChange, apply: Bool = true) throws -> [CarriedStop] {
        let db = change.db
        var carried: [CarriedStop] = []
        func record(_ kind: String, _ type: String, _ target: String, _ made: Revocation, after: AuditJSON) throws {
            defer { carried.append(CarriedStop(kind: kind, target: target, reason: made.reason, madeAt: made.at, madeBy: made.by)) }
            guard apply else { return }
            try change.record(
                AuditEntry(
                    action: .restoreCarriedForward, targetType: type, targetID: target, reason: made.reason,
                    before: .object(["carried": .bool(false)]),
                    after: .object(["carried": .bool(true), "made_at": .string(made.at), "made_by": .string(made.by), "state": after])))
        }
        for kill in kills {
            guard let target = kill.target, try RegistryQueries.activeKillSwitch(db, target) == nil else { continue }
            if let pluginID = target.pluginID, try !RegistryQueries.pluginExists(db, pluginID) { continue }
            if apply { _ = try RegistryQueries.insertKillSwitch(db, target, reason: kill.reason, by: change.actor, at: change.now) }
            let made = Revocation(name: target.description, reason: kill.reason, at: kill.killedAt, by: kill.killedBy)
            try record(
                "kill switch", "kill_switch", target.description, made,
                after: .object(["killed": .bool(true), "scope": .string(kill.scope)]))
        }
        for yank in yanks {
            guard let state = try RegistryQueries.yankState(db, yank.pluginID, yank.version), !state.yanked else { continue }
            if apply {
                try RegistryQueries.setYank(
                    db, yank.pluginID, yank.version, reason: yank.made.reason ?? "yanked on the replaced board", by: change.actor,
                    at: change.now)
            }
            try record("yank", "plugin_version", yank.made.name, yank.made, after: .object(["yanked": .bool(true)]))
        }
        for signer in signers where try SignatureQueries.revocation(db, signer.name) == nil {
            if apply {
                try SignatureQueries.insertRevocation(
                    db, signer.name, reason: signer.reason ?? "revoked on the replaced board", by: change.actor, at: change.now)
            }
            try record("signer revocation", "signer", signer.name, signer, after: .object(["revoked": .bool(true)]))
        }
        for token in tokens {
            guard let current = try TokenQueries.token(db, token.name), current.state != .revoked else { continue }
            if apply { try TokenQueries.revoke(db, token.name, reason: token.reason, by: change.actor, at: change.now) }
            try record("token revocation", "api_token", token.name, token, after: .object(["state": .string("revoked")]))
        }
        if try db.tableExists("access_tokens") {
            for token in accessTokens {
                guard let current = try AccessTokenQueries.token(db, principal: token.principal, name: token.name),
                    current.state != .revoked
                else { continue }
                if apply {
                    try AccessTokenQueries.revoke(
                        db, principal: token.principal, name: token.name, reason: token.made.reason, by: change.actor, at: change.now)
                }
                try record(
                    "access token revocation", "access_token", token.made.name, token.made, after: .object(["state": .string("revoked")]))
            }
        }
        return carried
    }
}
