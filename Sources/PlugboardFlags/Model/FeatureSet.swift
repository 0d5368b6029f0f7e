import Foundation

/// The Unleash client-API payload for one environment: `{"version":…,"features":[…],"segments":[…]}`.
///
/// This is the plain, faithful model of the JSON. It is `Codable` both ways, so an export re-imports to the
/// same value (`FeatureSet.decode(from: set.encoded()) == set`). Optional fields stay optional so that a
/// key that was absent stays absent on export. Keys the model does not know (`createdAt`, `sortOrder`, …)
/// are dropped.
///
/// Decode with `FeatureSet.decode(from:)` (which names the flag in its errors), check with ``validate()``, and build
/// a ``FlagSnapshot`` to evaluate.
public struct FeatureSet: Sendable, Hashable, Codable {
    /// The client-API format version (Unleash sends `1` or `2`).
    public var version: Int = 1
    /// The feature flags, in the order they were received.
    public var features: [FeatureFlag] = []
    /// The segments that strategies refer to by id; `nil` when the payload had no `segments` key.
    public var segments: [Segment]?

    /// A value with each stored property given.
    public init(version: Int = 1, features: [FeatureFlag] = [], segments: [Segment]? = nil) {
        self.version = version
        self.features = features
        self.segments = segments
    }
}

/// One feature flag (an Unleash "toggle") as the client API describes it for one environment.
public struct FeatureFlag: Sendable, Hashable, Codable {
    /// The flag's unique name, for example `checkout.new-flow`.
    public var name: String
    /// The Unleash flag type (`release`, `experiment`, `kill-switch`, …); informational.
    public var type: String?
    /// A human description; informational.
    public var description: String?
    /// The Unleash project the flag belongs to; informational.
    public var project: String?
    /// Whether the flag is switched on in this environment; when `false` it is off for everyone.
    public var enabled: Bool
    /// Whether the flag is marked stale; informational.
    public var stale: Bool?
    /// Whether callers should emit impression events for this flag; informational.
    public var impressionData: Bool?
    /// The activation strategies; the flag is on when any one of them matches. `nil` or empty means "on for everyone".
    public var strategies: [Strategy]?
    /// The flag-level variants, used when the matching strategy has no variants of its own.
    public var variants: [FeatureVariant]?
    /// Parent flags this flag depends on.
    public var dependencies: [FeatureDependency]?

    /// A value with each stored property given.
    public init(
        name: String, type: String? = nil, description: String? = nil, project: String? = nil, enabled: Bool, stale: Bool? = nil,
        impressionData: Bool? = nil, strategies: [Strategy]? = nil, variants: [FeatureVariant]? = nil,
        dependencies: [FeatureDependency]? = nil
    ) {
        self.name = name
        self.type = type
        self.description = description
        self.project = project
        self.enabled = enabled
        self.stale = stale
        self.impressionData = impressionData
        self.strategies = strategies
        self.variants = variants
        self.dependencies = dependencies
    }
}

/// An activation strategy of a flag, such as `default`, `flexibleRollout` or `userWithId`.
public struct Strategy: Sendable, Hashable, Codable {
    /// The strategy name; unknown names evaluate to "not matched", as in Unleash.
    public var name: String
    /// The strategy parameters (`rollout`, `stickiness`, `groupId`, `userIds`, `IPs`, `hostNames`, `percentage`).
    public var parameters: [String: String]?
    /// Constraints that must all hold for the strategy to match.
    public var constraints: [Constraint]?
    /// Ids of segments whose constraints must also hold.
    public var segments: [Int]?
    /// Variants assigned when this strategy is the one that enables the flag.
    public var variants: [StrategyVariant]?

    /// A value with each stored property given.
    public init(
        name: String, parameters: [String: String]? = nil, constraints: [Constraint]? = nil, segments: [Int]? = nil,
        variants: [StrategyVariant]? = nil
    ) {
        self.name = name
        self.parameters = parameters
        self.constraints = constraints
        self.segments = segments
        self.variants = variants
    }

