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
    /// Context values parsed at most once per flag, whatever the number of constraints that read them: the
    /// constraint's ``ConstraintRecord/slot`` (the compiler numbers each field a flag parses as one kind) in
    /// ``ParsedSlots``, with a bit per slot in `parsedMask` once it is written.
    let parsedSlots: ParsedSlots
    var parsedMask: UInt16 = 0

    /// `context`, `overrides` and `slots` must outlive the evaluator.
    @inline(__always)
    init(
        storage: FlagSnapshot.Storage, context: UnsafePointer<UnleashContext>, slots: ParsedSlots,
        overrides: UnsafePointer<[String: String]>? = nil
    ) {
        self.storage = storage
        self.program = storage.program
        self.contextPointer = context
        self.overrides = overrides
        self.parsedSlots = slots
        let index = context.pointee.propertyIndex
        self.propertyEntries = UnsafePointer(index.entries)
        self.propertyCount = index.count
    }

    /// `body` with an evaluator of `context` (and `overrides`) over scratch memory on the stack for its parsed values.
    @inline(__always)
    static func with<R>(
        _ storage: FlagSnapshot.Storage, _ context: UnleashContext, overrides: [String: String]? = nil,
        _ body: (inout Evaluator) -> R
    ) -> R {
        withUnsafePointer(to: context) { context in
            withUnsafeTemporaryAllocation(byteCount: ParsedSlots.byteCount, alignment: ParsedSlots.alignment) { scratch in
                let slots = ParsedSlots(scratch.baseAddress!)
                guard let overrides else {
                    var evaluator = Evaluator(storage: storage, context: context, slots: slots)
                    return body(&evaluator)
                }
                return withUnsafePointer(to: overrides) { overrides in
                    var evaluator = Evaluator(storage: storage, context: context, slots: slots, overrides: overrides)
                    return body(&evaluator)
                }
            }
        }
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
        return Variant(shape: program.variantShapes[variant], enabled: true, featureEnabled: true)
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
                result.variant = Variant(shape: program.variantShapes[variant], enabled: true, featureEnabled: true)
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

    /// The property named like the standard field `kind` (the field's fallback), found by the name's hash kept in
    /// the program. Out of line: the standard fields are usually set.
    /// Mutating only so that the evaluator is passed by reference rather than copied into the call.
    @inline(never)
    private mutating func property(_ kind: FieldRef.Kind) -> String? {
        guard propertyCount > 0 else { return nil }
        let name = Int32(kind.rawValue)
        return PropertyIndex.value(of: program.strings[name], hash: program.standardHashes[name], in: propertyEntries, count: propertyCount)
    }

    /// A standard field falls back to the property of the same name, as in Unleash's engine.
    @inline(__always)
    mutating func value(of field: FieldRef) -> String? {
        if field.override >= 0, let overrides, let value = overrides.pointee[program.strings[field.override]] { return value }
        return switch field.kind {
        case .userId: context.userId ?? property(.userId)
        case .sessionId: context.sessionId ?? property(.sessionId)
        case .environment: context.environment ?? property(.environment)
        case .appName: context.appName ?? property(.appName)
        case .remoteAddress: context.remoteAddress ?? property(.remoteAddress)
        case .currentTime: context.currentTime ?? property(.currentTime)
        case .property:
            PropertyIndex.value(of: program.strings[field.name], hash: field.hash, in: propertyEntries, count: propertyCount)
        case .random: nil
        }
    }

    /// `body` over the UTF-8 of the field's value as ``currentValue(_:)`` reads it; `nil` when the field is missing.
    /// A property's value is read in place from the context's index, without retaining or opening its string.
    @inline(__always)
    mutating func withValue<R>(_ field: FieldRef, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        if field.kind == .property, field.override < 0 || overrides == nil { return withProperty(field, body) }
        guard let text = currentValue(field) else { return nil }
        return Self.withBytes(text, body)
    }

    /// ``withValue(_:_:)`` without the clock: `nil` for a missing `currentTime` too (as ``value(of:)`` reads it).
    @inline(__always)
    mutating func withPresentValue<R>(_ field: FieldRef, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        if field.kind == .property, field.override < 0 || overrides == nil { return withProperty(field, body) }
        guard let text = value(of: field) else { return nil }
        return Self.withBytes(text, body)
    }

    @inline(__always)
    private func withProperty<R>(_ field: FieldRef, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        let entry = PropertyIndex.entry(of: program.strings[field.name], hash: field.hash, in: propertyEntries, count: propertyCount)
        return entry.map { body($0.pointee.utf8) }
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
        // Slots are numbered per flag: a parent's values are not the child's.
        defer { parsedMask = 0 }
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
            parsedMask = 0
            let match = parent.enabled && !parent.broken ? matchStrategy(parent) : nil
            let parentEnabled = match != nil
            if dependency.variantCount > 0 {
                // The parent's variant is resolved whether or not the parent is on, as the engine does.
                if let (variant, _) = resolveVariant(parent, strategy: match ?? nil) {
                    let name = program.variantShapes[variant].name
                    var expected = false
                    for position in dependency.firstVariant..<(dependency.firstVariant + dependency.variantCount)
                    where program.strings[position] == name {
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

/// Scratch memory for the context values an evaluation parses: `count` slots of `stride` bytes, each holding an
/// optional parsed value (`nil`: the field is missing or does not parse). Nothing in it is initialized until the
/// evaluator writes a slot, and the evaluator reads only slots it has written (``Evaluator/parsedMask``), so an
/// evaluation does not pay for clearing caches it may never use.
struct ParsedSlots {
    static var count: Int { 16 }
    /// Room for the largest value kept (`SemanticVersionNumbers?`, 41 bytes), a multiple of the alignment.
    static var stride: Int { 48 }
    static var alignment: Int { 8 }
    /// 768 bytes: above 1,024 `withUnsafeTemporaryAllocation` may take the memory from the heap, a `malloc` per evaluation.
    static var byteCount: Int { count * stride }

    private let base: UnsafeMutableRawPointer

    init(_ base: UnsafeMutableRawPointer) { self.base = base }

    /// The value written to `slot`. Sound for the values kept here, which are all bitwise-copyable (no references),
    /// once `slot` was written with the same type.
    @inline(__always)
    func load<Value: BitwiseCopyable>(_ slot: Int8, as type: Value.Type) -> Value? {
        assert(MemoryLayout<Value?>.size <= Self.stride, "\(Value.self) does not fit a parse slot")
        return base.load(fromByteOffset: Int(slot) &* Self.stride, as: Value?.self)
    }

    @inline(__always)
    func store<Value: BitwiseCopyable>(_ value: Value?, in slot: Int8) {
        assert(MemoryLayout<Value?>.size <= Self.stride, "\(Value.self) does not fit a parse slot")
        base.storeBytes(of: value, toByteOffset: Int(slot) &* Self.stride, as: Value?.self)
    }
}
