import PlugboardRegex
import PlugboardVersioning

extension FlagProgram {
    /// Collects the records while lowering.
    struct Builder {
        var strategies: [StrategyRecord] = []
        var constraints: [ConstraintRecord] = []
        var fields: [FieldRef] = []
        var strings: [String] = []
        var needles: [String] = []
        var sets: [ExactStringSet] = []
        var hostSets: [Set<String>] = []
        var numbers: [Double] = []
        var instants: [UnleashInstant] = []
        var versions: [VersionKey] = []
        var regexes: [UnleashRegex] = []
        var networks: [IPNetwork] = []
        var variantSets: [VariantSetRecord] = []
        var variants: [VariantRecord] = []
        /// Each variant's name and payload, at its position in `variants`.
        var variantShapes: [Variant.Shape] = []
        var overrides: [OverrideRecord] = []
        var dependencies: [DependencyRecord] = []
        /// Property and override names, interned so that two references to one field compare equal as integers.
        var interned: [String: Int32] = [:]
        /// The current flag's parse slots (``ConstraintRecord/slot``) by test, field kind and name.
        var slots: [SlotKey: Int8] = [:]

        struct SlotKey: Hashable {
            var test: ConstraintRecord.Test
            var kind: FieldRef.Kind
            var name: Int32
        }

        init() {
            // The standard fields' names first, at the indices of their kinds (``FieldRef/standard(_:)``).
            for name in ["userId", "sessionId", "environment", "appName", "remoteAddress", "currentTime"] { _ = self.name(name) }
        }

        mutating func string(_ text: String) -> Int32 {
            strings.append(text)
            return Int32(strings.count - 1)
        }

        mutating func name(_ text: String) -> Int32 {
            if let existing = interned[text] { return existing }
            let index = string(text)
            interned[text] = index
            return index
        }

        mutating func field(_ field: ContextField) -> FieldRef {
            let kind: FieldRef.Kind
            var name: Int32 = -1
            var hash: UInt32 = 0
            switch field {
            case .userId: kind = .userId
            case .sessionId: kind = .sessionId
            case .environment: kind = .environment
            case .appName: kind = .appName
            case .remoteAddress: kind = .remoteAddress
            case .currentTime: kind = .currentTime
            case .property(let text):
                kind = .property
                name = self.name(text)
                var bytes = text
                hash = bytes.withUTF8 { NameTable.wordHash(UnsafeRawBufferPointer($0)) }
            }
            return FieldRef(kind: kind, name: name, override: field.overrideName.map { self.name($0) } ?? -1, hash: hash)
        }

        /// Appends `elements` to `table`; the first index and the count.
        static func append<T>(_ elements: [T], to table: inout [T]) -> (Int32, Int32) {
            table += elements
            return (Int32(table.count - elements.count), Int32(elements.count))
        }

        mutating func flag(_ flag: CompiledFlag) -> FlagRecord {
            slots = [:]
            let strategyRecords = flag.strategies.map { strategy($0) }
            let (firstStrategy, strategyCount) = Self.append(strategyRecords, to: &strategies)
            let flagVariants = flag.variants.map { variantSet($0) } ?? -1
            let dependencyRecords = flag.dependencies.map { dependency in
                let values = dependency.variants ?? []
                let (first, count) = Self.append(values, to: &strings)
                return DependencyRecord(
                    parent: dependency.parent.map { Int32($0) } ?? -1, expectEnabled: dependency.expectEnabled,
                    firstVariant: first, variantCount: count)
            }
            let (firstDependency, dependencyCount) = Self.append(dependencyRecords, to: &dependencies)
            return FlagRecord(
                name: string(flag.name), namePrefix: MurmurHash3.Prefix(groupId: flag.name, seed: 0), enabled: flag.enabled,
                broken: flag.broken, firstStrategy: firstStrategy,
                strategyCount: strategyCount, variants: flagVariants, firstDependency: firstDependency,
                dependencyCount: dependencyCount)
        }

