import PlugboardRegex
import PlugboardVersioning

/// A context field a constraint, stickiness or override reads.
enum ContextField: Sendable, Hashable {
    case userId, sessionId, environment, appName, remoteAddress, currentTime
    case property(String)

    /// The field as constraints and rollout stickiness name it.
    init(constraintName name: String) {
        switch name {
        case "userId": self = .userId
        case "sessionId": self = .sessionId
        case "environment": self = .environment
        case "appName": self = .appName
        case "remoteAddress": self = .remoteAddress
        case "currentTime": self = .currentTime
        default: self = .property(name)
        }
    }

    /// The key that overrides this field in a per-call `[String: String]` context (``UnleashContext/set(_:to:)``
    /// semantics): a standard field's own name, or the property's name; `nil` for a property named like a
    /// standard field (the override sets the field, not the property).
    var overrideName: String? {
        switch self {
        case .userId: "userId"
        case .sessionId: "sessionId"
        case .environment: "environment"
        case .appName: "appName"
        case .remoteAddress: "remoteAddress"
        case .currentTime: "currentTime"
        case .property(let name): ContextField(constraintName: name) == self ? name : nil
        }
    }

    /// The field as variant stickiness names it (Unleash's engine reads `currentTime` stickiness from properties).
    init(variantStickinessName name: String) {
        self = name == "currentTime" ? .property(name) : ContextField(constraintName: name)
    }
}

/// Strings compared byte for byte (UTF-8), as Unleash's engine compares them — Swift's `==` would also equate
/// canonically equivalent strings (`é` and `e` + combining accent), which Unleash does not. ``FlagProgram`` looks
/// them up in a ``NameTable``, which compares bytes.
struct ExactStringSet: Sendable {
    /// The members as given (duplicates included).
    let values: [String]

    init(_ values: some Sequence<String>) { self.values = Array(values) }
}

enum OrdinalComparison: Sendable {
    case equal, greater, greaterOrEqual, less, lessOrEqual

    /// The orders of a value against the constraint's that satisfy the comparison: bit 0 less, 1 equal, 2 greater.
    var orders: UInt8 {
        switch self {
        case .equal: 0b010
        case .greater: 0b100
        case .greaterOrEqual: 0b110
        case .less: 0b001
        case .lessOrEqual: 0b011
        }
    }
}

enum StringMatch: Sendable { case contains, startsWith, endsWith }

/// A constraint with its values parsed once.
struct CompiledConstraint: Sendable {
    enum Test: Sendable {
        /// False before inversion (an invalid regular expression or version, as in Unleash).
        case never
        case inList(ExactStringSet)
        case notInList(ExactStringSet)
        case string(StringMatch, values: [String], caseInsensitive: Bool)
        case number(OrdinalComparison, Double)
        case date(OrdinalComparison, UnleashInstant)
        case semver(OrdinalComparison, SemanticVersion)
        case regex(UnleashRegex)
        case cidr([IPNetwork])
    }

    let field: ContextField
    let test: Test
    let inverted: Bool
}

/// A strategy's own activation rule, before its constraints.
enum StrategyRule: Sendable {
    case always
    case never
    case userIds(ExactStringSet)
    /// `percent` of users by the first present stickiness source; `groupId` `nil` means the evaluated flag's name.
    case rollout(percent: UInt32, stickiness: [StickinessSource], groupId: String?)
    case random(percent: UInt64)
    case remoteAddress([IPNetwork])
    case hostname(Set<String>)
}

enum StickinessSource: Sendable {
    case field(ContextField)
    case random
}

/// A class, so that the evaluator reaches it through one reference instead of copying its fields.
final class CompiledStrategy: Sendable {
    let rule: StrategyRule
    let constraints: [CompiledConstraint]
    /// Non-empty strategy variants; `nil` falls back to the flag's variants.
    let variants: CompiledVariants?
    /// Whether the strategy has constraints or segments (for the OpenFeature reason).
    let isTargeted: Bool

    init(rule: StrategyRule, constraints: [CompiledConstraint], variants: CompiledVariants?, isTargeted: Bool) {
        self.rule = rule
        self.constraints = constraints
        self.variants = variants
        self.isTargeted = isTargeted
    }
}

struct CompiledVariant: Sendable {
    let name: String
    let weight: UInt32
    let payload: VariantPayload?
    let overrides: [(ContextField, ExactStringSet)]
}

/// A weighted variant list with the stickiness and group used to bucket it.
struct CompiledVariants: Sendable {
    enum Stickiness: Sendable {
        /// `userId`, else `sessionId`, else random.
        case standard
        case field(ContextField)
    }

    let variants: [CompiledVariant]
    let totalWeight: UInt32
    let stickiness: Stickiness
    let groupId: String
    /// How many variants have a positive weight (for the OpenFeature reason: more than one is a split).
    let weightedCount: Int
}

struct CompiledDependency: Sendable {
    /// Index of the parent flag in the snapshot; `nil` when the parent does not exist.
    let parent: Int?
    let expectEnabled: Bool
    let variants: [String]?
}

/// A class, so that the evaluator reaches it through one reference instead of copying its fields.
final class CompiledFlag: Sendable {
    let name: String
    let enabled: Bool
    /// Unleash's engine could not compile the flag (unknown operator, unparsable number or date, missing
    /// segment, out-of-range percentage): it is off for everyone.
    let broken: Bool
    let strategies: [CompiledStrategy]
    let variants: CompiledVariants?
    let dependencies: [CompiledDependency]

    init(
        name: String, enabled: Bool, broken: Bool, strategies: [CompiledStrategy], variants: CompiledVariants?,
        dependencies: [CompiledDependency]
    ) {
        self.name = name
        self.enabled = enabled
        self.broken = broken
        self.strategies = strategies
        self.variants = variants
        self.dependencies = dependencies
    }
}
