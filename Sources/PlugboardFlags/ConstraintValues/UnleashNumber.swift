/// Number parsing with the exact grammars Unleash's engine accepts.
enum UnleashNumber {
    /// A constraint's number value: `[+-]?digits(.digits*)?([eE][+-]?digits)?`, optionally surrounded by
    /// spaces or tabs (the forms Unleash's engine compiles); anything else is rejected.
    static func parseConstraintValue(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        var index = start
        func digits() -> Int {
            let from = index
            while index < end, (0x30...0x39).contains(bytes[index]) { index += 1 }
            return index - from
        }
        func sign() { if index < end, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 } }
        sign()
        guard digits() > 0 else { return nil }
        if index < end, bytes[index] == 0x2E {
            index += 1
            _ = digits()
        }
        if index < end, bytes[index] == 0x65 || bytes[index] == 0x45 {
            index += 1
            sign()
            guard digits() > 0 else { return nil }
        }
        guard index == end else { return nil }
        return Double(String(decoding: bytes[start..<end], as: UTF8.self))
    }

    /// A context value parsed like Rust's `f64::from_str`: `[+-]?(inf|infinity|nan|digits[.digits][e[+-]digits])`,
    /// case-insensitive names, no surrounding whitespace, no hexadecimal, at least one digit in the mantissa.
    static func parseContextValue(_ text: String) -> Double? {
        var utf8 = text.utf8[...]
        guard !utf8.isEmpty, utf8.count < 1_000 else { return nil }
        var negative = false
        if let first = utf8.first, first == 0x2B || first == 0x2D {
            negative = first == 0x2D
            utf8 = utf8.dropFirst()
        }
        if let first = utf8.first, first | 0x20 == 0x69 || first | 0x20 == 0x6E {  // 'i' or 'n', any case
            switch String(decoding: utf8, as: UTF8.self).lowercased() {
            case "inf", "infinity": return negative ? -.infinity : .infinity
            case "nan": return .nan
            default: return nil
            }
        }
        var mantissaDigits = 0
        var index = utf8.startIndex
        var integer: UInt64 = 0
        func digits() -> Int {
            var count = 0
            while index < utf8.endIndex, (0x30...0x39).contains(utf8[index]) {
                integer = integer &* 10 &+ UInt64(utf8[index] - 0x30)
                index = utf8.index(after: index)
                count += 1
            }
            return count
        }
        mantissaDigits += digits()
        // A whole number of up to 15 digits is exact as a double: no need for the general conversion.
        if index == utf8.endIndex, mantissaDigits > 0, mantissaDigits <= 15 { return negative ? -Double(integer) : Double(integer) }
        if index < utf8.endIndex, utf8[index] == 0x2E {
            index = utf8.index(after: index)
            mantissaDigits += digits()
        }
        guard mantissaDigits > 0 else { return nil }
        if index < utf8.endIndex, utf8[index] == 0x65 || utf8[index] == 0x45 {
            index = utf8.index(after: index)
            if index < utf8.endIndex, utf8[index] == 0x2B || utf8[index] == 0x2D { index = utf8.index(after: index) }
            guard digits() > 0 else { return nil }
        }
        guard index == utf8.endIndex else { return nil }
        return Double(text)
    }

    /// A rollout percentage parsed like Rust's `usize::from_str` (`[+]?digits`); `nil` when that fails.
    static func parsePercentage(_ text: String) -> UInt64? {
        var utf8 = text.utf8[...]
        if utf8.first == 0x2B { utf8 = utf8.dropFirst() }
        guard !utf8.isEmpty, utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return UInt64(String(decoding: utf8, as: UTF8.self))
    }
}
