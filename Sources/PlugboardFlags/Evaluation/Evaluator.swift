import Foundation
import PlugboardRegex
import PlugboardVersioning

/// Evaluates flags of one snapshot for one context.
///
/// It lives for one evaluation, on the stack, inside ``FlagSnapshot``'s `evaluate`, which keeps the program and the
/// context alive: so it holds both without reference counting (an unowned reference and a pointer), and it reads the
/// program's records in place (``FlagProgram``), which is most of what an evaluation would otherwise cost.
struct Evaluator {
    unowned(unsafe) let storage: FlagSnapshot.Storage
    unowned(unsafe) let program: FlagProgram
    private let contextPointer: UnsafePointer<UnleashContext>
    private var context: UnleashContext { _read { yield contextPointer.pointee } }
    /// The context's ``PropertyIndex`` entries, read in place: the context holds the index for the evaluation.
    private let propertyEntries: UnsafePointer<PropertyIndex.Entry>
    private let propertyCount: Int
    /// Fields that override the context's, by Unleash's names (`userId`, …, or a property name): what a plug-in
    /// passes per call, read first instead of being merged into a copy of the context. A pointer, like the
    /// context, so that the evaluator holds no reference: copying it retains nothing and it needs no destroying.
    private let overrides: UnsafePointer<[String: String]>?
    /// The flag being asked about; rollouts without a `groupId` hash with its name (for a parent evaluated as a
    /// dependency, Unleash's engine uses the child's name).
    private(set) var toggle: Int32 = 0
    private var nowInstant: UnleashInstant?
    // Context values parsed at most once per evaluation, whatever the number of constraints that read them.
    var versions = ParsedOnce<SemanticVersionNumbers>()
    var addresses = ParsedOnce<IPAddress>()
    var dates = ParsedOnce<UnleashInstant>()
    var numbers = ParsedOnce<Double>()

    /// `context` and `overrides` must outlive the evaluator.
    @inline(__always)
    init(storage: FlagSnapshot.Storage, context: UnsafePointer<UnleashContext>, overrides: UnsafePointer<[String: String]>? = nil) {
        self.storage = storage
        self.program = storage.program
        self.contextPointer = context
        self.overrides = overrides
        let index = context.pointee.propertyIndex
        self.propertyEntries = UnsafePointer(index.entries)
        self.propertyCount = index.count
    }

    /// Whether the flag at `position` is on: ``evaluate(_:wantVariant:)`` without the details, for `isEnabled`.
    @inline(__always)
    mutating func isEnabled(_ position: Int32) -> Bool {
        toggle = position
        if case .enabled = outcome(program.flags[position]) { return true }
        return false
    }

    /// The flag's variant: what ``evaluate(_:wantVariant:)`` answers in `variant`, without the details.
    mutating func variant(_ position: Int32) -> Variant {
        toggle = position
        let flag = program.flags[position]
        guard case .enabled(let match) = outcome(flag) else { return .disabled(featureEnabled: false) }
        guard let (variant, _) = resolveVariant(flag, strategy: match.map { Int32($0) }) else { return .disabled(featureEnabled: true) }
        let record = program.variants[variant]
        return Variant(
            name: program.strings[record.name], payload: record.payload >= 0 ? program.payloads[record.payload] : nil, enabled: true,
            featureEnabled: true)
    }

    mutating func evaluate(_ position: Int32, wantVariant: Bool) -> Evaluation {
        toggle = position
        let flag = program.flags[position]
        var result = Evaluation(outcome: outcome(flag))
        if case .enabled(let match?) = result.outcome {
            let strategy = program.strategies[flag.firstStrategy + Int32(match)]
            result.targeted = strategy.isTargeted
            switch strategy.rule {
            case .rollout, .random: result.percentage = strategy.percent < 100
            case .userIds, .remoteAddress, .hostname: result.targeted = true
            case .always, .never: break
            }
        }
        guard wantVariant else { return result }
        if case .enabled(let match) = result.outcome {
            if let (variant, pick) = resolveVariant(flag, strategy: match.map { Int32($0) }) {
                let record = program.variants[variant]
                result.variant = Variant(
                    name: program.strings[record.name], payload: record.payload >= 0 ? program.payloads[record.payload] : nil,
                    enabled: true, featureEnabled: true)
                result.pick = pick
            } else {
                result.variant = .disabled(featureEnabled: true)
            }
        }
        return result
    }

    @inline(__always)
    private mutating func outcome(_ flag: FlagRecord) -> Evaluation.Outcome {
        if !flag.enabled { return .flagOff }
        if flag.broken { return .broken }
        if flag.dependencyCount > 0, !dependenciesMet(flag) { return .dependencyUnmet }
        if let match = matchStrategy(flag) { return .enabled(strategy: match.map(Int.init)) }
        return .noStrategyMatched
    }