    private enum CodingKeys: String, CodingKey { case name, parameters, constraints, segments, variants }

    /// Decodes a strategy; parameter values that are JSON numbers or booleans are kept as their text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        if let raw = try container.decodeIfPresent([String: LenientString].self, forKey: .parameters) {
            parameters = raw.compactMapValues(\.text)
        } else {
            parameters = nil
        }
        constraints = try container.decodeIfPresent([Constraint].self, forKey: .constraints)
        segments = try container.decodeIfPresent([Int].self, forKey: .segments)
        variants = try container.decodeIfPresent([StrategyVariant].self, forKey: .variants)
    }
}

/// A condition on one context field, for example `userId IN ["1","2"]` or `version SEMVER_GT 1.2.0`.
public struct Constraint: Sendable, Hashable, Codable {
    /// The context field: `userId`, `sessionId`, `environment`, `appName`, `remoteAddress`, `currentTime`, or a property name.
    public var contextName: String
    /// The operator name as Unleash spells it (`IN`, `STR_CONTAINS`, `NUM_GT`, `SEMVER_EQ`, `REGEX`, `IN_CIDR`, …).
    public var `operator`: String
    /// The single value of single-value operators (numbers, dates, versions, a regular expression).
    public var value: String?
    /// The values of list operators (`IN`, `NOT_IN`, `STR_*`, `IN_CIDR`).
    public var values: [String]?
    /// Whether the result is negated.
    public var inverted: Bool?
    /// Whether string comparisons ignore case.
    public var caseInsensitive: Bool?

    /// Creates a constraint.
    public init(
        contextName: String, operator: String, value: String? = nil, values: [String]? = nil,
        inverted: Bool? = nil, caseInsensitive: Bool? = nil
    ) {
        self.contextName = contextName
        self.operator = `operator`
        self.value = value
        self.values = values
        self.inverted = inverted
        self.caseInsensitive = caseInsensitive
    }

    private enum CodingKeys: String, CodingKey { case contextName, `operator`, value, values, inverted, caseInsensitive }

    /// This constraint with a `REGEX` pattern moved from `values` to `value`, the only field Unleash's engine and SDKs
    /// read: the one pattern itself, or several as alternatives (`(?:a)|(?:b)`, which matches where any of them does).
    /// Boards once accepted `REGEX` patterns in `values` and matched any of them; a board reads them this way, so that
    /// hosts, the server's SDKs and OFREP all see the same pattern. Any other constraint is returned as it is.
    public var regexPatternInValue: Constraint {
        guard self.operator == ConstraintOperator.regex.rawValue, value == nil, let values, !values.isEmpty else { return self }
        var moved = self
        moved.value = values.count == 1 ? values[0] : values.map { "(?:\($0))" }.joined(separator: "|")
        moved.values = nil
        return moved
    }

    /// Decodes a constraint; a `value` that is a JSON number is kept as its text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        contextName = try container.decode(String.self, forKey: .contextName)
        self.operator = try container.decode(String.self, forKey: .operator)
        value = try container.decodeIfPresent(LenientString.self, forKey: .value)?.text
        values = try container.decodeIfPresent([String].self, forKey: .values)
        inverted = try container.decodeIfPresent(Bool.self, forKey: .inverted)
        caseInsensitive = try container.decodeIfPresent(Bool.self, forKey: .caseInsensitive)
    }
}

/// A named, reusable list of constraints that strategies include by id.
public struct Segment: Sendable, Hashable, Codable {
    /// The segment id strategies refer to.
    public var id: Int
    /// A human name; informational.
    public var name: String?
    /// The constraints, all of which must hold.
    public var constraints: [Constraint]

    /// A value with each stored property given.
    public init(id: Int, name: String? = nil, constraints: [Constraint]) {
        self.id = id
        self.name = name
        self.constraints = constraints
    }
}

