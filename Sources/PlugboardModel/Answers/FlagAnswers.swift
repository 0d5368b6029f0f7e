import Foundation
public import PlugboardFlags
import PlugboardVersioning

/// The kinds of flag, with Unleash's expected lifetimes (after which a flag is "potentially stale").
public enum FlagType: String, Sendable, Hashable, Codable, CaseIterable {
    case release
    case experiment
    case operational
    case killSwitch = "kill-switch"
    case permission
}

/// A row of `plugboard flag list`: one flag in one environment.
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

    /// A value with each stored property given.
    package init(
        name: String, type: String, description: String?, owner: String, environment: String, enabled: Bool, strategyCount: Int,
        variantCount: Int, archived: Bool, potentiallyStale: Bool, createdAt: String, updatedAt: String
    ) {
        self.name = name
        self.type = type
        self.description = description
        self.owner = owner
        self.environment = environment
        self.enabled = enabled
        self.strategyCount = strategyCount
        self.variantCount = variantCount
        self.archived = archived
        self.potentiallyStale = potentiallyStale
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A flag's definition in one environment.
public struct FlagEnvironmentDefinition: Sendable, Hashable, Codable {
    public let environment: String
    public let enabled: Bool
    public let strategies: [Strategy]
    public let variants: [FeatureVariant]

    /// A value with each stored property given.
    package init(environment: String, enabled: Bool, strategies: [Strategy], variants: [FeatureVariant]) {
        self.environment = environment
        self.enabled = enabled
        self.strategies = strategies
        self.variants = variants
    }
}

/// Everything the board knows about one flag.
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

    /// A value with each stored property given.
    package init(
        name: String, type: String, description: String?, owner: String, impressionData: Bool, dependencies: [FeatureDependency],
        createdAt: String, createdBy: String, updatedAt: String, archivedAt: String?, potentiallyStale: Bool,
        environments: [FlagEnvironmentDefinition], usage: [FlagUsageSummary]
    ) {
        self.name = name
        self.type = type
        self.description = description
        self.owner = owner
        self.impressionData = impressionData
        self.dependencies = dependencies
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.updatedAt = updatedAt
        self.archivedAt = archivedAt
        self.potentiallyStale = potentiallyStale
        self.environments = environments
        self.usage = usage
    }
}

/// How clients used one flag in one environment, over the kept hour buckets.
public struct FlagUsageSummary: Sendable, Hashable, Codable {
    public let environment: String
    /// The last hour in which a client evaluated the flag (`YYYY-MM-DDTHH:00:00Z`), nil if never.
    public let lastSeen: String?
    public let yes: Int
    public let no: Int
    /// Variant name → count.
    public let variants: [String: Int]

    /// A value with each stored property given.
    package init(environment: String, lastSeen: String?, yes: Int, no: Int, variants: [String: Int]) {
        self.environment = environment
        self.lastSeen = lastSeen
        self.yes = yes
        self.no = no
        self.variants = variants
    }
}

/// A row of `plugboard clients`.
public struct ClientInstance: Sendable, Hashable, Codable {
    public let appName: String
    public let instanceID: String
    public let environment: String
    public let sdkVersion: String?
    public let tokenName: String?
    public let firstSeen: String
    public let lastSeen: String

    /// A value with each stored property given.
    package init(
        appName: String, instanceID: String, environment: String, sdkVersion: String?, tokenName: String?, firstSeen: String,
        lastSeen: String
    ) {
        self.appName = appName
        self.instanceID = instanceID
        self.environment = environment
        self.sdkVersion = sdkVersion
        self.tokenName = tokenName
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}
