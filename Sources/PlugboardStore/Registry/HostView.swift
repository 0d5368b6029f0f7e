import Foundation
import GRDB
import PlugboardFlags

/// What a host must know about one release before any of its code loads, beyond the registry rows: whether the
/// board's rows for it are the ones its audit log recorded, and (under a signature policy) its signature level.
public struct ReleaseCheck: Sendable, Hashable, Codable {
    /// The first state-proof problem (see ``Board/stateProblems(pluginID:version:environment:anchor:)``); nil when proven.
    public var stateProblem: String?
    /// The release's signature level; nil under the `off` policy.
    public var signature: SignatureVerdict?

    /// Creates a check.
    public init(stateProblem: String? = nil, signature: SignatureVerdict? = nil) {
        self.stateProblem = stateProblem
        self.signature = signature
    }

    /// The key of a release in ``HostView/checks``: `id@version`.
    public static func key(_ pluginID: String, _ version: String) -> String { "\(pluginID)@\(version)" }
}

/// Everything a host on another machine needs to decide what to load, as `plugboard serve` sends it
/// (`GET /api/host/snapshot`) and as the host caches it: the registry of its environment, the checks of every
/// release it could select, and the environment's flags (gates, and the flags its plug-ins evaluate).
public struct HostView: Sendable, Hashable, Codable {
    /// The registry as the host sees it (see ``Board/registrySnapshot(environment:relevantTo:)``).
    public var registry: RegistrySnapshot
    /// The check of every release of every enabled plug-in in ``registry``, by ``ReleaseCheck/key(_:_:)``.
    public var checks: [String: ReleaseCheck]
    /// The environment's flags, as the Unleash client API serves them.
    public var features: FeatureSet
    /// Under the `warn` and `require` policies, what a host needs to check each release's signatures itself: the
    /// releases' statements as the board's rows give them, their signatures, and the keys trusted and revoked.
    public var evidence: SignatureEvidence?

    /// Creates a view.
    public init(registry: RegistrySnapshot, checks: [String: ReleaseCheck], features: FeatureSet, evidence: SignatureEvidence? = nil) {
        self.registry = registry
        self.checks = checks
        self.features = features
        self.evidence = evidence
    }

    /// The JSON a server sends and a host caches: keys sorted and the board's local change counters left out, so that
    /// the same registry, checks and flags give the same bytes (and ETag) from any server, before and after restarts.
    public func encoded() -> Data {
        var content = self
        content.registry.version = BoardVersion(dataVersion: 0, ownChanges: 0)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(content)) ?? Data()
    }

    /// Decodes a view, or says in one sentence why it cannot.
    public static func decode(_ data: Data) throws(BoardError) -> HostView {
        do { return try JSONDecoder().decode(HostView.self, from: data) } catch {
            throw BoardError(.invalidInput, "the host snapshot is not valid JSON of the expected shape (\(error))")
        }
    }
}

/// What a host on another machine checks a release's signatures with, as the board's rows give it.
public struct SignatureEvidence: Sendable, Hashable, Codable {
    /// One release: the statement its rows make (id, version, manifest digest, artifact digest) and its signatures.
    public struct Release: Sendable, Hashable, Codable {
        public let statement: ReleaseStatement
        public let signatures: [ReleaseSignature]
    }

    /// By ``ReleaseCheck/key(_:_:)``.
    public var releases: [String: Release]
    /// The keys trusted and revoked.
    public var trust: SignerTrust

    /// The signature level of `pluginID@version`, computed here (``SignatureCheck``); nil when the evidence does not
    /// cover the release.
    public func verdict(pluginID: String, version: String) -> SignatureVerdict? {
        releases[ReleaseCheck.key(pluginID, version)].map {
            SignatureCheck.verdict(for: $0.statement, signatures: $0.signatures, trust: trust)
        }
    }
}

extension Board {
    /// The check of one release for a host of `environment` under `policy`, its rows proven by the audit log's head
    /// from `anchor` (see ``stateProblems(pluginID:version:environment:anchor:)``).
    public func releaseCheck(
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
    public func hostView(environment: String, relevantTo: Set<String>) throws(BoardError) -> (view: HostView, head: AuditCheckpoint?) {
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
    public func isArtifact(sha256: String, enabledIn environment: String) throws(BoardError) -> Bool {
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return false }
        return try read { db in try RegistryQueries.isArtifact(db, sha256: sha256, enabledIn: environment) }
    }
}
