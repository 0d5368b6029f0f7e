import Foundation

/// Everything a host needs to decide what to load in one environment, read in one transaction.
///
/// Hosts read only: building a snapshot never writes, so a host with read-only access to the board works.
public struct RegistrySnapshot: Sendable, Hashable, Codable {
    /// One registered version as a host sees it.
    public struct Version: Sendable, Hashable, Codable {
        public let version: String
        public let hostRange: String?
        public let dependencies: [String: String]
        public let gate: String?
        public let entry: String?
        public let capabilities: [String]
        public let artifactSHA256: String?
        public let yanked: Bool
        /// True when a version-scoped kill switch covers it.
        public let killed: Bool

        /// A value with each stored property given.
        package init(
            version: String, hostRange: String?, dependencies: [String: String], gate: String?, entry: String?, capabilities: [String],
            artifactSHA256: String?, yanked: Bool, killed: Bool
        ) {
            self.version = version
            self.hostRange = hostRange
            self.dependencies = dependencies
            self.gate = gate
            self.entry = entry
            self.capabilities = capabilities
            self.artifactSHA256 = artifactSHA256
            self.yanked = yanked
            self.killed = killed
        }
    }

    /// One plug-in as a host sees it in the snapshot's environment.
    public struct Plugin: Sendable, Hashable, Codable {
        public let id: String
        public let enabled: Bool
        public let pinnedVersion: String?
        /// True when a plug-in-scoped kill switch covers it.
        public let killed: Bool
        /// The reason of the kill switch, when killed.
        public let killReason: String?
        /// Every registered version, highest precedence first.
        public let versions: [Version]
        /// The plug-in's rollout in the snapshot's environment, if it was ever released by one (see ``Rollout``): it
        /// bounds the release each host may run. Nil when none, so that a snapshot without rollouts encodes as before.
        public let rollout: Rollout?
        /// Where the environment is protected (``RegistrySnapshot/approvedReleasesOnly``), the newest release a change
        /// took in: hosts run, of an unpinned plug-in without a rollout, no release newer than it, and none when it is
        /// nil. Nil elsewhere too, so that such a snapshot encodes as before.
        public let approvedVersion: String?

        /// A value with each stored property given.
        package init(
            id: String, enabled: Bool, pinnedVersion: String?, killed: Bool, killReason: String?, versions: [Version],
            rollout: Rollout? = nil, approvedVersion: String? = nil
        ) {
            self.id = id
            self.enabled = enabled
            self.pinnedVersion = pinnedVersion
            self.killed = killed
            self.killReason = killReason
            self.versions = versions
            self.rollout = rollout
            self.approvedVersion = approvedVersion
        }

        /// The plug-in with no release listed (see ``Board/hostView(environment:relevantTo:)``).
        package func withoutReleases() -> Plugin {
            Plugin(
                id: id, enabled: enabled, pinnedVersion: pinnedVersion, killed: killed, killReason: killReason, versions: [],
                rollout: rollout, approvedVersion: approvedVersion)
        }
    }

    /// The environment the snapshot describes.
    public let environment: String
    /// True when a kill switch covers all plug-ins.
    public let allKilled: Bool
    /// The reason of the all-plug-ins kill switch.
    public let allKilledReason: String?
    /// Every registered plug-in, by id.
    public package(set) var plugins: [String: Plugin]
    /// The environment's signature policy: under `warn` and `require` a host checks each release's signatures
    /// (`Board.signatureVerdict(pluginID:version:)`) before any of its code loads.
    public let signaturePolicy: SignaturePolicy
    /// The board's version when the snapshot was read (see `Board.version()`), to notice later changes cheaply.
    public package(set) var version: BoardVersion
    /// The releases of hosts' quarantines of the snapshot's plug-ins, for every host: each host acts on those of its own
    /// id (see ``QuarantineRelease``). Nil when there are none, so that a snapshot without any encodes as before them.
    public let quarantineReleases: [QuarantineRelease]?
    /// What a host checks signed approvals with (see ``ApprovalCheck``): present when the environment's policy requires
    /// signed approvals or an enabled plug-in's enablement carries them; nil otherwise, so that a snapshot without any
    /// encodes as before them.
    public let approvals: ApprovalEvidence?
    /// True where the environment is protected (its changes need approvals): a release registered there runs only once
    /// a change takes it in, so hosts run, of an unpinned plug-in without a rollout, no release newer than its
    /// ``Plugin/approvedVersion``. Nil otherwise, so that such a snapshot encodes as before.
    public let approvedReleasesOnly: Bool?
    /// The advisories that affect a plug-in of the snapshot, with their action in its environment (see
    /// ``HostAdvisory``): a host checks every release it would select against them. Nil when there are none, so that
    /// a snapshot without any encodes as before them.
    public let advisories: [HostAdvisory]?
    /// ``advisories`` by the plug-in ids they name, made at the first look (see ``advisories(affecting:_:)``); neither
    /// encoded nor compared.
    let advisoryIndex = AdvisoryIndex()

    private enum CodingKeys: String, CodingKey {
        case environment, allKilled, allKilledReason, plugins, signaturePolicy, version, quarantineReleases, approvals
        case approvedReleasesOnly, advisories
    }

    /// Creates a value from its fields.
    package init(
        environment: String, allKilled: Bool, allKilledReason: String?, plugins: [String: Plugin], signaturePolicy: SignaturePolicy,
        version: BoardVersion, quarantineReleases: [QuarantineRelease] = [], approvals: ApprovalEvidence? = nil,
        approvedReleasesOnly: Bool = false, advisories: [HostAdvisory] = []
    ) {
        self.environment = environment
        self.allKilled = allKilled
        self.allKilledReason = allKilledReason
        self.plugins = plugins
        self.signaturePolicy = signaturePolicy
        self.version = version
        self.quarantineReleases = quarantineReleases.isEmpty ? nil : quarantineReleases
        self.approvals = approvals
        self.approvedReleasesOnly = approvedReleasesOnly ? true : nil
        self.advisories = advisories.isEmpty ? nil : advisories
    }

    /// The releases of quarantines made for the host `hostID`.
    public func quarantineReleases(forHost hostID: String) -> [QuarantineRelease] {
        (quarantineReleases ?? []).filter { $0.hostID == hostID }
    }
}
