import Foundation
import PlugboardRegex
import PlugboardVersioning

// Whether a constraint holds: the context value read and parsed at most once per evaluation, then compared.
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
            if let value = parsedNumber(of: constraint.field) {
                let number = program.numbers[first]
                result =
                    constraint.comparison == .equal ? abs(value - number) < Double.ulpOfOne : constraint.comparison.holds(value, number)
            } else {
                result = false
            }
        case .date:
            result = parsedDate(of: constraint.field).map { constraint.comparison.holds($0, program.instants[first]) } ?? false
        case .semver:
            if let value = parsedVersion(of: constraint.field) {
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
            if let address = parsedAddress(of: constraint.field) {
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

    /// The field as a semantic version (parsed once per evaluation): the cache read inline, the parse out of line.
    @inline(__always)
    private mutating func parsedVersion(of field: FieldRef) -> SemanticVersionNumbers? {
        if let hit = versions[field] { return hit }
        return parseVersion(of: field)
    }

    @inline(never)
    private mutating func parseVersion(of field: FieldRef) -> SemanticVersionNumbers? {
        let parsed = withValue(field) { SemanticVersionNumbers(utf8: $0) } ?? nil
        versions.store(parsed, for: field)
        return parsed
    }

    /// The field as an IP address (parsed once per evaluation): the cache read inline, the parse out of line.
    @inline(__always)
    mutating func parsedAddress(of field: FieldRef) -> IPAddress? {
        if let hit = addresses[field] { return hit }
        return parseAddress(of: field)
    }

    @inline(never)
    private mutating func parseAddress(of field: FieldRef) -> IPAddress? {
        let parsed = withValue(field) { IPAddress(utf8: $0) } ?? nil
        addresses.store(parsed, for: field)
        return parsed
    }

    /// The field as a date (parsed once per evaluation); a missing `currentTime` is now. The cache is read inline,
    /// the parse out of line.
    @inline(__always)
    private mutating func parsedDate(of field: FieldRef) -> UnleashInstant? {
        if let hit = dates[field] { return hit }
        return parseDate(of: field)
    }

    @inline(never)
    private mutating func parseDate(of field: FieldRef) -> UnleashInstant? {
        let parsed: UnleashInstant?
        if let text = value(of: field) {
            parsed = UnleashDate.parseContextValue(text)
        } else {
            parsed = field.kind == .currentTime ? now() : nil
        }
        dates.store(parsed, for: field)
        return parsed
    }

    /// The field as a number (parsed once per evaluation): the cache read inline, the parse out of line.
    @inline(__always)
    private mutating func parsedNumber(of field: FieldRef) -> Double? {
        if let hit = numbers[field] { return hit }
        return parseNumber(of: field)
    }

    @inline(never)
    private mutating func parseNumber(of field: FieldRef) -> Double? {
        let parsed = withValue(field) { UnleashNumber.parseContextValue(utf8: $0) } ?? nil
        numbers.store(parsed, for: field)
        return parsed
    }
}
