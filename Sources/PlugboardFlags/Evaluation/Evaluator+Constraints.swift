import Foundation
import PlugboardRegex
import PlugboardVersioning

// Whether a constraint holds: the context value read and parsed at most once per flag, then compared.
extension Evaluator {
    /// Whether the constraint at `index` holds. It takes the index, not the record, and each test reads only the
    /// fields it needs in a function of its own: one switch on the test here, inline in the strategy's loop.
    @inline(__always)
    mutating func constraintHolds(at index: Int32) -> Bool {
        switch program.constraints[index].test {
        case .never: program.constraints[index].inverted
        case .inList, .notInList: listHolds(at: index)
        case .string: stringHolds(at: index)
        case .number: numberHolds(at: index)
        case .date: dateHolds(at: index)
        case .semver: versionHolds(at: index)
        case .regex: regexHolds(at: index)
        case .cidr: networkHolds(at: index)
        }
    }

    /// Which of less (bit 0), equal (bit 1) and greater (bit 2) `order` is.
    @inline(__always)
    private static func orderBit(less: Bool, equal: Bool, greater: Bool) -> UInt8 {
        (less ? 1 : 0) | (equal ? 2 : 0) | (greater ? 4 : 0)
    }

    @inline(never)
    private mutating func listHolds(at index: Int32) -> Bool {
        let constraint = program.constraints[index]
        let set = program.sets[constraint.first]
        let found = withValue(constraint.field) { set.find(UnsafeRawBufferPointer($0)) >= 0 }
        let result = constraint.test == .inList ? found ?? false : !(found ?? false)
        return result != constraint.inverted
    }

    @inline(never)
    private mutating func stringHolds(at index: Int32) -> Bool {
        let constraint = program.constraints[index]
        let needles = program.needles
        let result = withValue(constraint.field) { Self.stringMatches($0, constraint, needles) } ?? false
        return result != constraint.inverted
    }

    @inline(never)
    private mutating func numberHolds(at index: Int32) -> Bool {
        let constraint = program.constraints[index]
        guard let value = parsedNumber(of: constraint.field, slot: constraint.slot) else { return constraint.inverted }
        let number = program.numbers[constraint.first]
        // `NUM_EQ` compares within an epsilon, as Unleash's engine does; the other operators exactly.
        let equal = constraint.orders == 0b010 ? abs(value - number) < Double.ulpOfOne : value == number
        let order = Self.orderBit(less: value < number, equal: equal, greater: value > number)
        return (constraint.orders & order != 0) != constraint.inverted
    }

    @inline(never)
    private mutating func dateHolds(at index: Int32) -> Bool {
        let constraint = program.constraints[index]
        guard let value = parsedDate(of: constraint.field, slot: constraint.slot) else { return constraint.inverted }
        let instant = program.instants[constraint.first]
        let order = Self.orderBit(less: value < instant, equal: value == instant, greater: instant < value)
        return (constraint.orders & order != 0) != constraint.inverted
    }

    @inline(never)
    private mutating func versionHolds(at index: Int32) -> Bool {
        let constraint = program.constraints[index]
        guard let value = parsedVersion(of: constraint.field, slot: constraint.slot) else { return constraint.inverted }
        let key = program.versions[constraint.first]
        var order = key.order(of: value)
        if order == nil {
            // Same numbers, both pre-releases: the identifiers decide, read from the text again.
            let needles = program.needles
            order = withValue(constraint.field) { bytes in
                Self.comparePrerelease(UnsafeBufferPointer(rebasing: bytes[value.prerelease]), needles[key.prerelease])
            }
        }
        guard let order else { return constraint.inverted }
        return (constraint.orders & Self.orderBit(less: order < 0, equal: order == 0, greater: order > 0) != 0) != constraint.inverted
    }

    @inline(never)
    private mutating func regexHolds(at index: Int32) -> Bool {
        let constraint = program.constraints[index]
        let result: Bool
        if let automaton = program.automata[constraint.first] {
            result = withValue(constraint.field) { automaton.matches(utf8: $0) } ?? false
        } else if let text = currentValue(constraint.field) {
            result = program.regexes[constraint.first].matches(text)
        } else {
            result = false
        }
        return result != constraint.inverted
    }

