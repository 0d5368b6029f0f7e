// A plug-in links this module only, never the evaluator (PlugboardFlags): the evaluator names the same reasons and error
// codes in its own `ResolutionReason` and `ResolutionErrorCode`, and the host converts them to these.

/// Why a flag evaluated to its value (OpenFeature's reasons).
public enum FlagReason: String, Sendable, Hashable, Codable, CaseIterable {
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

/// What went wrong when a flag could not be evaluated (OpenFeature's error codes).
public enum FlagErrorCode: String, Sendable, Hashable, Codable, CaseIterable {
    /// The host has no flags loaded yet.
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

/// The outcome of evaluating one flag: the value, and why.
public struct FlagResolution<Value: Sendable>: Sendable {
    /// The resolved value, or the caller's default on any error.
    public let value: Value
    /// The variant name, when a variant decided the value.
    public let variant: String?
    /// Why the value is what it is.
    public let reason: FlagReason
    /// Set when the default was used because of an error.
    public let errorCode: FlagErrorCode?
    /// A readable explanation of the error.
    public let errorMessage: String?

    /// Creates a resolution.
    public init(value: Value, variant: String? = nil, reason: FlagReason, errorCode: FlagErrorCode? = nil, errorMessage: String? = nil) {
        self.value = value
        self.variant = variant
        self.reason = reason
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}

/// Feature-flag evaluation as the host offers it to a plug-in: against the host's context, never throwing,
/// never blocking on I/O. `context` adds or overrides Unleash context fields (`userId`, `sessionId`, properties).
public protocol FlagEvaluating: Sendable {
    /// Evaluates a boolean flag.
    func bool(_ flag: String, default: Bool, context: [String: String]) -> FlagResolution<Bool>
    /// Evaluates a flag whose variant payload is a string.
    func string(_ flag: String, default: String, context: [String: String]) -> FlagResolution<String>
    /// Evaluates a flag whose variant payload is an integer.
    func int(_ flag: String, default: Int, context: [String: String]) -> FlagResolution<Int>
    /// Evaluates a flag whose variant payload is a floating-point number.
    func double(_ flag: String, default: Double, context: [String: String]) -> FlagResolution<Double>
    /// An evaluator whose context includes `context`: build it once (per request, per user) and reuse it, so that
    /// the fields are not merged again on every call. Later per-call fields override these.
    func with(context: [String: String]) -> any FlagEvaluating
}

extension FlagEvaluating {
    /// A wrapper that adds `context` to every call (what an evaluator without its own binding does).
    public func with(context: [String: String]) -> any FlagEvaluating {
        ContextBoundFlags(base: self, context: context)
    }

    /// `true` when the flag is on for the host's context.
    public func isEnabled(_ flag: String, context: [String: String] = [:]) -> Bool {
        bool(flag, default: false, context: context).value
    }
}

/// An evaluator with fields added to every call's context; the per-call fields win.
struct ContextBoundFlags: FlagEvaluating {
    let base: any FlagEvaluating
    let context: [String: String]

    private func merged(_ overrides: [String: String]) -> [String: String] {
        overrides.isEmpty ? context : context.merging(overrides) { _, new in new }
    }

    func bool(_ flag: String, default value: Bool, context: [String: String]) -> FlagResolution<Bool> {
        base.bool(flag, default: value, context: merged(context))
    }

    func string(_ flag: String, default value: String, context: [String: String]) -> FlagResolution<String> {
        base.string(flag, default: value, context: merged(context))
    }

    func int(_ flag: String, default value: Int, context: [String: String]) -> FlagResolution<Int> {
        base.int(flag, default: value, context: merged(context))
    }

    func double(_ flag: String, default value: Double, context: [String: String]) -> FlagResolution<Double> {
        base.double(flag, default: value, context: merged(context))
    }

    func with(context: [String: String]) -> any FlagEvaluating {
        ContextBoundFlags(base: base, context: merged(context))
    }
}
