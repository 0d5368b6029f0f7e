import Foundation
import PlugboardRegex
import PlugboardVersioning

/// The compiled flags in the form the evaluator reads: fixed-size records in buffers the program owns, pointing at
/// each other by index.
///
/// The compiler's output (``CompiledFlag`` and friends: arrays, enums with payloads, strings) is convenient to build
/// and check, but reading it costs a retain and a release for each array, payload and class the evaluator touches,
/// which was about 40 % of an evaluation. Here the records are trivial values, and every table hands out its
/// elements in place (``Table``), so an evaluation reads the program without reference counting or copies.
final class FlagProgram: @unchecked Sendable {
    let flags: Table<FlagRecord>
    let strategies: Table<StrategyRecord>
    let constraints: Table<ConstraintRecord>
    /// Rollout stickiness sources and variant override fields.
    let fields: Table<FieldRef>
    /// Every string the evaluator reads: flag, property, group, variant names and constraint values.
    let strings: Table<String>
    /// Exact (byte-for-byte) string sets: `IN`, `NOT_IN`, user ids, variant overrides.
    let sets: Table<NameTable>
    let hostSets: Table<Set<String>>
    let numbers: Table<Double>
    let instants: Table<UnleashInstant>
    /// Constraint versions: numbers, and the pre-release identifiers joined in `strings`.
    let versions: Table<VersionKey>
    let regexes: Table<UnleashRegex>
    /// Each regex's automaton, read without copying the regex (`nil`: it runs on the Pike VM).
    let automata: Table<RegexAutomaton?>
    let networks: Table<IPNetwork>
    let variantSets: Table<VariantSetRecord>
    let variants: Table<VariantRecord>
    let payloads: Table<VariantPayload>
    let overrides: Table<OverrideRecord>
    let dependencies: Table<DependencyRecord>
    /// Flag positions by name (byte-exact, as Unleash's engine looks names up).
    let lookup: NameTable

    /// Lowers the compiler's flags; `index` maps each name to the position that answers for it.
    init(flags compiled: [CompiledFlag], index: [String: Int]) {
        var builder = Builder()
        let flagRecords = compiled.map { builder.flag($0) }
        flags = Table(flagRecords)
        strategies = Table(builder.strategies)
        constraints = Table(builder.constraints)
        fields = Table(builder.fields)
        strings = Table(builder.strings)
        sets = Table(builder.sets.map { NameTable($0.values.map { (name: $0, position: 0) }) })
        hostSets = Table(builder.hostSets)
        numbers = Table(builder.numbers)
        instants = Table(builder.instants)
        versions = Table(builder.versions)
        regexes = Table(builder.regexes)
        automata = Table(builder.regexes.map(\.automaton))
        networks = Table(builder.networks)
        variantSets = Table(builder.variantSets)
        variants = Table(builder.variants)
        payloads = Table(builder.payloads)
        overrides = Table(builder.overrides)
        dependencies = Table(builder.dependencies)
        lookup = NameTable(index.map { (name: $0.key, position: Int32($0.value)) })
    }

    deinit {
        flags.free()
        strategies.free()
        constraints.free()
        fields.free()
        strings.free()
        for index in 0..<Int32(sets.count) { sets[index].free() }
        sets.free()
        hostSets.free()
        numbers.free()
        instants.free()
        versions.free()
        regexes.free()
        automata.free()
        networks.free()
        variantSets.free()
        variants.free()
        payloads.free()
        overrides.free()
        dependencies.free()
        lookup.free()
    }

    /// The position of the flag named `name`, or `nil`.
    @inline(__always)
    func position(of name: String) -> Int32? {
        let position = lookup.find(name)
        return position >= 0 ? position : nil
    }

