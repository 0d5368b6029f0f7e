import Foundation

/// Why an evaluation produced its value, in OpenFeature's vocabulary (the raw values are OpenFeature's names).
///
/// See <doc:EvaluationSemantics> for how Unleash outcomes map to these reasons: `static` (on for everyone),
/// `default` (no rule applied), `targetingMatch` (a rule about this context), `split` (a percentage or weighted
/// variant), `disabled` (off in this environment, or a parent flag not in the required state), `error`. The plug-in
/// API's `FlagReason` names the same reasons for plug-ins, which never link the evaluator; a host converts one to the
/// other.
public enum ResolutionReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The flag is on for everyone, with no targeting.
    case `static` = "STATIC"
    /// No rule applied, or the caller's default was used.
    case `default` = "DEFAULT"
    /// A targeting rule matched.
    case targetingMatch = "TARGETING_MATCH"
    /// A percentage rollout or weighted variant decided.
    case split = "SPLIT"
    /// The flag is disabled.
    case disabled = "DISABLED"
    /// Evaluation failed; the caller's default was used.
    case error = "ERROR"
}

/// What went wrong when the value is the caller's default because of a problem, in OpenFeature's vocabulary (the raw
/// values are OpenFeature's names). The plug-in API's `FlagErrorCode` names the same codes for plug-ins.
public enum ResolutionErrorCode: String, Sendable, Hashable, Codable, CaseIterable {
    /// No flags are loaded yet.
    case providerNotReady = "PROVIDER_NOT_READY"
    /// No flag has this name.
    case flagNotFound = "FLAG_NOT_FOUND"
    /// The variant payload could not be parsed as its declared type.
    case parseError = "PARSE_ERROR"
    /// The variant payload's type does not fit the requested type.
    case typeMismatch = "TYPE_MISMATCH"
    /// The context lacks a targeting key the flag needs.
    case targetingKeyMissing = "TARGETING_KEY_MISSING"
    /// The context is malformed.
    case invalidContext = "INVALID_CONTEXT"
    /// Any other problem.
    case general = "GENERAL"
}

/// The result of a typed evaluation: the value and how it came about. Never thrown, never missing.
public struct ResolutionDetails<Value: Sendable>: Sendable {
    /// The flag's value, or the caller's default when there is none or an error occurred.
    public var value: Value
    /// The Unleash variant name the value came from, if any.
    public var variant: String?
    /// Why this value was produced.
    public var reason: ResolutionReason
    /// Set when the value is the default because of a problem.
    public var errorCode: ResolutionErrorCode?
    /// A readable sentence about the problem, naming the flag.
    public var errorMessage: String?

    /// A value with each stored property given.
    public init(
        value: Value, variant: String? = nil, reason: ResolutionReason, errorCode: ResolutionErrorCode? = nil, errorMessage: String? = nil
    ) {
        self.value = value
        self.variant = variant
        self.reason = reason
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}

extension ResolutionDetails: Equatable where Value: Equatable {}
extension ResolutionDetails: Hashable where Value: Hashable {}

/// A JSON value, as carried by `json` variant payloads.
public enum FlagJSON: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([FlagJSON])
    /// An object.
    case object([String: FlagJSON])

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([FlagJSON].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: FlagJSON].self))
        }
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

