public import Foundation
import PlugboardVersioning

/// The variant a flag resolves to for a context, shaped like Unleash's `getVariant` answer.
///
/// When the flag is off (or unknown) this is the disabled variant `{"name":"disabled","enabled":false,"feature_enabled":false}`;
/// when the flag is on but has no variants, `{"name":"disabled","enabled":false,"feature_enabled":true}`.
public struct Variant: Sendable, Hashable, Codable {
    /// The name and payload, held by reference: an evaluation answers with its snapshot's shape of the variant, one
    /// retain rather than one per string.
    final class Shape: Sendable {
        let name: String
        let payload: VariantPayload?

        init(name: String, payload: VariantPayload?) {
            self.name = name
            self.payload = payload
        }

        static let disabled = Shape(name: "disabled", payload: nil)
    }

    private var shape: Shape
    /// Whether a real variant was assigned (`false` for the disabled variant).
    public var enabled: Bool
    /// Whether the flag itself is on for the context.
    public var featureEnabled: Bool

    /// The variant name, or `disabled`.
    public var name: String {
        get { shape.name }
        set { shape = Shape(name: newValue, payload: shape.payload) }
    }

    /// The variant's payload, if it has one.
    public var payload: VariantPayload? {
        get { shape.payload }
        set { shape = Shape(name: shape.name, payload: newValue) }
    }

    /// A variant with each of its properties given.
    public init(name: String, payload: VariantPayload? = nil, enabled: Bool, featureEnabled: Bool) {
        self.init(shape: Shape(name: name, payload: payload), enabled: enabled, featureEnabled: featureEnabled)
    }

    init(shape: Shape, enabled: Bool, featureEnabled: Bool) {
        self.shape = shape
        self.enabled = enabled
        self.featureEnabled = featureEnabled
    }

    /// The `disabled` variant, with `featureEnabled` telling whether the flag is on.
    public static func disabled(featureEnabled: Bool) -> Variant {
        Variant(shape: .disabled, enabled: false, featureEnabled: featureEnabled)
    }

    /// Equal when the name, payload, `enabled` and `featureEnabled` are.
    public static func == (left: Variant, right: Variant) -> Bool {
        left.enabled == right.enabled && left.featureEnabled == right.featureEnabled
            && (left.shape === right.shape || (left.name == right.name && left.payload == right.payload))
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(payload)
        hasher.combine(enabled)
        hasher.combine(featureEnabled)
    }

    /// The coded form, Unleash's: `name`, `payload` (absent when there is none), `enabled`, `feature_enabled`.
    private struct Coded: Codable {
        var name: String
        var payload: VariantPayload?
        var enabled: Bool
        var featureEnabled: Bool

        private enum CodingKeys: String, CodingKey {
            case name, payload, enabled
            case featureEnabled = "feature_enabled"
        }
    }

    /// Decodes Unleash's shape of a variant.
    public init(from decoder: any Decoder) throws {
        let coded = try Coded(from: decoder)
        self.init(name: coded.name, payload: coded.payload, enabled: coded.enabled, featureEnabled: coded.featureEnabled)
    }

    /// Encodes Unleash's shape of a variant.
    public func encode(to encoder: any Encoder) throws {
        try Coded(name: name, payload: payload, enabled: enabled, featureEnabled: featureEnabled).encode(to: encoder)
    }
}

/// What the evaluator may need from the outside world; none of it is read unless a definition needs it.
public struct EvaluationEnvironment: Sendable {
    /// The host name `applicationHostname` strategies compare against; `nil` makes them never match.
    public var hostname: String?
    /// The current time, for date constraints when the context has no `currentTime`.
    public var now: @Sendable () -> Date
    /// A uniform random integer in `0..<upperBound`, for random rollouts and contexts without stickiness.
    public var random: @Sendable (_ upperBound: UInt32) -> UInt32

    /// Creates an environment; the defaults use the system clock and the system random generator.
    public init(
        hostname: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable (_ upperBound: UInt32) -> UInt32 = { UInt32.random(in: 0..<max(1, $0)) }
    ) {
        self.hostname = hostname
        self.now = now
        self.random = random
    }
}

/// An immutable, compiled set of flags, ready to evaluate from any thread.
///
/// Build it once from a ``FeatureSet`` (or its JSON): numbers, dates, versions, regular expressions and CIDR
/// ranges are parsed at build time, so ``isEnabled(_:context:)`` and ``variant(_:context:)`` do no parsing of
/// definitions and no I/O. Evaluation follows Unleash's engine exactly, including MurmurHash3 bucketing, so a
/// user gets the same answer here as from any Unleash SDK.
public struct FlagSnapshot: Sendable {
    final class Storage: Sendable {
        let source: FeatureSet
        let program: FlagProgram
        let warnings: [FlagValidationProblem]
        let environment: EvaluationEnvironment

