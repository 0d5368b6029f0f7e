import Foundation
import PlugboardFlags
public import PlugboardVersioning

/// What a kill switch covers.
public enum KillTarget: Sendable, Hashable, CustomStringConvertible {
    /// Every plug-in.
    case all
    /// One plug-in, every version.
    case plugin(String)
    /// One version of one plug-in.
    case version(String, SemanticVersion)

    package var scope: String {
        switch self {
        case .all: "all"
        case .plugin: "plugin"
        case .version: "version"
        }
    }

    package var pluginID: String? {
        switch self {
        case .all: nil
        case .plugin(let id), .version(let id, _): id
        }
    }

    package var versionText: String? {
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
    package var target: KillTarget? {
        switch (scope, pluginID, version) {
        case ("all", nil, nil): .all
        case ("plugin", let id?, nil): .plugin(id)
        case ("version", let id?, let version?): (try? SemanticVersion(version)).map { .version(id, $0) }
        default: nil
        }
    }

    /// A value with each stored property given.
    package init(
        id: Int64, scope: String, pluginID: String?, version: String?, reason: String, killedAt: String, killedBy: String,
        revivedAt: String?, revivedBy: String?, reviveReason: String?
    ) {
        self.id = id
        self.scope = scope
        self.pluginID = pluginID
        self.version = version
        self.reason = reason
        self.killedAt = killedAt
        self.killedBy = killedBy
        self.revivedAt = revivedAt
        self.revivedBy = revivedBy
        self.reviveReason = reviveReason
    }
}
