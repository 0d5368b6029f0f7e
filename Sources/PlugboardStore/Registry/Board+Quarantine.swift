import GRDB
package import PlugboardModel
package import PlugboardVersioning

extension Board {
    /// Ends the quarantine that the host `hostID` put on `pluginID@version` for crashing it: the host loads the release
    /// again once it reads this release (see ``QuarantineRelease``). One audited change (`host.release-quarantine`); a
    /// later release of the same host and release replaces the row.
    ///
    /// Needs the plug-in's owners, its maintainers or a board admin; the version must be registered.
    ///
    /// - Parameters:
    ///   - hostID: The host id, as the host reports it (`plugboard plugin status`).
    ///   - pluginID: The plug-in.
    ///   - version: The version the host quarantined.
    ///   - reason: Why, kept in the row and the audit log.
    ///   - actor: Who releases it.
    package func releaseQuarantine(
        hostID: String, pluginID: String, version: SemanticVersion, reason: String?, by actor: Principal
    ) throws(BoardError) -> ChangeResult {
        try Validate.hostID(hostID)
        try Validate.pluginID(pluginID)
        if let reason { try Validate.reason(reason) }
        let action = AuditAction.hostReleaseQuarantine
        return try change(
            actor, refusal: AuditEntry(action: action, targetType: "quarantine_release", targetID: "\(pluginID)@\(version) on \(hostID)"),
            requiring: .pluginMaintainers(pluginID, doing: "release a quarantine of")
        ) { change in
            guard let registered = try VersionLookup.registered(change.db, pluginID, version) else {
                throw BoardError.notFound("\(pluginID)@\(version) is not registered; see plugboard plugin show \(pluginID)")
            }
            let before = try RegistryQueries.quarantineRelease(change.db, hostID: hostID, pluginID: pluginID, version: registered)
            let after = QuarantineRelease(
                hostID: hostID, pluginID: pluginID, version: registered, releasedAt: change.now, releasedBy: change.actor.osUser,
                reason: reason)
            try RegistryQueries.saveQuarantineRelease(change.db, after)
            try change.record(
                AuditEntry(
                    action: action, targetType: "quarantine_release", targetID: "\(pluginID)@\(registered) on \(hostID)", reason: reason,
                    before: before.map(QuarantineRules.json) ?? .null, after: QuarantineRules.json(after)))
            return ChangeResult(
                changed: true,
                "Released \(pluginID)@\(registered) on the host \(hostID): if the host quarantined it before now, it loads it again when it next reads the board."
            )
        }
    }

    /// Every release of a quarantine on the board, by host, plug-in and version.
    package func quarantineReleases() throws(BoardError) -> [QuarantineRelease] {
        try read { db in try RegistryQueries.quarantineReleases(db, ids: nil) }
    }
}

/// How the audit log shows a quarantine release.
enum QuarantineRules {
    static func json(_ release: QuarantineRelease) -> AuditJSON {
        .object([
            "host_id": .string(release.hostID), "released_at": .string(release.releasedAt), "released_by": .string(release.releasedBy),
            "reason": .optional(release.reason),
        ])
    }
}

extension RegistryQueries {
    /// The release of one host's quarantine of one release, if any.
    static func quarantineRelease(_ db: Database, hostID: String, pluginID: String, version: String) throws -> QuarantineRelease? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM quarantine_releases WHERE host_id = ? AND plugin_id = ? AND version = ?"),
            arguments: [hostID, pluginID, version]
        ).map(quarantineRelease)
    }

    /// Writes `release` in place of the one of the same host and release.
    static func saveQuarantineRelease(_ db: Database, _ release: QuarantineRelease) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO quarantine_releases (host_id, plugin_id, version, released_at, released_by, reason)
                VALUES (?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [release.hostID, release.pluginID, release.version, release.releasedAt, release.releasedBy, release.reason])
    }

    /// The releases of quarantines of the plug-ins `ids` (all when nil), for every host, ordered; none on a board from
    /// before them.
    static func quarantineReleases(_ db: Database, ids: [String]?) throws -> [QuarantineRelease] {
        guard try db.tableExists("quarantine_releases") else { return [] }
        let all = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM quarantine_releases ORDER BY plugin_id, version, host_id")
        ).map(quarantineRelease)
        guard let ids else { return all }
        let wanted = Set(ids)
        return all.filter { wanted.contains($0.pluginID) }
    }

    private static func quarantineRelease(_ row: Row) -> QuarantineRelease {
        QuarantineRelease(
            hostID: row["host_id"], pluginID: row["plugin_id"], version: row["version"], releasedAt: row["released_at"],
            releasedBy: row["released_by"], reason: row["reason"])
    }
}