/// Typed, OpenFeature-style evaluation for host applications and plug-ins.
///
/// Every method returns ``ResolutionDetails`` and never throws: on any problem the value is the caller's
/// `default` and ``ResolutionDetails/errorCode`` says why. ``FlagSnapshot`` and ``FlagSnapshotProvider``
/// both conform.
///
/// Mapping of Unleash outcomes (details in <doc:EvaluationSemantics>):
/// - unknown flag → caller's default, `ResolutionReason.error`, `ResolutionErrorCode.flagNotFound` (as OpenFeature providers report it);
/// - flag switched off (`enabled: false`) or a dependency not met → `ResolutionReason.disabled`
///   (`bool` gives `false`, the other types the caller's default);
/// - flag on but no strategy matched → `ResolutionReason.default` (`false` / caller's default);
/// - on with no strategies, or via a `default`/100 % strategy without constraints or segments → `ResolutionReason.static`;
/// - on via constraints, segments, `userWithId`, `remoteAddress` or `applicationHostname` → `ResolutionReason.targetingMatch`;
/// - on via a rollout below 100 % or a random rollout → `ResolutionReason.split`;
/// - typed values come from the variant's payload: a variant forced by an override → `ResolutionReason.targetingMatch`,
///   picked by weight among several → `ResolutionReason.split`, otherwise the reason the flag is on;
/// - on, but no variant or a variant without payload → caller's default, `ResolutionReason.default`;
/// - payload of another type → `ResolutionReason.error` with `ResolutionErrorCode.typeMismatch`; unparsable payload → `ResolutionErrorCode.parseError`;
/// - a flag a lenient snapshot could not compile → `ResolutionReason.error` with `ResolutionErrorCode.general`.
public protocol FlagResolver: Sendable {
    /// The snapshot evaluations run against.
    var currentSnapshot: FlagSnapshot { get }
    /// Whether flags are loaded; when `false`, typed evaluations answer `ResolutionErrorCode.providerNotReady`.
    var isReady: Bool { get }
}

extension FlagSnapshot: FlagResolver {
    /// The snapshot itself.
    public var currentSnapshot: FlagSnapshot { self }
    /// Always `true`: a snapshot is loaded by construction.
    public var isReady: Bool { true }
}

extension FlagResolver {
    /// Whether the flag is on, as a boolean (Unleash's `isEnabled`); the default is used only when the flag is unknown or broken.
    public func bool(_ flag: String, default defaultValue: Bool, context: UnleashContext = UnleashContext()) -> ResolutionDetails<Bool> {
        bool(flag, default: defaultValue, context: context, overrides: [:])
    }

    /// ``bool(_:default:context:)`` with `overrides` read before the context's own fields, as if set on a copy of it
    /// with ``UnleashContext/set(_:to:)`` (without making the copy).
    package func bool(_ flag: String, default defaultValue: Bool, context: UnleashContext, overrides: [String: String])
        -> ResolutionDetails<Bool>
    {
        if let notReady = notReady(flag, defaultValue) { return notReady }
        let evaluation = currentSnapshot.evaluate(flag, context: context, overrides: overrides.isEmpty ? nil : overrides)
        switch evaluation.outcome {
        case .notFound, .broken:
            return failure(flag, evaluation, defaultValue)
        case .flagOff, .dependencyUnmet:
            return ResolutionDetails(value: false, reason: .disabled)
        case .noStrategyMatched:
            return ResolutionDetails(value: false, reason: .default)
        case .enabled:
            return ResolutionDetails(value: true, reason: Self.enabledReason(evaluation))
        }
    }

    /// The text of a `string` or `csv` variant payload.
    public func string(_ flag: String, default defaultValue: String, context: UnleashContext = UnleashContext()) -> ResolutionDetails<
        String
    > {
        payloadValue(flag, defaultValue, context, typeName: "string", accepted: ["string", "csv"]) { text in .success(text) }
    }

    /// A `number` variant payload as an integer (`42` or `42.0`; `42.5` is a type mismatch).
    public func int(_ flag: String, default defaultValue: Int, context: UnleashContext = UnleashContext()) -> ResolutionDetails<Int> {
        payloadValue(flag, defaultValue, context, typeName: "integer", accepted: ["number"]) { text in
            if let value = Int(text) { return .success(value) }
            guard let double = UnleashNumber.parseContextValue(text), double.isFinite else { return .parse("'\(text)' is not a number") }
            guard double.rounded() == double, let value = Int(exactly: double) else { return .mismatch("'\(text)' is not an integer") }
            return .success(value)
        }
    }

    /// A `number` variant payload as a floating-point number.
    public func double(_ flag: String, default defaultValue: Double, context: UnleashContext = UnleashContext()) -> ResolutionDetails<
        Double
    > {
        payloadValue(flag, defaultValue, context, typeName: "number", accepted: ["number"]) { text in
            guard let value = UnleashNumber.parseContextValue(text) else { return .parse("'\(text)' is not a number") }
            return .success(value)
        }
    }

