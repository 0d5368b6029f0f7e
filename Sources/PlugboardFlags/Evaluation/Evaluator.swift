import Foundation
import PlugboardVersioning

/// Evaluates flags of one snapshot for one context.
///
/// It lives for one evaluation, on the stack, inside ``FlagSnapshot``'s `evaluate`, which keeps the storage and the
/// context alive: so it holds both without reference counting (an unowned reference and a pointer), which is most of
/// what an evaluation would otherwise cost.
struct Evaluator {
    unowned(unsafe) let storage: FlagSnapshot.Storage
    private let contextPointer: UnsafePointer<UnleashContext>
    private var context: UnleashContext { _read { yield contextPointer.pointee } }
    /// Fields that override the context's, by Unleash's names (`userId`, …, or a property name): what a plug-in
    /// passes per call, read first instead of being merged into a copy of the context.
    let overrides: [String: String]
    /// The name of the flag being asked about; rollouts without a `groupId` hash with it (for a parent
    /// evaluated as a dependency, Unleash's engine uses the child's name).
    private unowned(unsafe) var toggle: CompiledFlag?
    private var nowInstant: UnleashInstant?
    // Context values parsed at most once per evaluation, whatever the number of constraints that read them.
    private var versions = ParsedOnce<SemanticVersionView>()
    private var addresses = ParsedOnce<IPAddress>()
    private var dates = ParsedOnce<UnleashInstant>()
    private var numbers = ParsedOnce<Double>()

    /// `context` must outlive the evaluator.
    init(storage: FlagSnapshot.Storage, context: UnsafePointer<UnleashContext>, overrides: [String: String] = [:]) {
        self.storage = storage
        self.contextPointer = context
        self.overrides = overrides
    }

    mutating func evaluate(_ position: Int, wantVariant: Bool) -> Evaluation {
        unowned(unsafe) let flag = storage.flags[position]
        toggle = flag
        var result = Evaluation(outcome: .noStrategyMatched)
        if !flag.enabled {
            result.outcome = .flagOff
        } else if flag.broken {
            result.outcome = .broken
        } else if !dependenciesMet(flag) {
            result.outcome = .dependencyUnmet
        } else if let match = matchStrategy(flag) {
            result.outcome = .enabled(strategy: match)
            if let match {
                unowned(unsafe) let strategy = flag.strategies[match]
                result.targeted = strategy.isTargeted
                switch strategy.rule {
                case .rollout(let percent, _, _): result.percentage = percent < 100
                case .random(let percent): result.percentage = percent < 100
                case .userIds, .remoteAddress, .hostname: result.targeted = true
                case .always, .never: break
                }
            }
        }
        guard wantVariant else { return result }
        if case .enabled(let match) = result.outcome {
            if let (variant, pick) = resolveVariant(flag, strategy: match) {
                result.variant = Variant(name: variant.name, payload: variant.payload, enabled: true, featureEnabled: true)
                result.pick = pick
            } else {
                result.variant = .disabled(featureEnabled: true)
            }
        }
        return result
    }

    // MARK: Context

    /// A standard field falls back to the property of the same name, as in Unleash's engine.
    @inline(__always)
    func value(of field: ContextField) -> String? {
        if !overrides.isEmpty, let name = field.overrideName, let value = overrides[name] { return value }
        return switch field {
        case .userId: context.userId ?? context.properties["userId"]
        case .sessionId: context.sessionId ?? context.properties["sessionId"]
        case .environment: context.environment ?? context.properties["environment"]
        case .appName: context.appName ?? context.properties["appName"]
        case .remoteAddress: context.remoteAddress ?? context.properties["remoteAddress"]
        case .currentTime: context.currentTime ?? context.properties["currentTime"]
        case .property(let name): context.properties[name]
        }
    }

    private mutating func now() -> UnleashInstant {
        if let nowInstant { return nowInstant }
        let instant = UnleashInstant(wholeSecondsOf: storage.environment.now())
        nowInstant = instant
        return instant
    }

    // MARK: Dependencies

    private mutating func dependenciesMet(_ flag: CompiledFlag) -> Bool {
        for dependency in flag.dependencies {
            guard let parentIndex = dependency.parent else { return false }
            unowned(unsafe) let parent = storage.flags[parentIndex]
            // Unleash does not follow transitive dependencies: a parent with dependencies never satisfies.
            guard parent.dependencies.isEmpty else { return false }
            // The parent is evaluated with the child's name as default group id, as Unleash's engine does.
            let match = parent.enabled && !parent.broken ? matchStrategy(parent) : nil
            let parentEnabled = match != nil
            if let expected = dependency.variants, !expected.isEmpty {
                // The parent's variant is resolved whether or not the parent is on, as the engine does.
                let strategyIndex = match ?? nil
                if let (variant, _) = resolveVariant(parent, strategy: strategyIndex), !expected.contains(variant.name) {
                    return false
                }
            }
            if parentEnabled != dependency.expectEnabled { return false }
        }
        return true
    }