    // MARK: Context

    /// A property by name (the standard fields' fallback).
    @inline(__always)
    private func property(_ name: String) -> String? { context.propertyIndex.value(of: name) }

    /// A standard field falls back to the property of the same name, as in Unleash's engine.
    @inline(__always)
    mutating func value(of field: FieldRef) -> String? {
        if field.override >= 0, let overrides, let value = overrides.pointee[program.strings[field.override]] { return value }
        return switch field.kind {
        case .userId: context.userId ?? property("userId")
        case .sessionId: context.sessionId ?? property("sessionId")
        case .environment: context.environment ?? property("environment")
        case .appName: context.appName ?? property("appName")
        case .remoteAddress: context.remoteAddress ?? property("remoteAddress")
        case .currentTime: context.currentTime ?? property("currentTime")
        case .property:
            PropertyIndex.value(of: program.strings[field.name], hash: field.hash, in: propertyEntries, count: propertyCount)
        case .random: nil
        }
    }

    /// `body` over the UTF-8 of the field's value as ``currentValue(_:)`` reads it; `nil` when the field is missing.
    /// A property's value is read in place from the context's index, without retaining or opening its string.
    @inline(__always)
    mutating func withValue<R>(_ field: FieldRef, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        if field.kind == .property, field.override < 0 || overrides == nil {
            let entry = PropertyIndex.entry(
                of: program.strings[field.name], hash: field.hash, in: propertyEntries, count: propertyCount)
            return entry.map { body($0.pointee.utf8) }
        }
        guard let text = currentValue(field) else { return nil }
        return Self.withBytes(text, body)
    }

    static var userId: FieldRef { .standard(.userId) }
    static var sessionId: FieldRef { .standard(.sessionId) }
    static var remoteAddress: FieldRef { .standard(.remoteAddress) }

    mutating func now() -> UnleashInstant {
        if let nowInstant { return nowInstant }
        let instant = UnleashInstant(wholeSecondsOf: storage.environment.now())
        nowInstant = instant
        return instant
    }

    // MARK: Dependencies

    private mutating func dependenciesMet(_ flag: FlagRecord) -> Bool {
        var index = flag.firstDependency
        let end = index + flag.dependencyCount
        while index < end {
            let dependency = program.dependencies[index]
            index += 1
            guard dependency.parent >= 0 else { return false }
            let parent = program.flags[dependency.parent]
            // Unleash does not follow transitive dependencies: a parent with dependencies never satisfies.
            guard parent.dependencyCount == 0 else { return false }
            // The parent is evaluated with the child's name as default group id, as Unleash's engine does.
            let match = parent.enabled && !parent.broken ? matchStrategy(parent) : nil
            let parentEnabled = match != nil
            if dependency.variantCount > 0 {
                // The parent's variant is resolved whether or not the parent is on, as the engine does.
                if let (variant, _) = resolveVariant(parent, strategy: match ?? nil) {
                    let name = program.variants[variant].name
                    var expected = false
                    for position in dependency.firstVariant..<(dependency.firstVariant + dependency.variantCount)
                    where program.strings[position] == program.strings[name] {
                        expected = true
                        break
                    }
                    if !expected { return false }
                }
            }
            if parentEnabled != dependency.expectEnabled { return false }
        }
        return true
    }
}

/// A context value parsed at most once per evaluation: the last two fields read as this kind and their values.
/// Two entries are enough: the constraints of a flag that parse a kind of value almost always read one or two fields
/// (`age` and `score`, say, in turn).
struct ParsedOnce<Value> {
    /// The fields as ``key(_:)``, -1 for none.
    private var key: Int64 = -1
    private var value: Value?
    private var previousKey: Int64 = -1
    private var previousValue: Value?

    /// A field's kind and name in one integer: they tell fields apart (an override's key follows from them).
    @inline(__always)
    private static func key(_ field: FieldRef) -> Int64 {
        Int64(field.kind.rawValue) << 32 | Int64(UInt32(bitPattern: field.name))
    }

    /// The value already parsed for `field` (`.some(nil)` when it did not parse), or `nil` when not read yet.
    @inline(__always)
    subscript(field: FieldRef) -> Value?? {
        let wanted = Self.key(field)
        if key == wanted { return .some(value) }
        if previousKey == wanted { return .some(previousValue) }
        return nil
    }

    @inline(__always)
    mutating func store(_ value: Value?, for field: FieldRef) {
        previousKey = key
        previousValue = self.value
        key = Self.key(field)
        self.value = value
    }
}