        mutating func strategy(_ strategy: CompiledStrategy) -> StrategyRecord {
            var record = StrategyRecord(rule: .always, isTargeted: strategy.isTargeted)
            switch strategy.rule {
            case .always: record.rule = .always
            case .never: record.rule = .never
            case .userIds(let ids):
                record.rule = .userIds
                record.first = Int32(sets.count)
                sets.append(ids)
            case .rollout(let percent, let stickiness, let groupId):
                record.rule = .rollout
                record.percent = UInt64(percent)
                let sources = stickiness.map { source -> FieldRef in
                    switch source {
                    case .field(let field): self.field(field)
                    case .random: FieldRef(kind: .random, name: -1, override: -1)
                    }
                }
                (record.first, record.count) = Self.append(sources, to: &fields)
                record.groupId = groupId.map { string($0) } ?? -1
                if let groupId { record.groupPrefix = MurmurHash3.Prefix(groupId: groupId, seed: 0) }
            case .random(let percent):
                record.rule = .random
                record.percent = percent
            case .remoteAddress(let list):
                record.rule = .remoteAddress
                (record.first, record.count) = Self.append(list, to: &networks)
            case .hostname(let names):
                record.rule = .hostname
                record.first = Int32(hostSets.count)
                hostSets.append(names)
            }
            let constraintRecords = strategy.constraints.map { constraint($0) }
            (record.firstConstraint, record.constraintCount) = Self.append(constraintRecords, to: &constraints)
            record.variants = strategy.variants.map { variantSet($0) } ?? -1
            return record
        }

        mutating func constraint(_ constraint: CompiledConstraint) -> ConstraintRecord {
            var record = ConstraintRecord(field: field(constraint.field), inverted: constraint.inverted)
            switch constraint.test {
            case .never:
                record.test = .never
            case .inList(let set), .notInList(let set):
                if case .inList = constraint.test { record.test = .inList } else { record.test = .notInList }
                record.first = Int32(sets.count)
                sets.append(set)
            case .string(let match, let values, let caseInsensitive):
                record.test = .string
                record.match = match
                record.caseInsensitive = caseInsensitive
                (record.first, record.count) = Self.append(values, to: &needles)
            case .number(let comparison, let value):
                record.test = .number
                record.orders = comparison.orders
                (record.first, record.count) = Self.append([value], to: &numbers)
            case .date(let comparison, let instant):
                record.test = .date
                record.orders = comparison.orders
                (record.first, record.count) = Self.append([instant], to: &instants)
            case .semver(let comparison, let version):
                record.test = .semver
                record.orders = comparison.orders
                var prerelease: Int32 = -1
                if !version.prerelease.isEmpty {
                    needles.append(version.prerelease.joined(separator: "."))
                    prerelease = Int32(needles.count - 1)
                }
                versions.append(VersionKey(major: version.major, minor: version.minor, patch: version.patch, prerelease: prerelease))
                (record.first, record.count) = (Int32(versions.count - 1), 1)
            case .regex(let regex):
                record.test = .regex
                (record.first, record.count) = Self.append([regex], to: &regexes)
            case .cidr(let list):
                record.test = .cidr
                (record.first, record.count) = Self.append(list, to: &networks)
            }
            switch record.test {
            case .number, .date, .semver, .cidr:
                let key = SlotKey(test: record.test, kind: record.field.kind, name: record.field.name)
                if let slot = slots[key] {
                    record.slot = slot
                } else if slots.count < ParsedSlots.count {
                    record.slot = Int8(slots.count)
                    slots[key] = record.slot
                }
            case .never, .inList, .notInList, .string, .regex: break
            }
            return record
        }

        mutating func variantSet(_ set: CompiledVariants) -> Int32 {
            let records = set.variants.map { variant -> VariantRecord in
                let overrideRecords = variant.overrides.map { override -> OverrideRecord in
                    sets.append(override.1)
                    return OverrideRecord(field: field(override.0), set: Int32(sets.count - 1))
                }
                let (first, count) = Self.append(overrideRecords, to: &overrides)
                return VariantRecord(weight: variant.weight, firstOverride: first, overrideCount: count)
            }
            let (first, count) = Self.append(records, to: &variants)
            variantShapes += set.variants.map { Variant.Shape(name: $0.name, payload: $0.payload) }
            let stickiness: FieldRef
            switch set.stickiness {
            case .standard: stickiness = FieldRef(kind: .random, name: -1, override: -1)
            case .field(let field): stickiness = self.field(field)
            }
            variantSets.append(
                VariantSetRecord(
                    first: first, count: count, totalWeight: set.totalWeight, standardStickiness: stickiness.kind == .random,
                    stickiness: stickiness, groupId: string(set.groupId),
                    groupPrefix: MurmurHash3.Prefix(groupId: set.groupId, seed: MurmurHash3.variantSeed),
                    weightedCount: Int32(set.weightedCount)))
            return Int32(variantSets.count - 1)
        }
    }
}
