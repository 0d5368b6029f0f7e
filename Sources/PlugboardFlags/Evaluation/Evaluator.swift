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
    /// The context's properties, held for the rest of the evaluation from the first read of one: one retain,
    /// instead of one per lookup through the pointer, and none for an evaluation that reads no property.
    private var heldProperties: [String: String]?
    /// Fields that override the context's, by Unleash's names (`userId`, …, or a property name): what a plug-in
    /// passes per call, read first instead of being merged into a copy of the context.
    let overrides: [String: String]?
    /// The flag being asked about; rollouts without a `groupId` hash with its name (for a parent evaluated as a
    /// dependency, Unleash's engine uses the child's name).
    private var toggle: Int32 = 0
    private var nowInstant: UnleashInstant?
    // Context values parsed at most once per evaluation, whatever the number of constraints that read them.
    private var versions = ParsedOnce<SemanticVersionNumbers>()
    private var addresses = ParsedOnce<IPAddress>()
    private var dates = ParsedOnce<UnleashInstant>()
    private var numbers = ParsedOnce<Double>()

    /// `context` must outlive the evaluator.
    @inline(__always)
    init(storage: FlagSnapshot.Storage, context: UnsafePointer<UnleashContext>, overrides: [String: String]? = nil) {
        self.storage = storage
        self.program = storage.program
        self.contextPointer = context
        self.overrides = overrides
    }

    /// Whether the flag at `position` is on: ``evaluate(_:wantVariant:)`` without the details, for `isEnabled`.
    @inline(__always)
    mutating func isEnabled(_ position: Int32) -> Bool {
        toggle = position
        if case .enabled = outcome(program.flags[position]) { return true }
        return false
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
        if !dependenciesMet(flag) { return .dependencyUnmet }
        if let match = matchStrategy(flag) { return .enabled(strategy: match.map(Int.init)) }
        return .noStrategyMatched
    }

    // MARK: Context

    /// Up to this many properties, a lookup compares names instead of hashing one with SipHash (a context usually has a
    /// handful, and hashing was a quarter of a REGEX evaluation).
    static let scannedProperties = 8

    @inline(__always)
    private mutating func property(_ name: String) -> String? {
        if heldProperties == nil { heldProperties = contextPointer.pointee.properties }
        let properties = heldProperties.unsafelyUnwrapped
        guard properties.count <= Self.scannedProperties else { return properties[name] }
        for (key, value) in properties where key == name { return value }
        return nil
    }

    /// A standard field falls back to the property of the same name, as in Unleash's engine.
    @inline(__always)
    mutating func value(of field: FieldRef) -> String? {
        if field.override >= 0, let value = overrides?[program.strings[field.override]] { return value }
        return switch field.kind {
        case .userId: context.userId ?? property("userId")
        case .sessionId: context.sessionId ?? property("sessionId")
        case .environment: context.environment ?? property("environment")
        case .appName: context.appName ?? property("appName")
        case .remoteAddress: context.remoteAddress ?? property("remoteAddress")
        case .currentTime: context.currentTime ?? property("currentTime")
        case .property: property(program.strings[field.name])
        case .random: nil
        }
    }

    private static var userId: FieldRef { .standard(.userId) }
    private static var sessionId: FieldRef { .standard(.sessionId) }
    private static var remoteAddress: FieldRef { .standard(.remoteAddress) }

    private mutating func now() -> UnleashInstant {
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

    // MARK: Strategies

    /// The offset of the first matching strategy: `.some(nil)` when the flag has no strategies (on for all),
    /// `nil` when none matches.
    @inline(__always)
    private mutating func matchStrategy(_ flag: FlagRecord) -> Int32?? {
        if flag.strategyCount == 0 { return .some(nil) }
        for offset in 0..<flag.strategyCount where strategyMatches(program.strategies[flag.firstStrategy + offset]) {
            return .some(offset)
        }
        return nil
    }

    @inline(__always)
    private mutating func strategyMatches(_ strategy: StrategyRecord) -> Bool {
        guard ruleMatches(strategy) else { return false }
        var index = strategy.firstConstraint
        let end = index + strategy.constraintCount
        while index < end {
            if !constraintHolds(program.constraints[index]) { return false }
            index += 1
        }
        return true
    }

    @inline(__always)
    private mutating func ruleMatches(_ strategy: StrategyRecord) -> Bool {
        switch strategy.rule {
        case .always:
            return true
        case .never:
            return false
        case .userIds:
            guard let userId = value(of: Self.userId) else { return false }
            return program.sets[strategy.first].contains(userId)
        case .rollout:
            var index = strategy.first
            let end = index + strategy.count
            while index < end {
                let source = program.fields[index]
                index += 1
                let identifier: String?
                if source.kind == .random {
                    identifier = String(storage.environment.random(10_000))
                } else {
                    identifier = currentValue(source)
                }
                if let identifier {
                    let prefix = strategy.groupId >= 0 ? strategy.groupPrefix : program.flags[toggle].namePrefix
                    let bucket = MurmurHash3.normalizedValue(prefix: prefix, identifier: identifier)
                    return bucket <= strategy.percent
                }
            }
            return false
        case .random:
            return UInt64(storage.environment.random(100)) + 1 <= strategy.percent
        case .remoteAddress:
            guard let address = parsedAddress(of: Self.remoteAddress) else { return false }
            return networkContains(first: strategy.first, count: strategy.count, address)
        case .hostname:
            guard let hostname = storage.environment.hostname else { return false }
            return program.hostSets[strategy.first].contains(hostname.lowercased())
        }
    }

    @inline(__always)
    private func networkContains(first: Int32, count: Int32, _ address: IPAddress) -> Bool {
        for index in first..<(first + count) where program.networks[index].contains(address) { return true }
        return false
    }

    private mutating func constraintHolds(_ constraint: ConstraintRecord) -> Bool {
        let result: Bool
        let first = constraint.first
        let end = first + constraint.count
        switch constraint.test {
        case .never:
            result = false
        case .inList:
            result = currentValue(constraint.field).map { program.sets[first].contains($0) } ?? false
        case .notInList:
            result = currentValue(constraint.field).map { !program.sets[first].contains($0) } ?? true
        case .string:
            if let text = currentValue(constraint.field) {
                var found = false
                if constraint.caseInsensitive, !Self.isASCII(text) {
                    let lowered = text.lowercased()
                    for index in first..<end where Self.bytesMatch(lowered, program.strings[index], constraint.match) {
                        found = true
                        break
                    }
                } else {
                    for index in first..<end
                    where Self.bytesMatch(text, program.strings[index], constraint.match, foldingASCII: constraint.caseInsensitive) {
                        found = true
                        break
                    }
                }
                result = found
            } else {
                result = false
            }
        case .number:
            if let value = parsedNumber(of: constraint.field) {
                let number = program.numbers[first]
                result =
                    constraint.comparison == .equal ? abs(value - number) < Double.ulpOfOne : constraint.comparison.holds(value, number)
            } else {
                result = false
            }
        case .date:
            result = parsedDate(of: constraint.field).map { constraint.comparison.holds($0, program.instants[first]) } ?? false
        case .semver:
            if let value = parsedVersion(of: constraint.field) {
                let key = program.versions[first]
                if let order = key.order(of: value) {
                    result = constraint.comparison.holds(order, 0)
                } else if let text = currentValue(constraint.field), let view = SemanticVersionView(text) {
                    // Same numbers, both pre-releases: the identifiers decide, read from the text again.
                    result = constraint.comparison.holds(view.comparePrerelease(to: program.strings[key.prerelease]), 0)
                } else {
                    result = false
                }
            } else {
                result = false
            }
        case .regex:
            if let text = currentValue(constraint.field) {
                result = program.automata[first]?.matches(text) ?? program.regexes[first].matches(text)
            } else {
                result = false
            }
        case .cidr:
            if let address = parsedAddress(of: constraint.field) {
                result = networkContains(first: first, count: constraint.count, address)
            } else {
                result = false
            }
        }
        return result != constraint.inverted
    }

    /// The field's value for string operators; a missing `currentTime` reads as now (`YYYY-MM-DDTHH:MM:SSZ`).
    @inline(__always)
    private mutating func currentValue(_ field: FieldRef) -> String? {
        if let text = value(of: field) { return text }
        if field.kind == .currentTime { return UnleashDate.formatWholeSeconds(storage.environment.now()) }
        return nil
    }

    /// The field as a semantic version (parsed once per evaluation).
    private mutating func parsedVersion(of field: FieldRef) -> SemanticVersionNumbers? {
        if let hit = versions[field] { return hit }
        let parsed = currentValue(field).flatMap(SemanticVersionNumbers.init)
        versions.store(parsed, for: field)
        return parsed
    }

    /// The field as an IP address (parsed once per evaluation).
    private mutating func parsedAddress(of field: FieldRef) -> IPAddress? {
        if let hit = addresses[field] { return hit }
        let parsed = currentValue(field).flatMap { IPAddress($0) }
        addresses.store(parsed, for: field)
        return parsed
    }

    /// The field as a date (parsed once per evaluation); a missing `currentTime` is now.
    private mutating func parsedDate(of field: FieldRef) -> UnleashInstant? {
        if let hit = dates[field] { return hit }
        let parsed: UnleashInstant?
        if let text = value(of: field) {
            parsed = UnleashDate.parseContextValue(text)
        } else {
            parsed = field.kind == .currentTime ? now() : nil
        }
        dates.store(parsed, for: field)
        return parsed
    }

    /// The field as a number (parsed once per evaluation).
    private mutating func parsedNumber(of field: FieldRef) -> Double? {
        if let hit = numbers[field] { return hit }
        let parsed = currentValue(field).flatMap(UnleashNumber.parseContextValue)
        numbers.store(parsed, for: field)
        return parsed
    }

    /// Byte-wise (UTF-8) prefix, suffix or substring test, as Unleash's engine does it; `foldingASCII` lowercases
    /// the text's ASCII letters on the fly (the needle is lowercased already).
    static func bytesMatch(_ text: String, _ needle: String, _ match: StringMatch, foldingASCII: Bool = false) -> Bool {
        withBytes(text) { haystack in
            withBytes(needle) { pattern in bytesMatch(haystack, pattern, match, foldingASCII: foldingASCII) }
        }
    }

    private static func isASCII(_ text: String) -> Bool {
        withBytes(text) { bytes in
            var high: UInt8 = 0
            for byte in bytes { high |= byte }
            return high < 0x80
        }
    }

    /// The string's UTF-8 in place (a copy only for a string that is not stored as UTF-8).
    @inline(__always)
    private static func withBytes<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    private static func bytesMatch(
        _ haystack: UnsafeBufferPointer<UInt8>, _ pattern: UnsafeBufferPointer<UInt8>, _ match: StringMatch, foldingASCII: Bool
    ) -> Bool {
        guard haystack.count >= pattern.count else { return false }
        /// Whether `pattern` stands in `haystack` at `start`.
        @inline(__always) func matches(at start: Int) -> Bool {
            if !foldingASCII { return pattern.isEmpty || memcmp(haystack.baseAddress! + start, pattern.baseAddress!, pattern.count) == 0 }
            for offset in 0..<pattern.count {
                var byte = haystack[start + offset]
                if byte &- 0x41 < 26 { byte |= 0x20 }
                if byte != pattern[offset] { return false }
            }
            return true
        }
        switch match {
        case .startsWith: return matches(at: 0)
        case .endsWith: return matches(at: haystack.count - pattern.count)
        case .contains:
            for start in 0...(haystack.count - pattern.count) where matches(at: start) { return true }
            return false
        }
    }

    // MARK: Variants

    /// The strategy's own variants when it has some, else the flag's: the picked variant's index in
    /// ``FlagProgram/variants``; `nil` when there is none to pick.
    private mutating func resolveVariant(_ flag: FlagRecord, strategy: Int32?) -> (Int32, Evaluation.VariantPick)? {
        var setIndex = flag.variants
        if let strategy {
            let own = program.strategies[flag.firstStrategy + strategy].variants
            if own >= 0 { setIndex = own }
        }
        guard setIndex >= 0 else { return nil }
        let set = program.variantSets[setIndex]
        guard set.totalWeight > 0 else { return nil }
        let end = set.first + set.count
        for index in set.first..<end {
            let variant = program.variants[index]
            for position in variant.firstOverride..<(variant.firstOverride + variant.overrideCount) {
                let override = program.overrides[position]
                if let text = currentValue(override.field), program.sets[override.set].contains(text) { return (index, .override) }
            }
        }
        let seed: String?
        if set.standardStickiness {
            seed = value(of: Self.userId) ?? value(of: Self.sessionId)
        } else {
            seed = value(of: set.stickiness)
        }
        let target: UInt32
        if let seed {
            target = MurmurHash3.normalizedValue(prefix: set.groupPrefix, identifier: seed, modulus: set.totalWeight)
        } else {
            target = storage.environment.random(set.totalWeight) + 1
        }
        var cumulative: UInt32 = 0
        for index in set.first..<end {
            cumulative += program.variants[index].weight
            if cumulative >= target { return (index, set.weightedCount > 1 ? .split : .single) }
        }
        return nil
    }
}

/// A context value parsed at most once per evaluation: the last field read as this kind and its value.
/// One entry is enough: the constraints of a flag that parse a kind of value almost always read one field.
struct ParsedOnce<Value> {
    private var field: FieldRef?
    private var value: Value?

    /// The value already parsed for `field` (`.some(nil)` when it did not parse), or `nil` when not read yet.
    subscript(field: FieldRef) -> Value?? {
        guard let cached = self.field, cached == field else { return nil }
        return .some(value)
    }

    mutating func store(_ value: Value?, for field: FieldRef) {
        self.field = field
        self.value = value
    }
}
