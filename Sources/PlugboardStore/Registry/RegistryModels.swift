public import PlugboardModel
public import PlugboardVersioning

/// A row of `plugboard plugin list`: one plug-in's state in one environment.
package struct PluginSummary: Sendable, Hashable, Codable {
    package let id: String
    package let name: String
    package let environment: String
    package let enabled: Bool
    /// True when a kill switch covers the plug-in or all plug-ins.
    package let killed: Bool
    package let pinnedVersion: String?
    /// Highest registered release that is neither yanked nor killed.
    package let latestVersion: String?
    /// `pinnedVersion`, else `latestVersion` (host compatibility is decided by each host).
    package let activeVersion: String?
    package let versionCount: Int
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
}

/// A plug-in's enablement and pin in one environment.
public struct EnvironmentState: Sendable, Hashable, Codable {
    public let environment: String
    public let enabled: Bool
    public let pinnedVersion: String?
    public let activeVersion: String?
}

/// An owner or maintainer of a plug-in.
public struct PluginOwner: Sendable, Hashable, Codable {
    /// What a principal may do with a plug-in.
    public enum Role: String, Sendable, Hashable, Codable, CaseIterable {
        /// Everything, including managing owners.
        case owner
        /// Everything except managing owners.
        case maintainer
    }

    public let principal: String
    public let role: Role
    public let addedAt: String
    public let addedBy: String
}

/// A board administrator.
package struct BoardAdmin: Sendable, Hashable, Codable {
    package let principal: String
    package let addedAt: String
    package let addedBy: String
}

/// What a kill switch covers.
public enum KillTarget: Sendable, Hashable, CustomStringConvertible {
    /// Every plug-in.
    case all
    /// One plug-in, every version.
    case plugin(String)
    /// One version of one plug-in.
    case version(String, SemanticVersion)

    var scope: String {
        switch self {
        case .all: "all"
        case .plugin: "plugin"
        case .version: "version"
        }
    }

    var pluginID: String? {
        switch self {
        case .all: nil
        case .plugin(let id), .version(let id, _): id
        }
    }

    var versionText: String? {
        if case .version(_, let version) = self { return version.description }
        return nil
    }

    /// `all plug-ins`, `com.example.x`, or `com.example.x@1.2.3`.
    public var description: String {
        switch self {
        case .all: "all plug-ins"
        case .plugin(let id): id
        case .version(let id, let version): "\(id)@\(version)"
        }
    }
}

/// A kill switch, active or revived.
public struct KillSwitch: Sendable, Hashable, Codable {
    public let id: Int64
    /// `all`, `plugin` or `version`.
    public let scope: String
    public let pluginID: String?
    public let version: String?
    public let reason: String
    public let killedAt: String
    public let killedBy: String
    public let revivedAt: String?
    public let revivedBy: String?
    public let reviveReason: String?
    /// True while the kill switch is in force.
    public var active: Bool { revivedAt == nil }

    /// What it covers, or nil for a row whose scope or version the board's checks would not have written.
    var target: KillTarget? {
        switch (scope, pluginID, version) {
        case ("all", nil, nil): .all
        case ("plugin", let id?, nil): .plugin(id)
        case ("version", let id?, let version?): (try? SemanticVersion(version)).map { .version(id, $0) }
        default: nil
        }
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
