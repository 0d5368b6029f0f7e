// Which strategy of a flag matches: its rule (user ids, rollout, addresses, host names), then its constraints.
extension Evaluator {
    /// The offset of the first matching strategy: `.some(nil)` when the flag has no strategies (on for all),
    /// `nil` when none matches.
    @inline(__always)
    mutating func matchStrategy(_ flag: FlagRecord) -> Int32?? {
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
            if !constraintHolds(at: index) { return false }
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
            guard let address = parsedAddress(of: Self.remoteAddress, slot: -1) else { return false }
            return networkContains(first: strategy.first, count: strategy.count, address)
        case .hostname:
            guard let hostname = storage.environment.hostname else { return false }
            return program.hostSets[strategy.first].contains(hostname.lowercased())
        }
    }

    @inline(__always)
    func networkContains(first: Int32, count: Int32, _ address: IPAddress) -> Bool {
        for index in first..<(first + count) where program.networks[index].contains(address) { return true }
        return false
    }
}