    @inline(never)
    private mutating func networkHolds(at index: Int32) -> Bool {
        let constraint = program.constraints[index]
        guard let address = parsedAddress(of: constraint.field, slot: constraint.slot) else { return constraint.inverted }
        return networkContains(first: constraint.first, count: constraint.count, address) != constraint.inverted
    }

    /// The field's value for string operators; a missing `currentTime` reads as now (`YYYY-MM-DDTHH:MM:SSZ`).
    @inline(__always)
    mutating func currentValue(_ field: FieldRef) -> String? {
        if let text = value(of: field) { return text }
        if field.kind == .currentTime { return UnleashDate.formatWholeSeconds(storage.environment.now()) }
        return nil
    }

    /// The value in `slot` (`.some(nil)` when the field did not parse), or `nil` when the slot is not written yet.
    @inline(__always)
    private func cached<Value: BitwiseCopyable>(_ slot: Int8, as type: Value.Type) -> Value?? {
        guard slot >= 0, parsedMask & (1 &<< UInt16(slot)) != 0 else { return nil }
        return .some(parsedSlots.load(slot, as: type))
    }

    @inline(__always)
    private mutating func cache<Value: BitwiseCopyable>(_ value: Value?, in slot: Int8) {
        guard slot >= 0 else { return }
        parsedSlots.store(value, in: slot)
        parsedMask |= 1 &<< UInt16(slot)
    }

    /// The field as a semantic version (parsed once per flag): the cache read inline, the parse out of line.
    @inline(__always)
    private mutating func parsedVersion(of field: FieldRef, slot: Int8) -> SemanticVersionNumbers? {
        if let hit = cached(slot, as: SemanticVersionNumbers.self) { return hit }
        return parseVersion(of: field, slot: slot)
    }

    @inline(never)
    private mutating func parseVersion(of field: FieldRef, slot: Int8) -> SemanticVersionNumbers? {
        let parsed = withValue(field) { SemanticVersionNumbers(utf8: $0) } ?? nil
        cache(parsed, in: slot)
        return parsed
    }

    /// The field as an IP address (parsed once per flag when `slot` is one): the cache read inline, the parse out
    /// of line.
    @inline(__always)
    mutating func parsedAddress(of field: FieldRef, slot: Int8) -> IPAddress? {
        if let hit = cached(slot, as: IPAddress.self) { return hit }
        return parseAddress(of: field, slot: slot)
    }

    @inline(never)
    private mutating func parseAddress(of field: FieldRef, slot: Int8) -> IPAddress? {
        let parsed = withValue(field) { IPAddress(utf8: $0) } ?? nil
        cache(parsed, in: slot)
        return parsed
    }

    /// The field as a date (parsed once per flag); a missing `currentTime` is now. The cache is read inline, the
    /// parse out of line.
    @inline(__always)
    private mutating func parsedDate(of field: FieldRef, slot: Int8) -> UnleashInstant? {
        if let hit = cached(slot, as: UnleashInstant.self) { return hit }
        return parseDate(of: field, slot: slot)
    }

    @inline(never)
    private mutating func parseDate(of field: FieldRef, slot: Int8) -> UnleashInstant? {
        let parsed: UnleashInstant?
        if let value = withPresentValue(field, { UnleashDate.parseContextValue(utf8: $0) }) {
            parsed = value
        } else {
            parsed = field.kind == .currentTime ? now() : nil
        }
        cache(parsed, in: slot)
        return parsed
    }

    /// The field as a number (parsed once per flag): the cache read inline, the parse out of line.
    @inline(__always)
    private mutating func parsedNumber(of field: FieldRef, slot: Int8) -> Double? {
        if let hit = cached(slot, as: Double.self) { return hit }
        return parseNumber(of: field, slot: slot)
    }

    @inline(never)
    private mutating func parseNumber(of field: FieldRef, slot: Int8) -> Double? {
        let parsed = withValue(field) { UnleashNumber.parseContextValue(utf8: $0) } ?? nil
        cache(parsed, in: slot)
        return parsed
    }
}
