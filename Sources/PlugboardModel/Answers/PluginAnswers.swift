import Foundation
import PlugboardFlags
import PlugboardVersioning

/// A row of `plugboard plugin list`: one plug-in's state in one environment.
public struct PluginSummary: Sendable, Hashable, Codable {
    public let id: String
    public let name: String
    public let environment: String
    public let enabled: Bool
    /// True when a kill switch covers the plug-in or all plug-ins.
    public let killed: Bool
    public let pinnedVersion: String?
    /// Highest registered release that is neither yanked nor killed.
    public let latestVersion: String?
    /// `pinnedVersion`, else `latestVersion` (host compatibility is decided by each host).
    public let activeVersion: String?
    public let versionCount: Int

    /// A value with each stored property given.
    package init(
        id: String, name: String, environment: String, enabled: Bool, killed: Bool, pinnedVersion: String?, latestVersion: String?,
        activeVersion: String?, versionCount: Int
    ) {
        self.id = id
        self.name = name
        self.environment = environment
        self.enabled = enabled
        self.killed = killed
        self.pinnedVersion = pinnedVersion
        self.latestVersion = latestVersion
        self.activeVersion = activeVersion
        self.versionCount = versionCount
    }
}

/// One registered version of a plug-in.
public struct PluginVersionInfo: Sendable, Hashable, Codable {
    public let version: String
    public let name: String
    public let description: String?
    public let hostRange: String?
    public let gate: String?
    public let entry: String?
    public let capabilities: [String]
    public let dependencies: [String: String]
    public let artifactSHA256: String?
    public let registeredAt: String
    public let registeredBy: String
    public let yankedAt: String?
    public let yankedBy: String?
    public let yankReason: String?
    /// True when a version-scoped kill switch covers this version.
    public let killed: Bool
    /// The manifest exactly as registered.
    public let manifest: String
    /// The release's signature level, with the keys involved (Grafana's signature levels: valid, unsigned,
    /// untrusted, revoked, modified, other-release, invalid).
    public let signature: SignatureVerdict

    /// A value with each stored property given.
    package init(
        version: String, name: String, description: String?, hostRange: String?, gate: String?, entry: String?, capabilities: [String],
        dependencies: [String: String], artifactSHA256: String?, registeredAt: String, registeredBy: String, yankedAt: String?,
        yankedBy: String?, yankReason: String?, killed: Bool, manifest: String, signature: SignatureVerdict
    ) {
        self.version = version
        self.name = name
        self.description = description
        self.hostRange = hostRange
        self.gate = gate
        self.entry = entry
        self.capabilities = capabilities
        self.dependencies = dependencies
        self.artifactSHA256 = artifactSHA256
        self.registeredAt = registeredAt
        self.registeredBy = registeredBy
        self.yankedAt = yankedAt
        self.yankedBy = yankedBy
        self.yankReason = yankReason
        self.killed = killed
        self.manifest = manifest
        self.signature = signature
    }
}

/// A plug-in's enablement and pin in one environment.
public struct EnvironmentState: Sendable, Hashable, Codable {
    public let environment: String
    public let enabled: Bool
    public let pinnedVersion: String?
    public let activeVersion: String?

    /// A value with each stored property given.
    package init(environment: String, enabled: Bool, pinnedVersion: String?, activeVersion: String?) {
        self.environment = environment
        self.enabled = enabled
        self.pinnedVersion = pinnedVersion
        self.activeVersion = activeVersion
    }
}

/// Everything the board knows about one plug-in.
public struct PluginDetail: Sendable, Hashable, Codable {
    public let id: String
    public let name: String
    public let description: String?
    public let createdAt: String
    public let createdBy: String
    /// Versions in descending SemVer precedence.
    public let versions: [PluginVersionInfo]
    public let environments: [EnvironmentState]
    public let owners: [PluginOwner]
    /// Kill switches that cover the plug-in (its own, its versions', and `all`), newest first, including revived ones.
    public let killSwitches: [KillSwitch]

    /// A value with each stored property given.
    package init(
        id: String, name: String, description: String?, createdAt: String, createdBy: String, versions: [PluginVersionInfo],
        environments: [EnvironmentState], owners: [PluginOwner], killSwitches: [KillSwitch]
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.versions = versions
        self.environments = environments
        self.owners = owners
        self.killSwitches = killSwitches
    }
}

/// The outcome of a change: whether anything changed, and a sentence for people.
public struct ChangeResult: Sendable, Hashable, Codable {
    /// False when the board already was in the requested state (nothing was written).
    public let changed: Bool
    /// One sentence saying what happened.
    public let message: String
    /// Extra notes, such as warnings.
    public let notes: [String]

    /// Creates a result.
    public init(changed: Bool, _ message: String, notes: [String] = []) {
        self.changed = changed
        self.message = message
        self.notes = notes
    }
}
