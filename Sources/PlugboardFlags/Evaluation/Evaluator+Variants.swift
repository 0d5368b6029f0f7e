// Which variant a flag that is on gives: an override, else the weighted pick by stickiness.
extension Evaluator {
    /// The strategy's own variants when it has some, else the flag's: the picked variant's index in
    /// ``FlagProgram/variants``; `nil` when there is none to pick.
    mutating func resolveVariant(_ flag: FlagRecord, strategy: Int32?) -> (Int32, Evaluation.VariantPick)? {
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
                let names = program.sets[override.set]
                if withValue(override.field, { names.find(UnsafeRawBufferPointer($0)) >= 0 }) == true { return (index, .override) }
            }
        }
        let prefix = set.groupPrefix
        let modulus = set.totalWeight
        let hashed: UInt32?
        if set.standardStickiness {
            let seed = value(of: Self.userId) ?? value(of: Self.sessionId)
            hashed = seed.map { MurmurHash3.normalizedValue(prefix: prefix, identifier: $0, modulus: modulus) }
        } else if set.stickiness.kind == .property {
            // A property's value is hashed where the context's index keeps its bytes (as `value(of:)` reads it).
            hashed = withValue(set.stickiness) { MurmurHash3.normalizedValue(prefix: prefix, utf8: $0, modulus: modulus) }
        } else {
            hashed = value(of: set.stickiness).map { MurmurHash3.normalizedValue(prefix: prefix, identifier: $0, modulus: modulus) }
        }
        let target = hashed ?? storage.environment.random(set.totalWeight) + 1
        var cumulative: UInt32 = 0
        for index in set.first..<end {
            cumulative += program.variants[index].weight
            if cumulative >= target { return (index, set.weightedCount > 1 ? .split : .single) }
        }
        return nil
    }
}
