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
