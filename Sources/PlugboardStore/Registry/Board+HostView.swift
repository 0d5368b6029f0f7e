import Foundation
import GRDB
import PlugboardFlags
package import PlugboardModel

extension Board {
    /// The check of one release for a host of `environment` under `policy`, its rows proven by the audit log's head
    /// from `anchor` (see ``stateProblems(pluginID:version:environment:anchor:)``).
    package func releaseCheck(
        pluginID: String, version: String, environment: String, policy: SignaturePolicy, anchor: AuditCheckpoint? = nil
    ) throws(BoardError) -> ReleaseCheck {
        ReleaseCheck(
            stateProblem: try stateProblems(pluginID: pluginID, version: version, environment: environment, anchor: anchor).first,
            signature: policy == .off ? nil : try signatureVerdict(pluginID: pluginID, version: version))
    }

    /// A ``HostView`` of `environment` for a host that names `relevantTo` (its compiled-in, active and reported
    /// plug-ins; see ``registrySnapshot(environment:relevantTo:)``).
    ///
    /// Only plug-ins enabled in `environment` come with their releases. A named plug-in, or a dependency, that is not
    /// enabled there is listed with its enablement and kill switch but no release: a host never loads it (a
    /// dependency must be loaded itself), and a host of one environment learns nothing of releases that only another
    /// environment runs.
    ///
    /// The registry is read with the proof of the board as a whole (see ``proveHead(extending:)``), walked on from the
    /// last head this object proved; the view is returned with the head that proves it, which `plugboard serve`
    /// signs with the board's key.
    ///
    /// - Throws: ``BoardError`` `.integrity` when the board cannot be proven: no host is given a view of it.
    package func hostView(environment: String, relevantTo: Set<String>) throws(BoardError) -> (view: HostView, head: AuditCheckpoint?) {
        var (registry, head) = try provenRegistrySnapshot(environment: environment, relevantTo: relevantTo, anchor: nil)
        registry.plugins = registry.plugins.mapValues { plugin in plugin.enabled ? plugin : plugin.withoutReleases() }
        var checks: [String: ReleaseCheck] = [:]
        var releases: [String: SignatureEvidence.Release] = [:]
        for plugin in registry.plugins.values where plugin.enabled {
            for version in plugin.versions {
                let key = ReleaseCheck.key(plugin.id, version.version)
                checks[key] = try releaseCheck(
                    pluginID: plugin.id, version: version.version, environment: environment, policy: registry.signaturePolicy,
                    anchor: head)
                if registry.signaturePolicy != .off, let release = try signatureEvidence(pluginID: plugin.id, version: version.version) {
                    releases[key] = release
                }
            }
        }
        let evidence =
            registry.signaturePolicy == .off
            ? nil : SignatureEvidence(releases: releases, trust: try read { db in try SignatureQueries.trust(db) })
        let view = HostView(
            registry: registry, checks: checks, features: try featureSet(environment: environment, requireExisting: false),
            evidence: evidence)
        return (view, head)
    }

    /// The statement and signatures of one registered release, as its rows give them (nil when not registered).
    private func signatureEvidence(pluginID: String, version: String) throws(BoardError) -> SignatureEvidence.Release? {
        try read { db in
            guard let statement = try SignatureQueries.release(db, pluginID, version) else { return nil }
            return SignatureEvidence.Release(statement: statement, signatures: try SignatureQueries.signatures(db, pluginID, version))
        }
    }

    /// Whether `sha256` is the artifact of a release of a plug-in enabled in `environment`: the only files
    /// `plugboard serve` hands to a host of that environment. These are the releases its ``hostView(environment:relevantTo:)``
    /// lists; a dependency a host loads is enabled there too, or it is not loaded.
    package func isArtifact(sha256: String, enabledIn environment: String) throws(BoardError) -> Bool {
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return false }
        return try read { db in try RegistryQueries.isArtifact(db, sha256: sha256, enabledIn: environment) }
    }
}
