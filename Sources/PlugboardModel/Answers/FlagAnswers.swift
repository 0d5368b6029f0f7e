public import Foundation
public import PlugboardFlags
import PlugboardMacros
public import PlugboardVersioning

/// The kinds of flag, with Unleash's expected lifetimes (after which a flag is "potentially stale").
public enum FlagType: String, Sendable, Hashable, Codable, CaseIterable {
    case release
    case experiment
    case operational
    case killSwitch = "kill-switch"
    case permission
}

/// A row of `plugboard flag list`: one flag in one environment.
@MemberwiseInit(.package)
public struct FlagSummary: Sendable, Hashable, Codable {
    public let name: String
    public let type: String
    public let description: String?
    public let owner: String
    public let environment: String
    public let enabled: Bool
    public let strategyCount: Int
    public let variantCount: Int
    public let archived: Bool
    /// Older than its type's expected lifetime (Unleash's rule).
    public let potentiallyStale: Bool
    public let createdAt: String
    public let updatedAt: String
}

/// A flag's definition in one environment.
@MemberwiseInit(.package)
public struct FlagEnvironmentDefinition: Sendable, Hashable, Codable {
    public let environment: String
    public let enabled: Bool
    public let strategies: [Strategy]
    public let variants: [FeatureVariant]
}

/// Everything the board knows about one flag.
@MemberwiseInit(.package)
public struct FlagDetail: Sendable, Hashable, Codable {
    public let name: String
    public let type: String
    public let description: String?
    public let owner: String
    public let impressionData: Bool
    public let dependencies: [FeatureDependency]
    public let createdAt: String
    public let createdBy: String
    public let updatedAt: String
    public let archivedAt: String?
    public let potentiallyStale: Bool
    public let environments: [FlagEnvironmentDefinition]
    /// How clients of `plugboard serve` evaluated it, per environment (empty when none did).
    public let usage: [FlagUsageSummary]
}

/// How clients used one flag in one environment, over the kept hour buckets.
@MemberwiseInit(.package)
public struct FlagUsageSummary: Sendable, Hashable, Codable {
    public let environment: String
    /// The last hour in which a client evaluated the flag (`YYYY-MM-DDTHH:00:00Z`), nil if never.
    public let lastSeen: String?
    public let yes: Int
    public let no: Int
    /// Variant name → count.
    public let variants: [String: Int]
}

/// A row of `plugboard clients`.
@MemberwiseInit(.package)
public struct ClientInstance: Sendable, Hashable, Codable {
    public let appName: String
    public let instanceID: String
    public let environment: String
    public let sdkVersion: String?
    public let tokenName: String?
    public let firstSeen: String
    public let lastSeen: String
}