    /// Collects the records while lowering.
    private struct Builder {
        var strategies: [StrategyRecord] = []
        var constraints: [ConstraintRecord] = []
        var fields: [FieldRef] = []
        var strings: [String] = []
        var sets: [ExactStringSet] = []
        var hostSets: [Set<String>] = []
        var numbers: [Double] = []
        var instants: [UnleashInstant] = []
        var versions: [VersionKey] = []
        var regexes: [UnleashRegex] = []
        var networks: [IPNetwork] = []
        var variantSets: [VariantSetRecord] = []
        var variants: [VariantRecord] = []
        var payloads: [VariantPayload] = []
        var overrides: [OverrideRecord] = []
        var dependencies: [DependencyRecord] = []
        /// Property and override names, interned so that two references to one field compare equal as integers.
        var interned: [String: Int32] = [:]

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
            }
            return FieldRef(kind: kind, name: name, override: field.overrideName.map { self.name($0) } ?? -1)
        }

        /// Appends `elements` to `table`; the first index and the count.
        static func append<T>(_ elements: [T], to table: inout [T]) -> (Int32, Int32) {
            table += elements
            return (Int32(table.count - elements.count), Int32(elements.count))
        }

        mutating func flag(_ flag: CompiledFlag) -> FlagRecord {
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
                (record.first, record.count) = Self.append(values, to: &strings)
            case .number(let comparison, let value):
                record.test = .number
                record.comparison = comparison
                (record.first, record.count) = Self.append([value], to: &numbers)
            case .date(let comparison, let instant):
                record.test = .date
                record.comparison = comparison
                (record.first, record.count) = Self.append([instant], to: &instants)
            case .semver(let comparison, let version):
                record.test = .semver
                record.comparison = comparison
                let prerelease = version.prerelease.isEmpty ? -1 : string(version.prerelease.joined(separator: "."))
                versions.append(VersionKey(major: version.major, minor: version.minor, patch: version.patch, prerelease: prerelease))
                (record.first, record.count) = (Int32(versions.count - 1), 1)
            case .regex(let regex):
                record.test = .regex
                (record.first, record.count) = Self.append([regex], to: &regexes)
            case .cidr(let list):
                record.test = .cidr
                (record.first, record.count) = Self.append(list, to: &networks)
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
                var payload: Int32 = -1
                if let value = variant.payload {
                    payloads.append(value)
                    payload = Int32(payloads.count - 1)
                }
                return VariantRecord(
                    name: string(variant.name), weight: variant.weight, payload: payload, firstOverride: first, overrideCount: count)
            }
            let (first, count) = Self.append(records, to: &variants)
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

/// A context field as the program refers to it: the kind, and for a property its interned name.
struct FieldRef: Equatable {
    enum Kind: UInt8 {
        case userId, sessionId, environment, appName, remoteAddress, currentTime, property
        /// Rollout stickiness only: a random number.
        case random
    }

    var kind: Kind
    /// The property's name in ``FlagProgram/strings`` (interned), or -1.
    var name: Int32
    /// The key a per-call override of this field has (``ContextField/overrideName``), or -1.
    var override: Int32

    /// A standard field: the program interns the standard names first, at their kinds' raw values.
    static func standard(_ kind: Kind) -> FieldRef { FieldRef(kind: kind, name: -1, override: Int32(kind.rawValue)) }
}

struct FlagRecord {
    var name: Int32
    /// The bucketing hash of `"name:"`, for rollouts without a group id.
    var namePrefix: MurmurHash3.Prefix
    var enabled: Bool
    var broken: Bool
    var firstStrategy: Int32
    var strategyCount: Int32
    /// The flag's variant set, or -1.
    var variants: Int32
    var firstDependency: Int32
    var dependencyCount: Int32
}

struct StrategyRecord {
    enum Rule: UInt8 { case always, never, userIds, rollout, random, remoteAddress, hostname }

    var rule: Rule
    /// `rollout`: 0…100; `random`: the parsed percentage (it may be above 100).
    var percent: UInt64 = 0
    /// `userIds`: the set in `sets`; `hostname`: the set in `hostSets`; `rollout`: the first stickiness source in
    /// `fields`; `remoteAddress`: the first network.
    var first: Int32 = 0
    var count: Int32 = 0
    /// The rollout's group id in `strings`; -1 is the evaluated flag's name.
    var groupId: Int32 = -1
    /// The bucketing hash of `"groupId:"` when the rollout has a group id.
    var groupPrefix = MurmurHash3.Prefix(groupId: "", seed: 0)
    var firstConstraint: Int32 = 0
    var constraintCount: Int32 = 0
    /// The strategy's own variant set, or -1.
    var variants: Int32 = -1
    var isTargeted: Bool
}

struct ConstraintRecord {
    enum Test: UInt8 { case never, inList, notInList, string, number, date, semver, regex, cidr }

    var field: FieldRef
    var test: Test = .never
    var comparison: OrdinalComparison = .equal
    var match: StringMatch = .contains
    var caseInsensitive = false
    var inverted: Bool
    /// The first value in the test's table (`sets`, `strings`, `numbers`, `instants`, `versions`, `regexes`,
    /// `networks`) and how many.
    var first: Int32 = 0
    var count: Int32 = 0
}

/// A constraint's version: its numbers, and its pre-release identifiers joined by `.` in ``FlagProgram/strings``.
struct VersionKey {
    var major: UInt64
    var minor: UInt64
    var patch: UInt64
    /// -1 for a release.
    var prerelease: Int32

