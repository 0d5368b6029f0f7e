import Foundation
import GRDB
import PlugboardFlags

/// What a host must know about one release before any of its code loads, beyond the registry rows: whether the
/// board's rows for it are the ones its audit log recorded, and (under a signature policy) its signature level.
public struct ReleaseCheck: Sendable, Hashable, Codable {
    /// The first state-proof problem (see ``Board/stateProblems(pluginID:version:environment:)``); nil when proven.
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

    /// Creates a view.
    public init(registry: RegistrySnapshot, checks: [String: ReleaseCheck], features: FeatureSet) {
        self.registry = registry
        self.checks = checks
        self.features = features
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

extension Board {
    /// The check of one release for a host of `environment` under `policy`.
    public func releaseCheck(pluginID: String, version: String, environment: String, policy: SignaturePolicy) throws(BoardError)
        -> ReleaseCheck
    {
        ReleaseCheck(
            stateProblem: try stateProblems(pluginID: pluginID, version: version, environment: environment).first,
            signature: policy == .off ? nil : try signatureVerdict(pluginID: pluginID, version: version))
    }

    /// A ``HostView`` of `environment` for a host that names `relevantTo` (its compiled-in, active and reported
    /// plug-ins; see ``registrySnapshot(environment:relevantTo:)``).
    ///
    /// Only plug-ins enabled in `environment` come with their releases. A named plug-in, or a dependency, that is not
    /// enabled there is listed with its enablement and kill switch but no release: a host never loads it (a
    /// dependency must be loaded itself), and a host of one environment learns nothing of releases that only another
    /// environment runs.
    public func hostView(environment: String, relevantTo: Set<String>) throws(BoardError) -> HostView {
        var registry = try registrySnapshot(environment: environment, relevantTo: relevantTo)
        registry.plugins = registry.plugins.mapValues { plugin in plugin.enabled ? plugin : plugin.withoutReleases() }
        var checks: [String: ReleaseCheck] = [:]
        for plugin in registry.plugins.values where plugin.enabled {
            for version in plugin.versions {
                checks[ReleaseCheck.key(plugin.id, version.version)] = try releaseCheck(
                    pluginID: plugin.id, version: version.version, environment: environment, policy: registry.signaturePolicy)
            }
        }
        return HostView(registry: registry, checks: checks, features: try featureSet(environment: environment, requireExisting: false))
    }

    /// Whether `sha256` is the artifact of a release of a plug-in enabled in `environment`: the only files
    /// `plugboard serve` hands to a host of that environment. These are the releases its ``hostView(environment:relevantTo:)``
    /// lists; a dependency a host loads is enabled there too, or it is not loaded.
    public func isArtifact(sha256: String, enabledIn environment: String) throws(BoardError) -> Bool {
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return false }
        return try read { db in try RegistryQueries.isArtifact(db, sha256: sha256, enabledIn: environment) }
    }
}
