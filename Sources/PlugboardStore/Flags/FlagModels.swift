package import PlugboardFlags
import PlugboardModel

/// The kinds of flag, with Unleash's expected lifetimes (after which a flag is "potentially stale").
package enum FlagType: String, Sendable, Hashable, Codable, CaseIterable {
    case release
    case experiment
    case operational
    case killSwitch = "kill-switch"
    case permission
}

/// A row of `plugboard flag list`: one flag in one environment.
package struct FlagSummary: Sendable, Hashable, Codable {
    package let name: String
    package let type: String
    package let description: String?
    package let owner: String
    package let environment: String
    package let enabled: Bool
    package let strategyCount: Int
    package let variantCount: Int
    package let archived: Bool
    /// Older than its type's expected lifetime (Unleash's rule).
    package let potentiallyStale: Bool
    package let createdAt: String
    package let updatedAt: String
}

/// A flag's definition in one environment.
package struct FlagEnvironmentDefinition: Sendable, Hashable, Codable {
    package let environment: String
    package let enabled: Bool
    package let strategies: [Strategy]
    package let variants: [FeatureVariant]
}

/// Everything the board knows about one flag.
package struct FlagDetail: Sendable, Hashable, Codable {
    package let name: String
    package let type: String
    package let description: String?
    package let owner: String
    package let impressionData: Bool
    package let dependencies: [FeatureDependency]
    package let createdAt: String
    package let createdBy: String
    package let updatedAt: String
    package let archivedAt: String?
    package let potentiallyStale: Bool
    package let environments: [FlagEnvironmentDefinition]
    /// How clients of `plugboard serve` evaluated it, per environment (empty when none did).
    package let usage: [FlagUsageSummary]
}
