import Foundation

/// An instant with nanosecond precision, as Unleash's engine compares dates (a leap second is second 59 plus a
/// nanosecond count of one second or more, so it orders after 59.999…).
struct UnleashInstant: Comparable, Hashable, Sendable {
    var seconds: Int64
    var nanoseconds: Int64

    static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.seconds != rhs.seconds ? lhs.seconds < rhs.seconds : lhs.nanoseconds < rhs.nanoseconds
    }

    init(seconds: Int64, nanoseconds: Int64) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The instant of a `Date`, to the whole second (as the engine formats "now").
    init(wholeSecondsOf date: Date) {
        seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        nanoseconds = 0
    }
}

/// Date parsing with the two grammars of Unleash's engine.
///
/// Constraint values must be exactly `YYYY-MM-DDTHH:MM:SS[.mmm](Z|±HH:MM)`. Context values (`currentTime`) are
/// read with the relaxed RFC 3339 rules of Rust's chrono: `T`, `t` or a space between date and time, 1–2 digit
/// fields, any number of fraction digits, `Z`, `UTC` or `±HH[:]MM` offsets, spaces between fields.
enum UnleashDate {
    /// Parses a constraint's date value; `nil` when the engine would refuse it.
    static func parseConstraintValue(_ text: String) -> UnleashInstant? {
        let bytes = Array(text.utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        let token = Array(bytes[start..<end])
        // YYYY-MM-DDTHH:MM:SS = 19 bytes, then optional .mmm, then Z or ±HH:MM.
        func isDigit(_ i: Int) -> Bool { i < token.count && (0x30...0x39).contains(token[i]) }
        func digits(_ positions: [Int]) -> Bool { positions.allSatisfy(isDigit) }
        guard token.count >= 20, digits([0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]),
            token[4] == 0x2D, token[7] == 0x2D, token[10] == 0x54, token[13] == 0x3A, token[16] == 0x3A
        else { return nil }
        var index = 19
        if index < token.count, token[index] == 0x2E {
            guard digits([index + 1, index + 2, index + 3]) else { return nil }
            index += 4
        }
        if index < token.count, token[index] == 0x5A {
            index += 1
        } else if index < token.count, token[index] == 0x2B || token[index] == 0x2D {
            guard index + 5 < token.count + 0, digits([index + 1, index + 2, index + 4, index + 5]), token[index + 3] == 0x3A
            else { return nil }
            index += 6
        } else {
            return nil
        }
        guard index == token.count else { return nil }
        return parseContextValue(String(decoding: token, as: UTF8.self))
    }

    /// Parses a context date the way chrono's `DateTime<Utc>::from_str` does; `nil` when it would fail.
    static func parseContextValue(_ text: String) -> UnleashInstant? {
        if let canonical = text.utf8.withContiguousStorageIfAvailable(canonicalInstant), let canonical { return canonical }
        return parseAnyContextValue(text)
    }

    /// ``parseContextValue(_:)`` on UTF-8 text read in place.
    static func parseContextValue(utf8 bytes: UnsafeBufferPointer<UInt8>) -> UnleashInstant? {
        if let canonical = canonicalInstant(bytes) { return canonical }
        return parseAnyContextValue(String(decoding: bytes, as: UTF8.self))
    }

    /// ``parseContextValue(_:)`` without the shortcut for the common shape (the tests compare the two).
    static func parseAnyContextValue(_ text: String) -> UnleashInstant? {
        var scanner = Scanner(text.unicodeScalars)
        // Date: year (4 digits, or any number with an explicit sign), '-', month, '-', day.
        scanner.skipWhitespace()
        let year: Int64
        if scanner.consume("-") {
            guard let value = scanner.number(maxDigits: 30) else { return nil }
            year = -value
        } else if scanner.consume("+") {
            guard let value = scanner.number(maxDigits: 30) else { return nil }
            year = value
        } else {
            guard let value = scanner.number(maxDigits: 4) else { return nil }
            year = value
        }
        guard let month = scanner.twoDigits(after: "-"), let day = scanner.twoDigits(after: "-") else { return nil }
        guard scanner.consume("T") || scanner.consume("t") || scanner.consume(" ") else { return nil }
        // Time: hour ':' minute ':' second ['.' fraction].
        scanner.skipWhitespace()
        guard let hour = scanner.number(maxDigits: 2), let minute = scanner.twoDigits(after: ":"),
            let second = scanner.twoDigits(after: ":")
        else { return nil }
        var nanoseconds: Int64 = 0
        if scanner.consume(".") {
            guard let (value, count) = scanner.fraction() else { return nil }
            nanoseconds = value
            for _ in count..<9 { nanoseconds *= 10 }
        }
        scanner.skipWhitespace()
        // Offset: 'UTC' (any case), 'Z'/'z', or sign HH [colons/spaces] MM.
        let offsetSeconds: Int64
        if scanner.consumeCaseInsensitive("UTC") {
            offsetSeconds = 0
        } else if scanner.consume("Z") || scanner.consume("z") {
            offsetSeconds = 0
        } else {
            let negative: Bool
            if scanner.consume("+") {
                negative = false
            } else if scanner.consume("-") || scanner.consume("\u{2212}") {
                negative = true
            } else {
                return nil
            }
            guard let hours = scanner.twoDigits() else { return nil }
            scanner.skip { $0 == ":" || $0.isWhitespace }
            guard let minutes = scanner.twoDigits(), minutes < 60 else { return nil }
            let total = hours * 3600 + minutes * 60
            offsetSeconds = negative ? -total : total
        }
        scanner.skipWhitespace()
        guard scanner.atEnd else { return nil }
        return instant(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, nanoseconds: nanoseconds,
            offsetSeconds: offsetSeconds)
    }

    /// The common shape, read at fixed places: `YYYY-MM-DD(T|t| )HH:MM:SS[.F{1,9}](Z|z|±HH:MM)`, nothing around it;
    /// `nil` for anything else, which the general parser then reads (so this only makes the common case fast).
    private static func canonicalInstant(_ bytes: UnsafeBufferPointer<UInt8>) -> UnleashInstant? {
        let count = bytes.count
        guard count >= 20, let text = bytes.baseAddress else { return nil }
        /// The two digits at `at` as a number, or -1.
        @inline(__always) func two(_ at: Int) -> Int64 {
            let high = text[at] &- 0x30
            let low = text[at &+ 1] &- 0x30
            return high < 10 && low < 10 ? Int64(high &* 10 &+ low) : -1
        }
        let century = two(0)
        let yearOfCentury = two(2)
        let month = two(5)
        let day = two(8)
        let hour = two(11)
        let minute = two(14)
        let second = two(17)
        let separator = text[10]
        guard century | yearOfCentury | month | day | hour | minute | second >= 0, text[4] == 0x2D, text[7] == 0x2D,
            separator == 0x54 || separator == 0x74 || separator == 0x20, text[13] == 0x3A, text[16] == 0x3A
        else { return nil }
        var index = 19
        var nanoseconds: Int64 = 0
        if text[index] == 0x2E {
            index &+= 1
            var digits = 0
            while index < count, case let digit = text[index] &- 0x30, digit < 10 {
                guard digits < 9 else { return nil }
                nanoseconds = nanoseconds &* 10 &+ Int64(digit)
                digits &+= 1
                index &+= 1
            }
            guard digits > 0 else { return nil }
            nanoseconds &*= Self.fractionScale(digits)
        }
        guard index < count else { return nil }
        let offsetSeconds: Int64
        let zone = text[index]
        if zone == 0x5A || zone == 0x7A {
            guard index &+ 1 == count else { return nil }
            offsetSeconds = 0
        } else if zone == 0x2B || zone == 0x2D {
            guard index &+ 6 == count, text[index &+ 3] == 0x3A else { return nil }
            let hours = two(index &+ 1)
            let minutes = two(index &+ 4)
            guard hours >= 0, minutes >= 0, minutes < 60 else { return nil }
            offsetSeconds = (zone == 0x2D ? -1 : 1) * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        return instant(
            year: century * 100 + yearOfCentury, month: month, day: day, hour: hour, minute: minute, second: second,
            nanoseconds: nanoseconds, offsetSeconds: offsetSeconds)
    }

    /// What a fraction of `digits` digits (1…9) is multiplied by to give nanoseconds.
    @inline(__always)
    private static func fractionScale(_ digits: Int) -> Int64 {
        switch digits {
        case 1: 100_000_000
        case 2: 10_000_000
        case 3: 1_000_000
        case 4: 100_000
        case 5: 10_000
        case 6: 1_000
        case 7: 100
        case 8: 10
        default: 1
        }
    }

    /// The instant of parsed fields, validated as chrono's `Parsed::to_datetime` does; `nil` when invalid.
    private static func instant(
        year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64, nanoseconds: Int64, offsetSeconds: Int64
    ) -> UnleashInstant? {
        var nanoseconds = nanoseconds
        // Validation as chrono's `Parsed::to_datetime`.
        guard abs(offsetSeconds) < 86_400, (1...12).contains(month), (0...23).contains(hour), (0...59).contains(minute),
            (0...60).contains(second), year > -262_144, year < 262_144,
            day >= 1, day <= CivilDate.daysInMonth(year: year, month: month)
        else { return nil }
        var wholeSecond = second
        if second == 60 {
            wholeSecond = 59
            nanoseconds += 1_000_000_000
        }
        let days = CivilDate.days(year: year, month: month, day: day)
        let local = days * 86_400 + hour * 3600 + minute * 60 + wholeSecond
        return UnleashInstant(seconds: local - offsetSeconds, nanoseconds: nanoseconds)
    }

    /// Formats a date as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC).
    static func format(_ date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let milliseconds = ((totalMilliseconds % 1000) + 1000) % 1000
        let totalSeconds = (totalMilliseconds - milliseconds) / 1000
        let secondsOfDay = ((totalSeconds % 86_400) + 86_400) % 86_400
        let days = (totalSeconds - secondsOfDay) / 86_400
        let (year, month, day) = CivilDate.civil(days: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondsOfDay / 3600, 2)):"
            + "\(pad(secondsOfDay / 60 % 60, 2)):\(pad(secondsOfDay % 60, 2)).\(pad(milliseconds, 3))Z"
    }

    /// Formats an instant as `YYYY-MM-DDTHH:MM:SSZ`, the form the engine gives a missing `currentTime`.
    static func formatWholeSeconds(_ date: Date) -> String {
        let text = format(date)
        return String(text.prefix(19)) + "Z"
    }

    /// A tiny scanner over Unicode scalars, reading the string in place (no copy, no allocation).
    private struct Scanner {
        let scalars: String.UnicodeScalarView
        var index: String.Index

        init(_ scalars: String.UnicodeScalarView) {
            self.scalars = scalars
            index = scalars.startIndex
        }

        var atEnd: Bool { index == scalars.endIndex }

        mutating func consume(_ scalar: Unicode.Scalar) -> Bool {
            guard index < scalars.endIndex, scalars[index] == scalar else { return false }
            scalars.formIndex(after: &index)
            return true
        }

        /// Consumes `text` (ASCII letters) in any case.
        mutating func consumeCaseInsensitive(_ text: StaticString) -> Bool {
            var position = index
            for byte in UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount) {
                guard position < scalars.endIndex, scalars[position].isASCII,
                    UInt8(scalars[position].value) | 0x20 == byte | 0x20
                else { return false }
                scalars.formIndex(after: &position)
            }
            index = position
            return true
        }

        mutating func skipWhitespace() { skip(while: \.isWhitespace) }

        /// The next field of a date or a time: white space, `separator`, white space, and up to two digits (`- 05`, `:30`).
        mutating func twoDigits(after separator: Unicode.Scalar) -> Int64? {
            skipWhitespace()
            guard consume(separator) else { return nil }
            skipWhitespace()
            return number(maxDigits: 2)
        }

        mutating func skip(while predicate: (Unicode.Scalar) -> Bool) {
            while index < scalars.endIndex, predicate(scalars[index]) { scalars.formIndex(after: &index) }
        }

        private func digit(at position: String.Index) -> Int64? {
            guard position < scalars.endIndex else { return nil }
            return scalars[position].asciiDigitValue
        }

        /// 1...maxDigits ASCII digits.
        mutating func number(maxDigits: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while count < maxDigits, let digit = digit(at: index) {
                let (product, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = product.addingReportingOverflow(digit)
                if overflow1 || overflow2 { return nil }
                value = sum
                scalars.formIndex(after: &index)
                count += 1
            }
            return count > 0 ? value : nil
        }

        /// At least one digit; the first nine count, the rest are skipped. Returns the value and digits used.
        mutating func fraction() -> (Int64, Int)? {
            var value: Int64 = 0
            var count = 0
            while count < 9, let digit = digit(at: index) {
                value = value * 10 + digit
                scalars.formIndex(after: &index)
                count += 1
            }
            guard count > 0 else { return nil }
            while digit(at: index) != nil { scalars.formIndex(after: &index) }
            return (value, count)
        }

        /// Exactly two ASCII digits.
        mutating func twoDigits() -> Int64? {
            guard let tens = digit(at: index) else { return nil }
            let next = scalars.index(after: index)
            guard let ones = digit(at: next) else { return nil }
            index = scalars.index(after: next)
            return tens * 10 + ones
        }
    }
}

extension Unicode.Scalar {
    /// Unicode's White_Space, with ASCII answered without the property tables.
    var isWhitespace: Bool {
        isASCII ? self == " " || (0x09...0x0D).contains(value) : properties.isWhitespace
    }

    /// The value of an ASCII digit, or `nil`.
    var asciiDigitValue: Int64? {
        (0x30...0x39).contains(value) ? Int64(value - 0x30) : nil
    }
}