    /// The order of `version` against this one (negative, zero, positive) when the numbers decide it or one of
    /// the two is a release; `nil` when the pre-release identifiers must be compared.
    @inline(__always)
    func order(of version: SemanticVersionNumbers) -> Int? {
        if version.major != major { return version.major < major ? -1 : 1 }
        if version.minor != minor { return version.minor < minor ? -1 : 1 }
        if version.patch != patch { return version.patch < patch ? -1 : 1 }
        switch (version.prerelease.isEmpty, prerelease < 0) {
        case (true, true): return 0
        case (true, false): return 1  // a release is above its pre-releases
        case (false, true): return -1
        case (false, false): return nil
        }
    }
}

struct VariantSetRecord {
    var first: Int32
    var count: Int32
    var totalWeight: UInt32
    /// `userId`, else `sessionId`, else random; otherwise `stickiness`.
    var standardStickiness: Bool
    var stickiness: FieldRef
    var groupId: Int32
    /// The variant bucketing hash of `"groupId:"`.
    var groupPrefix: MurmurHash3.Prefix
    var weightedCount: Int32
}

struct VariantRecord {
    var name: Int32
    var weight: UInt32
    var payload: Int32
    var firstOverride: Int32
    var overrideCount: Int32
}

struct OverrideRecord {
    var field: FieldRef
    var set: Int32
}

struct DependencyRecord {
    /// The parent's position, or -1 when it does not exist.
    var parent: Int32
    var expectEnabled: Bool
    /// The expected variant names in `strings` (none: any).
    var firstVariant: Int32
    var variantCount: Int32
}

/// A fixed buffer of elements, freed by its owner (``FlagProgram``'s `deinit`).
///
/// The subscript is an addressor: `table[i].member` reads the element where it lies, so reading a record, or calling
/// a method on a string or a set, neither copies it nor retains it.
struct Table<Element>: @unchecked Sendable {
    private let base: UnsafeMutablePointer<Element>
    let count: Int

    init(_ elements: [Element]) {
        count = elements.count
        base = .allocate(capacity: max(1, elements.count))
        _ = UnsafeMutableBufferPointer(start: base, count: elements.count).initialize(from: elements)
    }

    subscript(index: Int32) -> Element {
        @inline(__always) unsafeAddress { UnsafePointer(base + Int(index)) }
    }

    func free() {
        base.deinitialize(count: count)
        base.deallocate()
    }
}

/// An open-addressing table from names (their UTF-8 bytes) to flag positions: the hash is MurmurHash3 over the
/// bytes in place, which is several times cheaper than a `Dictionary<String, Int>`'s SipHash of a `String`.
struct NameTable: @unchecked Sendable {
    private struct Slot {
        var hash: UInt32
        var position: Int32
        var offset: Int32
        var count: Int32
    }

    private let slots: UnsafeMutablePointer<Slot>
    private let mask: Int
    private let bytes: UnsafeMutableRawPointer

    init(_ entries: [(name: String, position: Int32)]) {
        var capacity = 8
        while capacity < entries.count * 2 { capacity *= 2 }
        mask = capacity - 1
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: Slot(hash: 0, position: -1, offset: 0, count: 0), count: capacity)
        let total = entries.reduce(0) { $0 + $1.name.utf8.count }
        bytes = .allocate(byteCount: max(1, total), alignment: 1)
        var offset = 0
        for entry in entries {
            var name = entry.name
            let hash = name.withUTF8 { utf8 in
                if !utf8.isEmpty { (bytes + offset).copyMemory(from: utf8.baseAddress!, byteCount: utf8.count) }
                return MurmurHash3.hash(UnsafeRawBufferPointer(utf8), seed: 0)
            }
            var slot = Int(hash) & mask
            while slots[slot].position >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Slot(hash: hash, position: entry.position, offset: Int32(offset), count: Int32(name.utf8.count))
            offset += name.utf8.count
        }
    }

    /// Whether `name` is in the table.
    @inline(__always)
    func contains(_ name: String) -> Bool { find(name) >= 0 }

    /// The position stored for `name`, or -1.
    @inline(__always)
    func find(_ name: String) -> Int32 {
        if let found = name.utf8.withContiguousStorageIfAvailable({ find(UnsafeRawBufferPointer($0)) }) { return found }
        var copy = name
        copy.makeContiguousUTF8()
        return find(copy)
    }

    private func find(_ name: UnsafeRawBufferPointer) -> Int32 {
        let hash = MurmurHash3.hash(name, seed: 0)
        var slot = Int(hash) & mask
        while true {
            let candidate = slots[slot]
            if candidate.position < 0 { return -1 }
            if candidate.hash == hash, Int(candidate.count) == name.count,
                name.isEmpty || memcmp(bytes + Int(candidate.offset), name.baseAddress!, name.count) == 0
            {
                return candidate.position
            }
            slot = (slot + 1) & mask
        }
    }

    func free() {
        slots.deallocate()
        bytes.deallocate()
    }
}
