import Foundation
import PlugboardVersioning

/// Evaluates flags of one snapshot for one context.
struct Evaluator {
    let storage: FlagSnapshot.Storage
    let context: UnleashContext
    /// The name of the flag being asked about; rollouts without a `groupId` hash with it (for a parent
    /// evaluated as a dependency, Unleash's engine uses the child's name).
    var toggleName = ""
    private var nowInstant: UnleashInstant?

    init(storage: FlagSnapshot.Storage, context: UnleashContext) {
        self.storage = storage
        self.context = context
    }

    mutating func evaluate(_ position: Int, wantVariant: Bool) -> Evaluation {
        let flag = storage.flags[position]
        toggleName = flag.name
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
                let strategy = flag.strategies[match]
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
    func value(of field: ContextField) -> String? {
        switch field {
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
            let parent = storage.flags[parentIndex]
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
    private mutating func matchStrategy(_ flag: CompiledFlag) -> Int?? {
        if flag.strategies.isEmpty { return .some(nil) }
        for (index, strategy) in flag.strategies.enumerated() where strategyMatches(strategy) {
            return .some(index)
        }
        return nil
    }

    private mutating func strategyMatches(_ strategy: CompiledStrategy) -> Bool {
        guard ruleMatches(strategy.rule) else { return false }
        for constraint in strategy.constraints where !constraintHolds(constraint) { return false }
        return true
    }

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
            let bucket = MurmurHash3.normalizedValue(groupId: groupId ?? toggleName, identifier: identifier)
            return bucket <= percent
        case .random(let percent):
            return UInt64(storage.environment.random(100)) + 1 <= percent
        case .remoteAddress(let networks):
            guard let text = value(of: .remoteAddress), let address = IPAddress(text) else { return false }
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
            if var text = currentValue(constraint.field) {
                if caseInsensitive { text = text.lowercased() }
                result = values.contains { Self.bytesMatch(text, $0, match) }
            } else {
                result = false
            }
        case .number(let comparison, let number):
            if let text = currentValue(constraint.field), let value = UnleashNumber.parseContextValue(text) {
                result = comparison == .equal ? abs(value - number) < Double.ulpOfOne : comparison.holds(value, number)
            } else {
                result = false
            }
        case .date(let comparison, let instant):
            let parsed: UnleashInstant?
            if let text = value(of: constraint.field) {
                parsed = UnleashDate.parseContextValue(text)
            } else {
                parsed = constraint.field == .currentTime ? now() : nil
            }
            result = parsed.map { comparison.holds($0, instant) } ?? false
        case .semver(let comparison, let version):
            if let text = currentValue(constraint.field), let value = SemanticVersionCache.parse(text) {
                result = comparison.holds(value, version)
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
            if let text = currentValue(constraint.field), let address = IPAddress(text) {
                result = networks.contains { $0.contains(address) }
            } else {
                result = false
            }
        }
        return result != constraint.inverted
    }

    /// The field's value for string operators; a missing `currentTime` reads as now (`YYYY-MM-DDTHH:MM:SSZ`).
    private mutating func currentValue(_ field: ContextField) -> String? {
        if let text = value(of: field) { return text }
        if field == .currentTime { return UnleashDate.formatWholeSeconds(storage.environment.now()) }
        return nil
    }

    /// Byte-wise (UTF-8) prefix, suffix or substring test, as Unleash's engine does it.
    static func bytesMatch(_ text: String, _ needle: String, _ match: StringMatch) -> Bool {
        let haystack = text.utf8
        let pattern = needle.utf8
        switch match {
        case .startsWith:
            return haystack.starts(with: pattern)
        case .endsWith:
            guard haystack.count >= pattern.count else { return false }
            return haystack.suffix(pattern.count).elementsEqual(pattern)
        case .contains:
            if pattern.isEmpty { return true }
            if let found = haystack.withContiguousStorageIfAvailable({ h in
                pattern.withContiguousStorageIfAvailable { p in Self.containsBytes(h, p) }
            }), let found {
                return found
            }
            return Self.containsBytes(Array(haystack), Array(pattern))
        }
    }

    private static func containsBytes(_ h: some RandomAccessCollection<UInt8>, _ p: some RandomAccessCollection<UInt8>) -> Bool {
        guard h.count >= p.count, let first = p.first else { return p.isEmpty }
        var start = h.startIndex
        let last = h.index(h.endIndex, offsetBy: -p.count)
        while start <= last {
            if h[start] == first, h[start..<h.index(start, offsetBy: p.count)].elementsEqual(p) { return true }
            start = h.index(after: start)
        }
        return false
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

/// Parses context versions; a thin wrapper so the strict `SemanticVersion` stays the single source of rules.
enum SemanticVersionCache {
    static func parse(_ text: String) -> SemanticVersion? { SemanticVersion(parsing: text) }
}