        init(
            source: FeatureSet, flags: [CompiledFlag], index: [String: Int], warnings: [FlagValidationProblem],
            environment: EvaluationEnvironment
        ) {
            self.source = source
            self.program = FlagProgram(flags: flags, index: index)
            self.warnings = warnings
            self.environment = environment
        }
    }

    let storage: Storage

    /// Compiles `features`.
    ///
    /// - Parameters:
    ///   - features: The decoded feature set.
    ///   - mode: ``ValidationMode/strict`` (default) refuses a set with any validation error;
    ///     ``ValidationMode/lenient`` evaluates whatever Unleash's engine would.
    ///   - environment: hostname, clock and randomness.
    /// - Throws: ``FlagsError`` with `FlagsError.Code.invalidFeatures` in strict mode, one error per line of
    ///   its message, all of them (and the warnings) in its ``FlagsError/validation``.
    public init(_ features: FeatureSet, mode: ValidationMode = .strict, environment: EvaluationEnvironment = .init())
        throws(FlagsError)
    {
        let output = FlagCompiler.compile(features)
        if mode == .strict, !output.errors.isEmpty {
            throw FlagsError(
                .invalidFeatures, output.errors.map(\.description).joined(separator: "\n"),
                validation: FlagValidationReport(errors: output.errors, warnings: output.warnings))
        }
        let warnings =
            mode == .strict
            ? output.warnings
            : output.warnings + output.errors.map { $0.with(.warning) }
        storage = Storage(source: features, flags: output.flags, index: output.index, warnings: warnings, environment: environment)
    }

    /// Decodes and compiles the Unleash client-API features JSON.
    ///
    /// - Throws: ``FlagsError`` with `FlagsError.Code.malformedFeatures` for malformed JSON,
    ///   `FlagsError.Code.invalidFeatures` in strict mode.
    public init(json: Data, mode: ValidationMode = .strict, environment: EvaluationEnvironment = .init()) throws(FlagsError) {
        try self.init(try FeatureSet.decode(from: json), mode: mode, environment: environment)
    }

    /// A snapshot with no flags: every flag is unknown.
    public static let empty: FlagSnapshot = {
        // An empty set has nothing to refuse.
        (try? FlagSnapshot(FeatureSet()))
            ?? FlagSnapshot(storage: Storage(source: FeatureSet(), flags: [], index: [:], warnings: [], environment: .init()))
    }()

    private init(storage: Storage) { self.storage = storage }

    /// The feature set this snapshot was built from (for export: ``FeatureSet/encoded(prettyPrinted:)``).
    public var features: FeatureSet { storage.source }

    /// Warnings found while compiling (in lenient mode also the errors strict mode would have refused).
    public var warnings: [FlagValidationProblem] { storage.warnings }

    /// The names of all flags, in definition order.
    public var flagNames: [String] {
        let program = storage.program
        return (0..<Int32(program.flags.count)).map { program.strings[program.flags[$0].name] }
    }

    /// Whether a flag with this name exists.
    public func contains(_ name: String) -> Bool { storage.program.position(of: name) != nil }

    /// Whether the flag is on for the context (`false` for an unknown flag), as Unleash's `isEnabled`.
    public func isEnabled(_ name: String, context: UnleashContext) -> Bool {
        // `self` is borrowed for the call, so the storage lives as long as the evaluator, which holds it unowned.
        guard let position = storage.program.position(of: name) else { return false }
        return Evaluator.with(storage, context) { $0.isEnabled(position) }
    }

    /// The variant of the flag for the context, as Unleash's `getVariant`.
    public func variant(_ name: String, context: UnleashContext) -> Variant {
        // The variant alone, built once (not inside an `Evaluation` that is then copied from and destroyed).
        guard let position = storage.program.position(of: name) else { return .disabled(featureEnabled: false) }
        return Evaluator.with(storage, context) { $0.variant(position) }
    }

    /// Both answers at once (one evaluation), with the details the OpenFeature API reports.
    func evaluate(_ name: String, context: UnleashContext, overrides: [String: String]? = nil, wantVariant: Bool = false) -> Evaluation {
        guard let position = storage.program.position(of: name) else { return Evaluation(outcome: .notFound) }
        return Evaluator.with(storage, context, overrides: overrides) { $0.evaluate(position, wantVariant: wantVariant) }
    }
}

/// One evaluation's result with the facts behind it.
struct Evaluation {
    enum Outcome {
        case notFound
        case flagOff
        case broken
        case dependencyUnmet
        case noStrategyMatched
        /// On via strategy `index` (`nil`: the flag has no strategies).
        case enabled(strategy: Int?)
    }

    enum VariantPick {
        case none
        case override
        case single
        case split
    }

    var outcome: Outcome
    var variant: Variant = .disabled(featureEnabled: false)
    var pick: VariantPick = .none
    /// Whether the matching strategy used a percentage (rollout below 100 or random).
    var percentage = false
    /// Whether the matching strategy had constraints, segments, user ids, addresses or host names.
    var targeted = false

    var enabled: Bool {
        if case .enabled = outcome { return true }
        return false
    }
}
