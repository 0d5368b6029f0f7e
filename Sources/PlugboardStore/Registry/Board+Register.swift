import Crypto
import Foundation
package import PlugboardModel
import PlugboardVersioning

extension Board {
    /// Registers a version of a plug-in (and the plug-in itself, if new), optionally with an artifact file.
    ///
    /// A new plug-in may be registered by any board user, who becomes its owner; a new version of an existing
    /// plug-in needs its owner, a maintainer or an admin. Versions are immutable: registering an existing
    /// version is refused. With `artifactPath`, the file is copied into the content-addressed store beside the
    /// board and its SHA-256 recorded; the copy is kept only if the registration commits. Each of `signatures` must
    /// verify and cover exactly this release (`ReleaseStatement`); they are stored in the same transaction.
    package func register(
        _ manifest: PluginManifest, artifactPath: String? = nil, signatures: [ReleaseSignature] = [], by actor: Principal
    ) throws(BoardError) -> ChangeResult {
        let store = ArtifactStore(root: artifactsPath)
        let staged = try artifactPath.map { path throws(BoardError) in try store.stage(path) }
        let target = "\(manifest.id)@\(manifest.version)"
        do {
            return try change(actor, refusal: AuditEntry(action: .pluginRegister, targetType: "plugin_version", targetID: target)) {
                change in
                let isNew = try registerVersion(manifest, artifact: staged, change)
                try storeSignatures(signatures, of: manifest.id, manifest.version.description, change)
                let notes = try trustNotes(signatures, manifest.id, change.db)
                if let staged { try store.commit(staged) }
                return ChangeResult(
                    changed: true,
                    isNew
                        ? "Registered the new plug-in \(manifest.id) at version \(manifest.version); \(actor.osUser) is its owner. It is disabled until you run plugboard plugin enable \(manifest.id)."
                        : "Registered \(target)\(signatures.isEmpty ? "" : " with \(signatures.count) signature\(signatures.count == 1 ? "" : "s")").",
                    notes: notes)
            }
        } catch {
            if let staged { store.discard(staged) }
            throw error
        }
    }

    /// Registers many versions in one change (a migration from another registry, a release train): all of them, or
    /// none when any one is refused. Each version gets its own audit row, as with `register(_:artifactPath:by:)`
    /// one at a time; versions of the same plug-in may follow each other (the first one makes the plug-in).
    ///
    /// - Throws: `BoardError` naming the manifest that was refused (`conflict`, `notAllowed`), with nothing changed;
    ///   `invalidInput` for an empty list.
    package func register(_ manifests: [PluginManifest], by actor: Principal) throws(BoardError) -> ChangeResult {
        guard let first = manifests.first else { throw .invalid("no manifest was given; nothing was changed") }
        if manifests.count == 1 { return try register(first, by: actor) }
        let refusal = AuditEntry(
            action: .pluginRegister, targetType: "plugin_version",
            targetID: "\(first.id)@\(first.version) and \(manifests.count - 1) more")
        return try change(actor, refusal: refusal) { change in
            var created = 0
            for manifest in manifests {
                do {
                    if try registerVersion(manifest, artifact: nil, change) { created += 1 }
                } catch let error as BoardError {
                    throw BoardError(error.code, "\(manifest.id)@\(manifest.version): \(error.message); nothing was registered")
                }
            }
            return ChangeResult(
                changed: true,
                "Registered \(manifests.count) versions in one change (\(created) new plug-in\(created == 1 ? "" : "s"), owned by \(actor.osUser) and disabled until enabled)."
            )
        }
    }

    /// Writes the plug-in (if new), its owner, the artifact row, the version and its dependencies, and the audit row.
    /// Returns whether the plug-in is new.
    private func registerVersion(_ manifest: PluginManifest, artifact staged: ArtifactStore.Staged?, _ change: AuditedChange) throws -> Bool
    {
        let db = change.db
        let version = manifest.version.description
        let isNew = try !RegistryQueries.pluginExists(db, manifest.id)
        if isNew {
            try RegistryQueries.insertPlugin(db, manifest, by: change.actor, at: change.now)
            try RoleQueries.saveOwner(
                db, pluginID: manifest.id, principal: change.actor.osUser, role: .owner, by: change.actor, at: change.now)
        } else {
            try RequiredRole.check(.pluginMaintainers(manifest.id, doing: "register a new version of"), db, by: change.actor)
            if let existing = try RegistryQueries.registration(db, manifest.id, version) {
                throw BoardError.conflict(
                    "\(manifest.id)@\(version) is already registered (on \(existing.at) by \(existing.by)); versions are immutable, so register a new version"
                )
            }
            if let same = try RegistryQueries.versions(db, manifest.id, precedenceKey: manifest.version.precedenceKey).first {
                throw BoardError.conflict(
                    "\(manifest.id)@\(version) is already registered: \(version) has the same precedence as the registered \(same) (build metadata does not make a new version); register a new version"
                )
            }
        }
        if let staged { try RegistryQueries.insertArtifact(db, staged, by: change.actor, at: change.now) }
        let capabilities = AuditJSON.array(manifest.capabilities.map(AuditJSON.string))
        try RegistryQueries.insertVersion(
            db, manifest, capabilities: capabilities.canonicalText, artifact: staged?.sha256, by: change.actor, at: change.now)
        // The plug-in's name and description follow its highest registered version.
        if !isNew, try RegistryQueries.highestVersion(db, manifest.id) == version {
            try RegistryQueries.updatePluginNaming(db, manifest)
        }
        var after: [String: AuditJSON] = [
            "id": .string(manifest.id), "version": .string(version), "name": .string(manifest.name),
            "host": .optional(manifest.host?.description), "gate": .optional(manifest.gate), "entry": .optional(manifest.entry),
            "capabilities": capabilities, "dependencies": .object(manifest.dependencies.mapValues { .string($0.description) }),
            "artifact_sha256": .optional(staged?.sha256), "manifest_sha256": .string(SHA256.hex(Data(manifest.source.utf8))),
        ]
        if isNew { after["owner"] = .string(change.actor.osUser) }
        try change.record(
            AuditEntry(
                action: .pluginRegister, targetType: "plugin_version", targetID: "\(manifest.id)@\(version)", after: .object(after)))
        return isNew
    }
}
