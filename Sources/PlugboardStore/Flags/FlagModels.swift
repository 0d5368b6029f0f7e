public import PlugboardFlags
public import PlugboardModel

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
}

/// A flag's definition in one environment.
public struct FlagEnvironmentDefinition: Sendable, Hashable, Codable {
    public let environment: String
    public let enabled: Bool
    public let strategies: [Strategy]
    public let variants: [FeatureVariant]
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
}

extension Validate {
    /// A flag name: 1–255 characters with no whitespace and none of the characters ``Validate/isUnsafe(_:)`` names
    /// (Unleash allows UTF-8 names).
    public static func flagName(_ name: String) throws(BoardError) {
        guard !name.isEmpty, name.utf8.count <= 255,
            !name.unicodeScalars.contains(where: { $0.properties.isWhitespace || isUnsafe($0) })
        else {
            throw .invalid(
                "flag name '\(printable(name))' is not valid: use 1-255 characters without spaces, control or invisible characters, for example checkout.new-flow"
            )
        }
    }
}
