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
        let shape =
            text.utf8.withContiguousStorageIfAvailable(quickShape) ?? Array(text.utf8).withUnsafeBufferPointer(contextValueShape)
        switch shape {
        case .invalid: return nil
        case .whole(let value): return value
        case .general: return Double(text)
        }
    }

    /// ``parseContextValue(_:)`` on UTF-8 text read in place.
    @inline(__always)
    static func parseContextValue(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        switch quickShape(bytes) {
        case .invalid: return nil
        case .whole(let value): return value
        case .general: return Double(String(decoding: bytes, as: UTF8.self))
        }
    }

    private enum Shape {
        case invalid
        /// A whole number of up to 15 digits, which is exact as a double.
        case whole(Double)
        /// Valid; the general conversion gives the value.
        case general
    }

    /// An optional `-` and 1 to 15 digits (what most context values are) read at once; anything else goes to
    /// ``contextValueShape(_:)``.
    @inline(__always)
    private static func quickShape(_ bytes: UnsafeBufferPointer<UInt8>) -> Shape {
        let count = bytes.count
        guard count > 0, count <= 15, let base = bytes.baseAddress else { return contextValueShape(bytes) }
        let negative = base[0] == 0x2D
        var index = negative ? 1 : 0
        guard index < count else { return .invalid }
        var integer: UInt64 = 0
        while index < count {
            let digit = base[index] &- 0x30
            guard digit < 10 else { return contextValueShape(bytes) }
            integer = integer &* 10 &+ UInt64(digit)
            index += 1
        }
        return .whole(negative ? -Double(integer) : Double(integer))
    }

    /// Checks Rust's grammar on the bytes in place.
    private static func contextValueShape(_ bytes: UnsafeBufferPointer<UInt8>) -> Shape {
        guard !bytes.isEmpty, bytes.count < 1_000 else { return .invalid }
        var index = 0
        var negative = false
        if bytes[0] == 0x2B || bytes[0] == 0x2D {
            negative = bytes[0] == 0x2D
            index = 1
        }
        if index < bytes.count, bytes[index] | 0x20 == 0x69 || bytes[index] | 0x20 == 0x6E {  // 'i' or 'n', any case
            switch String(decoding: bytes[index...], as: UTF8.self).lowercased() {
            case "inf", "infinity": return .whole(negative ? -.infinity : .infinity)
            case "nan": return .whole(.nan)
            default: return .invalid
            }
        }
        var integer: UInt64 = 0
        func digits() -> Int {
            var count = 0
            while index < bytes.count, bytes[index] &- 0x30 < 10 {
                integer = integer &* 10 &+ UInt64(bytes[index] &- 0x30)
                index += 1
                count += 1
            }
            return count
        }
        var mantissaDigits = digits()
        if index == bytes.count, mantissaDigits > 0, mantissaDigits <= 15 { return .whole(negative ? -Double(integer) : Double(integer)) }
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            mantissaDigits += digits()
        }
        guard mantissaDigits > 0 else { return .invalid }
        if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {
            index += 1
            if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
            guard digits() > 0 else { return .invalid }
        }
        return index == bytes.count ? .general : .invalid
    }

    /// A rollout percentage parsed like Rust's `usize::from_str` (`[+]?digits`); `nil` when that fails.
    static func parsePercentage(_ text: String) -> UInt64? {
        var utf8 = text.utf8[...]
        if utf8.first == 0x2B { utf8 = utf8.dropFirst() }
        guard !utf8.isEmpty, utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return UInt64(String(decoding: utf8, as: UTF8.self))
    }
}
