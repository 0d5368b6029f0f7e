import Foundation
import PlugboardRegex
import PlugboardVersioning

// Whether a constraint holds: the context value read and parsed at most once per evaluation, then compared.
extension Evaluator {
    mutating func constraintHolds(_ constraint: ConstraintRecord) -> Bool {
        let result: Bool
        let first = constraint.first
        let end = first + constraint.count
        switch constraint.test {
        case .never:
            result = false
        case .inList:
            result = currentValue(constraint.field).map { program.sets[first].contains($0) } ?? false
        case .notInList:
            result = currentValue(constraint.field).map { !program.sets[first].contains($0) } ?? true
        case .string:
            if let text = currentValue(constraint.field) {
                var found = false
                if constraint.caseInsensitive, !Self.isASCII(text) {
                    let lowered = text.lowercased()
                    for index in first..<end where Self.bytesMatch(lowered, program.strings[index], constraint.match) {
                        found = true
                        break
                    }
                } else {
                    for index in first..<end
                    where Self.bytesMatch(text, program.strings[index], constraint.match, foldingASCII: constraint.caseInsensitive) {
                        found = true
                        break
                    }
                }
                result = found
            } else {
                result = false
            }
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
                } else if let text = currentValue(constraint.field), let view = SemanticVersionView(text) {
                    // Same numbers, both pre-releases: the identifiers decide, read from the text again.
                    result = constraint.comparison.holds(view.comparePrerelease(to: program.strings[key.prerelease]), 0)
                } else {
                    result = false
                }
            } else {
                result = false
            }
        case .regex:
            if let text = currentValue(constraint.field) {
                result = program.automata[first]?.matches(text) ?? program.regexes[first].matches(text)
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

    /// The field as a semantic version (parsed once per evaluation).
    private mutating func parsedVersion(of field: FieldRef) -> SemanticVersionNumbers? {
        if let hit = versions[field] { return hit }
        let parsed = currentValue(field).flatMap(SemanticVersionNumbers.init)
        versions.store(parsed, for: field)
        return parsed
    }

    /// The field as an IP address (parsed once per evaluation).
    mutating func parsedAddress(of field: FieldRef) -> IPAddress? {
        if let hit = addresses[field] { return hit }
        let parsed = currentValue(field).flatMap { IPAddress($0) }
        addresses.store(parsed, for: field)
        return parsed
    }

    /// The field as a date (parsed once per evaluation); a missing `currentTime` is now.
    private mutating func parsedDate(of field: FieldRef) -> UnleashInstant? {
        if let hit = dates[field] { return hit }
        let parsed: UnleashInstant?
        if let text = value(of: field) {
            parsed = UnleashDate.parseContextValue(text)
        } else {
            parsed = field.kind == .currentTime ? now() : nil
        }
        dates.store(parsed, for: field)
        return parsed
    }

    /// The field as a number (parsed once per evaluation).
    private mutating func parsedNumber(of field: FieldRef) -> Double? {
        if let hit = numbers[field] { return hit }
        let parsed = currentValue(field).flatMap(UnleashNumber.parseContextValue)
        numbers.store(parsed, for: field)
        return parsed
    }

    /// Byte-wise (UTF-8) prefix, suffix or substring test, as Unleash's engine does it; `foldingASCII` lowercases
    /// the text's ASCII letters on the fly (the needle is lowercased already).
    static func bytesMatch(_ text: String, _ needle: String, _ match: StringMatch, foldingASCII: Bool = false) -> Bool {
        withBytes(text) { haystack in
            withBytes(needle) { pattern in bytesMatch(haystack, pattern, match, foldingASCII: foldingASCII) }
        }
    }

    private static func isASCII(_ text: String) -> Bool {
        withBytes(text) { bytes in
            var high: UInt8 = 0
            for byte in bytes { high |= byte }
            return high < 0x80
        }
    }

    /// The string's UTF-8 in place (a copy only for a string that is not stored as UTF-8).
    @inline(__always)
    private static func withBytes<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    private static func bytesMatch(
        _ haystack: UnsafeBufferPointer<UInt8>, _ pattern: UnsafeBufferPointer<UInt8>, _ match: StringMatch, foldingASCII: Bool
    ) -> Bool {
        guard haystack.count >= pattern.count else { return false }
        /// Whether `pattern` stands in `haystack` at `start`.
        @inline(__always) func matches(at start: Int) -> Bool {
            if !foldingASCII { return pattern.isEmpty || memcmp(haystack.baseAddress! + start, pattern.baseAddress!, pattern.count) == 0 }
            for offset in 0..<pattern.count {
                var byte = haystack[start + offset]
                if byte &- 0x41 < 26 { byte |= 0x20 }
                if byte != pattern[offset] { return false }
            }
            return true
        }
        switch match {
        case .startsWith: return matches(at: 0)
        case .endsWith: return matches(at: haystack.count - pattern.count)
        case .contains:
            for start in 0...(haystack.count - pattern.count) where matches(at: start) { return true }
            return false
        }
    }
}
