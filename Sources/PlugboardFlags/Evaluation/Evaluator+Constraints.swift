import Foundation
import PlugboardRegex
import PlugboardVersioning

// Whether a constraint holds: the context value read and parsed at most once per flag, then compared.
extension Evaluator {
    /// Whether the constraint at `index` holds. It takes the index, not the record: when the compiler keeps this
    /// out of line, a record passed by value is copied field by field at every call, which costs about as much as a
    /// cached number comparison; read in place, only the fields the test needs are loaded.
    @inline(__always)
    mutating func constraintHolds(at index: Int32) -> Bool {
        let constraint = program.constraints[index]
        let result: Bool
        let first = constraint.first
        switch constraint.test {
        case .never:
            result = false
        case .inList:
            let set = program.sets[first]
            result = withValue(constraint.field) { set.find(UnsafeRawBufferPointer($0)) >= 0 } ?? false
        case .notInList:
            let set = program.sets[first]
            result = withValue(constraint.field) { set.find(UnsafeRawBufferPointer($0)) < 0 } ?? true
        case .string:
            let needles = program.needles
            result = withValue(constraint.field) { Self.stringMatches($0, constraint, needles) } ?? false
        case .number:
            if let value = parsedNumber(of: constraint.field, slot: constraint.slot) {
                let number = program.numbers[first]
                result =
                    constraint.comparison == .equal ? abs(value - number) < Double.ulpOfOne : constraint.comparison.holds(value, number)
            } else {
                result = false
            }
        case .date:
            result =
                parsedDate(of: constraint.field, slot: constraint.slot).map { constraint.comparison.holds($0, program.instants[first]) }
                ?? false
        case .semver:
            if let value = parsedVersion(of: constraint.field, slot: constraint.slot) {
                let key = program.versions[first]
                if let order = key.order(of: value) {
                    result = constraint.comparison.holds(order, 0)
                } else {
                    // Same numbers, both pre-releases: the identifiers decide, read from the text again.
                    let needles = program.needles
                    let order = withValue(constraint.field) { bytes in
                        Self.comparePrerelease(UnsafeBufferPointer(rebasing: bytes[value.prerelease]), needles[key.prerelease])
                    }
                    result = order.map { constraint.comparison.holds($0, 0) } ?? false
                }
            } else {
                result = false
            }
        case .regex:
            if let automaton = program.automata[first] {
                result = withValue(constraint.field) { automaton.matches(utf8: $0) } ?? false
            } else if let text = currentValue(constraint.field) {
                result = program.regexes[first].matches(text)
            } else {
                result = false
            }
        case .cidr:
            if let address = parsedAddress(of: constraint.field, slot: constraint.slot) {
                result = networkContains(first: first, count: constraint.count, address)
            } else {
                result = false
            }
        }
        return result != constraint.inverted
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