    // MARK: Strategies

    /// The index of the first matching strategy: `.some(nil)` when the flag has no strategies (on for all),
    /// `nil` when none matches.
    @inline(__always)
    private mutating func matchStrategy(_ flag: CompiledFlag) -> Int?? {
        if flag.strategies.isEmpty { return .some(nil) }
        let strategies = flag.strategies
        for index in strategies.indices {
            unowned(unsafe) let strategy = strategies[index]
            if strategyMatches(strategy) { return .some(index) }
        }
        return nil
    }

    @inline(__always)
    private mutating func strategyMatches(_ strategy: CompiledStrategy) -> Bool {
        guard ruleMatches(strategy.rule) else { return false }
        for constraint in strategy.constraints where !constraintHolds(constraint) { return false }
        return true
    }

    @inline(__always)
    private mutating func ruleMatches(_ rule: StrategyRule) -> Bool {
        switch rule {
        case .always:
            return true
        case .never:
            return false
        case .userIds(let ids):
            guard let userId = value(of: .userId) else { return false }
            return ids.contains(userId)
        case .rollout(let percent, let stickiness, let groupId):
            var identifier: String?
            for source in stickiness {
                switch source {
                case .field(let field): identifier = currentValue(field)
                case .random: identifier = String(storage.environment.random(10_000))
                }
                if identifier != nil { break }
            }
            guard let identifier else { return false }
            let bucket = MurmurHash3.normalizedValue(groupId: groupId ?? toggle?.name ?? "", identifier: identifier)
            return bucket <= percent
        case .random(let percent):
            return UInt64(storage.environment.random(100)) + 1 <= percent
        case .remoteAddress(let networks):
            guard let address = parsedAddress(of: .remoteAddress) else { return false }
            return networks.contains { $0.contains(address) }
        case .hostname(let names):
            guard let hostname = storage.environment.hostname else { return false }
            return names.contains(hostname.lowercased())
        }
    }

    private mutating func constraintHolds(_ constraint: CompiledConstraint) -> Bool {
        let result: Bool
        switch constraint.test {
        case .never:
            result = false
        case .inList(let set):
            result = currentValue(constraint.field).map(set.contains) ?? false
        case .notInList(let set):
            result = currentValue(constraint.field).map { !set.contains($0) } ?? true
        case .string(let match, let values, let caseInsensitive):
            if let text = currentValue(constraint.field) {
                if caseInsensitive, !text.utf8.allSatisfy({ $0 < 0x80 }) {
                    let lowered = text.lowercased()
                    result = values.contains { Self.bytesMatch(lowered, $0, match, foldingASCII: false) }
                } else {
                    result = values.contains { Self.bytesMatch(text, $0, match, foldingASCII: caseInsensitive) }
                }
            } else {
                result = false
            }
        case .number(let comparison, let number):
            if let value = parsedNumber(of: constraint.field) {
                result = comparison == .equal ? abs(value - number) < Double.ulpOfOne : comparison.holds(value, number)
            } else {
                result = false
            }
        case .date(let comparison, let instant):
            result = parsedDate(of: constraint.field).map { comparison.holds($0, instant) } ?? false
        case .semver(let comparison, let version):
            if let value = parsedVersion(of: constraint.field) {
                result = comparison.holds(value.compare(to: version), 0)
            } else {
                result = false
            }
        case .regex(let expressions):
            if let text = currentValue(constraint.field) {
                result = expressions.contains { $0.matches(text) }
            } else {
                result = false
            }
        case .cidr(let networks):
            if let address = parsedAddress(of: constraint.field) {
                result = networks.contains { $0.contains(address) }
            } else {
                result = false
            }
        }
        return result != constraint.inverted
    }

    /// The field's value for string operators; a missing `currentTime` reads as now (`YYYY-MM-DDTHH:MM:SSZ`).
    @inline(__always)
    private mutating func currentValue(_ field: ContextField) -> String? {
        if let text = value(of: field) { return text }
        if field == .currentTime { return UnleashDate.formatWholeSeconds(storage.environment.now()) }
        return nil
    }

    /// The field as a semantic version (parsed once per evaluation).
    private mutating func parsedVersion(of field: ContextField) -> SemanticVersionView? {
        if let hit = versions[field] { return hit }
        let parsed = currentValue(field).flatMap(SemanticVersionView.init)
        versions.store(parsed, for: field)
        return parsed
    }