    /// A `json` variant payload that holds a JSON object.
    public func json(_ flag: String, default defaultValue: [String: FlagJSON], context: UnleashContext = UnleashContext())
        -> ResolutionDetails<[String: FlagJSON]>
    {
        payloadValue(flag, defaultValue, context, typeName: "JSON object", accepted: ["json"]) { text in
            guard let value = try? JSONDecoder().decode(FlagJSON.self, from: Data(text.utf8)) else {
                return .parse("the json payload is not valid JSON")
            }
            guard case .object(let object) = value else { return .mismatch("the json payload is not a JSON object") }
            return .success(object)
        }
    }
}

/// How a payload converted to the requested type.
enum PayloadConversion<Value> {
    case success(Value)
    case mismatch(String)
    case parse(String)
}

extension FlagResolver {
    static func enabledReason(_ evaluation: Evaluation) -> ResolutionReason {
        if evaluation.percentage { return .split }
        if evaluation.targeted { return .targetingMatch }
        return .static
    }

    func notReady<Value>(_ flag: String, _ defaultValue: Value) -> ResolutionDetails<Value>? {
        guard !isReady else { return nil }
        return ResolutionDetails(
            value: defaultValue, reason: .error, errorCode: .providerNotReady,
            errorMessage: "no flags are loaded yet, so flag '\(flag)' uses the default")
    }

    func failure<Value>(_ flag: String, _ evaluation: Evaluation, _ defaultValue: Value) -> ResolutionDetails<Value> {
        if case .notFound = evaluation.outcome {
            return ResolutionDetails(
                value: defaultValue, reason: .error, errorCode: .flagNotFound, errorMessage: "flag '\(flag)' does not exist")
        }
        return ResolutionDetails(
            value: defaultValue, reason: .error, errorCode: .general,
            errorMessage: "flag '\(flag)' could not be compiled (see the snapshot's warnings), so it is off")
    }

    func payloadValue<Value>(
        _ flag: String, _ defaultValue: Value, _ context: UnleashContext, typeName: String, accepted: Set<String>,
        convert: (String) -> PayloadConversion<Value>
    ) -> ResolutionDetails<Value> {
        if let notReady = notReady(flag, defaultValue) { return notReady }
        let evaluation = currentSnapshot.evaluate(flag, context: context, wantVariant: true)
        switch evaluation.outcome {
        case .notFound, .broken:
            return failure(flag, evaluation, defaultValue)
        case .flagOff, .dependencyUnmet:
            return ResolutionDetails(value: defaultValue, reason: .disabled)
        case .noStrategyMatched:
            return ResolutionDetails(value: defaultValue, reason: .default)
        case .enabled:
            break
        }
        let variant = evaluation.variant
        guard variant.enabled else { return ResolutionDetails(value: defaultValue, reason: .default) }
        guard let payload = variant.payload else {
            return ResolutionDetails(value: defaultValue, variant: variant.name, reason: .default)
        }
        guard accepted.contains(payload.type) else {
            return ResolutionDetails(
                value: defaultValue, variant: variant.name, reason: .error, errorCode: .typeMismatch,
                errorMessage: "flag '\(flag)' variant '\(variant.name)' has a \(payload.type) payload, not a \(typeName)")
        }
        switch convert(payload.value) {
        case .success(let value):
            let reason: ResolutionReason =
                switch evaluation.pick {
                case .override: .targetingMatch
                case .split: .split
                case .single, .none: Self.enabledReason(evaluation)
                }
            return ResolutionDetails(value: value, variant: variant.name, reason: reason)
        case .mismatch(let why):
            return ResolutionDetails(
                value: defaultValue, variant: variant.name, reason: .error, errorCode: .typeMismatch,
                errorMessage: "flag '\(flag)' variant '\(variant.name)': \(why)")
        case .parse(let why):
            return ResolutionDetails(
                value: defaultValue, variant: variant.name, reason: .error, errorCode: .parseError,
                errorMessage: "flag '\(flag)' variant '\(variant.name)': \(why)")
        }
    }
}
