/// What a validation problem is about: a flag, or a segment (which flags use by id).
public enum FlagValidationSubject: Sendable, Hashable, CustomStringConvertible {
    /// A feature flag, by name.
    case flag(String)
    /// A segment, by id, with the names of the flags whose strategies use it.
    case segment(id: Int, usedBy: [String])
    /// The feature set as a whole.
    case featureSet

    /// `flag 'checkout'`, `segment 4 (used by flags 'a', 'b')` or `the feature set`.
    public var description: String {
        switch self {
        case .flag(let name): return "flag '\(name)'"
        case .segment(let id, let usedBy):
            if usedBy.isEmpty { return "segment \(id)" }
            let names = usedBy.map { "'\($0)'" }.joined(separator: ", ")
            return "segment \(id) (used by flag\(usedBy.count == 1 ? "" : "s") \(names))"
        case .featureSet: return "the feature set"
        }
    }

    /// The flag name, when the subject is a flag.
    public var flagName: String? {
        if case .flag(let name) = self { return name }
        return nil
    }
}

/// A problem in a flag definition: one sentence naming the flag (or segment), the field and the problem.
///
/// An ``Severity/error`` is a definition Plugboard refuses, for example
/// `flag 'checkout' strategy 2 constraint 1 operator: 'REGEX_MATCHES' is not a known operator`. A
/// ``Severity/warning`` is one it accepts but that will not behave as its author probably meant, for example a
/// dependency on a flag that does not exist, which keeps the child off, as in Unleash. Fields are 1-based
/// (`strategy 2` is the second strategy). A problem is a value in a report, never thrown: a refused set throws a
/// ``FlagsError`` that lists its problems.
public struct FlagValidationProblem: Sendable, Hashable, CustomStringConvertible {
    /// Whether the definition is refused or merely suspicious.
    public enum Severity: String, Sendable, Hashable {
        /// Refused in ``ValidationMode/strict`` mode.
        case error
        /// Accepted, reported for the author.
        case warning
    }

    /// Refused or merely suspicious.
    public let severity: Severity
    /// The flag or segment the problem is in.
    public let subject: FlagValidationSubject
    /// The field inside it, for example `strategy 2 constraint 1 value`.
    public let field: String
    /// What is wrong, or what will happen, for example `'12,5' is not a number`.
    public let message: String

    /// Creates a problem.
    public init(_ severity: Severity, subject: FlagValidationSubject, field: String, message: String) {
        self.severity = severity
        self.subject = subject
        self.field = field
        self.message = message
    }

    /// The same problem reported with another severity (a lenient snapshot reports refused definitions as warnings).
    public func with(_ severity: Severity) -> FlagValidationProblem {
        FlagValidationProblem(severity, subject: subject, field: field, message: message)
    }

    /// `<subject> <field>: <message>`.
    public var description: String { field.isEmpty ? "\(subject): \(message)" : "\(subject) \(field): \(message)" }
}

/// The outcome of ``FeatureSet/validate()``: the errors that make a set unusable, and warnings.
public struct FlagValidationReport: Sendable, Hashable {
    /// Problems that make ``FlagSnapshot`` refuse the set in ``ValidationMode/strict`` mode.
    public var errors: [FlagValidationProblem]
    /// Accepted oddities, reported for the author.
    public var warnings: [FlagValidationProblem]

    /// Whether there are no errors.
    public var isValid: Bool { errors.isEmpty }
}

/// How strictly a ``FlagSnapshot`` treats definitions Unleash would merely evaluate as "off".
public enum ValidationMode: Sendable, Hashable {
    /// Refuse the whole set when ``FeatureSet/validate()`` reports any error (the default for Plugboard's board).
    case strict
    /// Accept everything Unleash's engine accepts and evaluate it the way that engine does: an unknown
    /// operator, an unparsable number or date, a missing segment switch the flag off; an invalid regular
    /// expression, version or CIDR makes only its constraint false. Used for the Unleash conformance suite.
    case lenient
}

extension FeatureSet {
    /// Checks every flag, strategy, constraint, variant, segment and dependency.
    ///
    /// Errors: bad operators, invalid regular expressions, CIDRs, versions, numbers or dates in constraints,
    /// rollout percentages outside 0–100, unknown segment ids, dependency cycles, duplicate names, variant
    /// weights that are negative or sum to zero. Warnings: dependencies on missing flags or on flags that have
    /// dependencies themselves (Unleash keeps such children off), unknown strategies (always off), payloads
    /// that do not parse as their type.
    public func validate() -> FlagValidationReport {
        let compiled = FlagCompiler.compile(self)
        return FlagValidationReport(errors: compiled.errors, warnings: compiled.warnings)
    }
}
