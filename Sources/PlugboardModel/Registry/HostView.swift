public import Foundation
public import PlugboardFlags

/// What a host must know about one release before any of its code loads, beyond the registry rows: whether the
/// board's rows for it are the ones its audit log recorded, and (under a signature policy) its signature level.
public struct ReleaseCheck: Sendable, Hashable, Codable {
    /// The first state-proof problem (see `Board.stateProblems(pluginID:version:environment:anchor:)`); nil when proven.
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
    /// The registry as the host sees it (see `Board.registrySnapshot(environment:relevantTo:)`).
    public var registry: RegistrySnapshot
    /// The check of every release of every enabled plug-in in ``registry``, by ``ReleaseCheck/key(_:_:)``.
    public var checks: [String: ReleaseCheck]
    /// The environment's flags, as the Unleash client API serves them.
    public var features: FeatureSet
    /// Under the `warn` and `require` policies, what a host needs to check each release's signatures itself: the
    /// releases' statements as the board's rows give them, their signatures, and the keys trusted and revoked.
    public var evidence: SignatureEvidence?

    /// A value with each stored property given.
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

        /// Creates a value from its fields.
        package init(statement: ReleaseStatement, signatures: [ReleaseSignature]) {
            self.statement = statement
            self.signatures = signatures
        }
    }

    /// By ``ReleaseCheck/key(_:_:)``.
    public var releases: [String: Release]
    /// The keys trusted and revoked.
    public var trust: SignerTrust

    /// Creates a value from its fields.
    package init(releases: [String: Release], trust: SignerTrust) {
        self.releases = releases
        self.trust = trust
    }

    /// The signature level of `pluginID@version`, computed here (``SignatureCheck``); nil when the evidence does not
    /// cover the release.
    public func verdict(pluginID: String, version: String) -> SignatureVerdict? {
        releases[ReleaseCheck.key(pluginID, version)].map {
            SignatureCheck.verdict(for: $0.statement, signatures: $0.signatures, trust: trust)
        }
    }
}
