import PlugboardRegex

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
    /// Flag, property, group and variant names; the standard fields' names first, at their kinds' raw values.
    let strings: Table<String>
    /// The ``NameTable/wordHash(_:)`` of each standard field's name, by kind: for the property a missing field
    /// falls back to.
    let standardHashes: Table<UInt32>
    /// The values of `STR_*` constraints as bytes (lowercased when the constraint is case-insensitive), and the
    /// pre-releases of constraint versions.
    let needles: ByteStrings
    /// Exact (byte-for-byte) string sets: `IN`, `NOT_IN`, user ids, variant overrides.
    let sets: Table<NameTable>
    let hostSets: Table<Set<String>>
    let numbers: Table<Double>
    let instants: Table<UnleashInstant>
    /// Constraint versions: numbers, and the pre-release identifiers joined in `needles`.
    let versions: Table<VersionKey>
    let regexes: Table<UnleashRegex>
    /// Each regex's automaton, read without copying the regex (`nil`: it runs on the Pike VM).
    let automata: Table<RegexAutomaton?>
    let networks: Table<IPNetwork>
    let variantSets: Table<VariantSetRecord>
    let variants: Table<VariantRecord>
    /// Each variant's name and payload, at its position in `variants`: one shared value per variant, which an answer
    /// holds with one retain.
    let variantShapes: Table<Variant.Shape>
    let overrides: Table<OverrideRecord>
    let dependencies: Table<DependencyRecord>
    /// Flag positions by name (byte-exact, as Unleash's engine looks names up).
    let lookup: NameTable
    /// Flag positions by the words of the name's `String`, tried first (``IdentityTable``).
    let identities: IdentityTable

    /// Lowers the compiler's flags; `index` maps each name to the position that answers for it.
    init(flags compiled: [CompiledFlag], index: [String: Int]) {
        var builder = Builder()
        let flagRecords = compiled.map { builder.flag($0) }
        flags = Table(flagRecords)
        strategies = Table(builder.strategies)
        constraints = Table(builder.constraints)
        fields = Table(builder.fields)
        strings = Table(builder.strings)
        standardHashes = Table(
            builder.strings.prefix(Int(FieldRef.Kind.property.rawValue)).map { name in
                var name = name
                return name.withUTF8 { NameTable.wordHash(UnsafeRawBufferPointer($0)) }
            })
        needles = ByteStrings(builder.needles)
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
        variantShapes = Table(builder.variantShapes)
        overrides = Table(builder.overrides)
        dependencies = Table(builder.dependencies)
        let names = index.map { (name: $0.key, position: Int32($0.value)) }
        lookup = NameTable(names)
        identities = IdentityTable(names)
    }

    deinit {
        flags.free()
        strategies.free()
        constraints.free()
        fields.free()
        strings.free()
        standardHashes.free()
        needles.free()
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
        variantShapes.free()
        overrides.free()
        dependencies.free()
        lookup.free()
        identities.free()
    }

    /// The position of the flag named `name`, or `nil`.
    @inline(__always)
    func position(of name: String) -> Int32? {
        let identical = identities.find(name)
        if identical >= 0 { return identical }
        let position = lookup.find(name)
        return position >= 0 ? position : nil
    }
}