    /// The field as an IP address (parsed once per evaluation).
    private mutating func parsedAddress(of field: ContextField) -> IPAddress? {
        if let hit = addresses[field] { return hit }
        let parsed = currentValue(field).flatMap { IPAddress($0) }
        addresses.store(parsed, for: field)
        return parsed
    }

    /// The field as a date (parsed once per evaluation); a missing `currentTime` is now.
    private mutating func parsedDate(of field: ContextField) -> UnleashInstant? {
        if let hit = dates[field] { return hit }
        let parsed: UnleashInstant?
        if let text = value(of: field) {
            parsed = UnleashDate.parseContextValue(text)
        } else {
            parsed = field == .currentTime ? now() : nil
        }
        dates.store(parsed, for: field)
        return parsed
    }

    /// The field as a number (parsed once per evaluation).
    private mutating func parsedNumber(of field: ContextField) -> Double? {
        if let hit = numbers[field] { return hit }
        let parsed = currentValue(field).flatMap(UnleashNumber.parseContextValue)
        numbers.store(parsed, for: field)
        return parsed
    }

    /// Byte-wise (UTF-8) prefix, suffix or substring test, as Unleash's engine does it; `foldingASCII` lowercases
    /// the text's ASCII letters on the fly (the needle is lowercased already).
    static func bytesMatch(_ text: String, _ needle: String, _ match: StringMatch, foldingASCII: Bool = false) -> Bool {
        let haystack = text.utf8
        let pattern = needle.utf8
        @inline(__always) func fold(_ byte: UInt8) -> UInt8 {
            foldingASCII && (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
        }
        /// Whether `pattern` stands in `haystack` at `start` (no closure is stored, so nothing is allocated).
        func matches(at start: String.UTF8View.Index) -> Bool {
            var h = start
            for byte in pattern {
                guard h < haystack.endIndex, fold(haystack[h]) == byte else { return false }
                haystack.formIndex(after: &h)
            }
            return true
        }
        switch match {
        case .startsWith:
            return matches(at: haystack.startIndex)
        case .endsWith:
            guard haystack.count >= pattern.count else { return false }
            return matches(at: haystack.index(haystack.endIndex, offsetBy: -pattern.count))
        case .contains:
            if pattern.isEmpty { return true }
            guard haystack.count >= pattern.count else { return false }
            var start = haystack.startIndex
            let last = haystack.index(haystack.endIndex, offsetBy: -pattern.count)
            while start <= last {
                if matches(at: start) { return true }
                haystack.formIndex(after: &start)
            }
            return false
        }
    }

    // MARK: Variants

    /// The strategy's own variants when it has some, else the flag's; `nil` when there is none to pick.
    private mutating func resolveVariant(_ flag: CompiledFlag, strategy: Int?) -> (CompiledVariant, Evaluation.VariantPick)? {
        let set: CompiledVariants?
        if let strategy, let own = flag.strategies[strategy].variants {
            set = own
        } else {
            set = flag.variants
        }
        guard let set, set.totalWeight > 0 else { return nil }
        for variant in set.variants {
            for (field, values) in variant.overrides {
                if let text = currentValue(field), values.contains(text) { return (variant, .override) }
            }
        }
        let seed: String?
        switch set.stickiness {
        case .standard: seed = value(of: .userId) ?? value(of: .sessionId)
        case .field(let field): seed = value(of: field)
        }
        let target: UInt32
        if let seed {
            target = MurmurHash3.normalizedValue(
                groupId: set.groupId, identifier: seed, modulus: set.totalWeight, seed: MurmurHash3.variantSeed)
        } else {
            target = storage.environment.random(set.totalWeight) + 1
        }
        var cumulative: UInt32 = 0
        for variant in set.variants {
            cumulative += variant.weight
            if cumulative >= target { return (variant, set.weightedCount > 1 ? .split : .single) }
        }
        return nil
    }
}

/// A context value parsed at most once per evaluation: the last field read as this kind and its value.
/// One entry is enough: the constraints of a flag that parse a kind of value almost always read one field.
struct ParsedOnce<Value> {
    private var field: ContextField?
    private var value: Value?

    /// The value already parsed for `field` (`.some(nil)` when it did not parse), or `nil` when not read yet.
    subscript(field: ContextField) -> Value?? {
        guard let cached = self.field, cached == field else { return nil }
        return .some(value)
    }

    mutating func store(_ value: Value?, for field: ContextField) {
        self.field = field
        self.value = value
    }
}