/// The payload a variant carries: a `type` (`string`, `json`, `csv`, `number`) and its text `value`.
public struct VariantPayload: Sendable, Hashable, Codable {
    /// The payload type as Unleash spells it: `string`, `json`, `csv` or `number`.
    public var type: String
    /// The payload value, always text (a `json` payload holds JSON text, a `number` payload a decimal).
    public var value: String

    /// Creates a payload.
    public init(type: String, value: String) {
        self.type = type
        self.value = value
    }

    private enum CodingKeys: String, CodingKey { case type, value }

    /// Decodes a payload; a `value` that is a JSON number or boolean is kept as its text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        value = try container.decode(LenientString.self, forKey: .value).text ?? ""
    }
}

/// A variant override: the variant is forced for contexts whose `contextName` field is one of `values`.
public struct VariantOverride: Sendable, Hashable, Codable {
    /// The context field to look at.
    public var contextName: String
    /// The values that force the variant.
    public var values: [String]

    /// Creates an override.
    public init(contextName: String, values: [String]) {
        self.contextName = contextName
        self.values = values
    }
}

/// A flag-level variant with its weight, optional stickiness, payload and overrides.
public struct FeatureVariant: Sendable, Hashable, Codable {
    /// The variant name reported to callers.
    public var name: String
    /// The relative weight among the flag's variants (Unleash sends weights summing to 1000).
    public var weight: Int
    /// `variable` or `fix`; informational (Unleash computes the weights server-side).
    public var weightType: String?
    /// The context field used to bucket users; the first variant's stickiness applies to all.
    public var stickiness: String?
    /// The payload handed to callers.
    public var payload: VariantPayload?
    /// Context values that force this variant.
    public var overrides: [VariantOverride]?

    /// A value with each stored property given.
    public init(
        name: String, weight: Int, weightType: String? = nil, stickiness: String? = nil, payload: VariantPayload? = nil,
        overrides: [VariantOverride]? = nil
    ) {
        self.name = name
        self.weight = weight
        self.weightType = weightType
        self.stickiness = stickiness
        self.payload = payload
        self.overrides = overrides
    }
}

/// A strategy-level variant; its stickiness and group come from the strategy's parameters.
public struct StrategyVariant: Sendable, Hashable, Codable {
    /// The variant name reported to callers.
    public var name: String
    /// The relative weight among the strategy's variants.
    public var weight: Int
    /// `variable` or `fix`; informational.
    public var weightType: String?
    /// Kept for round-trips; Unleash buckets strategy variants by the strategy's `stickiness` parameter.
    public var stickiness: String?
    /// The payload handed to callers.
    public var payload: VariantPayload?

    /// A value with each stored property given.
    public init(name: String, weight: Int, weightType: String? = nil, stickiness: String? = nil, payload: VariantPayload? = nil) {
        self.name = name
        self.weight = weight
        self.weightType = weightType
        self.stickiness = stickiness
        self.payload = payload
    }
}

/// A dependency on a parent flag: the parent must be enabled (or disabled), optionally with one of some variants.
public struct FeatureDependency: Sendable, Hashable, Codable {
    /// The parent flag's name.
    public var feature: String
    /// The parent state required; `nil` means `true`.
    public var enabled: Bool?
    /// Parent variant names of which one must be assigned; `nil` or empty means any.
    public var variants: [String]?

    /// A value with each stored property given.
    public init(feature: String, enabled: Bool? = nil, variants: [String]? = nil) {
        self.feature = feature
        self.enabled = enabled
        self.variants = variants
    }
}

/// Decodes a JSON string, number or boolean as text; `null` as `nil`.
struct LenientString: Decodable {
    let text: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            text = nil
        } else if let string = try? container.decode(String.self) {
            text = string
        } else if let int = try? container.decode(Int.self) {
            text = String(int)
        } else if let double = try? container.decode(Double.self) {
            text = String(double)
        } else if let bool = try? container.decode(Bool.self) {
            text = String(bool)
        } else {
            throw DecodingError.typeMismatch(
                String.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a string"))
        }
    }
}
