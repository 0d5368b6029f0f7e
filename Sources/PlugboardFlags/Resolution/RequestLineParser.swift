/// The fast path for one line of `flag evaluate`'s input: `{"toggle": "NAME", "context": {…}}` read in one pass over its
/// UTF-8 bytes, straight into an ``UnleashContext``.
///
/// It accepts only the plain shape, where its answer is certain to be `JSONDecoder`'s: string or `null` values,
/// standard escapes, no repeated key. Anything else (numbers or booleans as values, nested values under unknown keys,
/// lone surrogates, malformed JSON) returns `nil`, and the caller decodes the line with `JSONDecoder`, which gives the
/// same answer or the error message.
struct RequestLineParser {
    struct Request {
        var toggle: String
        var context: UnleashContext?
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The request of `line`, or `nil` when the line is not of the plain shape.
    static func parse(_ line: String) -> Request? {
        var line = line
        return line.withUTF8 { bytes in
            var parser = RequestLineParser(bytes)
            return parser.request()
        }
    }

    private mutating func request() -> Request? {
        var toggle: String?
        var context: UnleashContext?
        var sawContext = false
        guard
            object({ parser, key in
                switch key {
                case "toggle":
                    guard toggle == nil, let value = parser.string() else { return false }
                    toggle = value
                case "context":
                    guard !sawContext else { return false }
                    sawContext = true
                    if parser.null() { return true }
                    guard let value = parser.context() else { return false }
                    context = value
                default:
                    // Ignored by the decoder; only plain values are skipped here.
                    guard parser.null() || parser.string() != nil else { return false }
                }
                return true
            })
        else { return nil }
        skipWhitespace()
        guard index == bytes.count, let toggle else { return nil }
        return Request(toggle: toggle, context: context)
    }

    private mutating func context() -> UnleashContext? {
        var context = UnleashContext()
        var seen = Set<String>()
        var fields: [(String, String)] = []
        let ok = object { parser, key in
            guard seen.insert(key).inserted else { return false }
            if key == "properties" {
                if parser.null() { return true }
                var properties: [String: String] = [:]
                var seenProperties = Set<String>()
                guard
                    parser.object({ parser, name in
                        guard seenProperties.insert(name).inserted else { return false }
                        if parser.null() { return true }
                        guard let value = parser.string() else { return false }
                        properties[name] = value
                        return true
                    })
                else { return false }
                context.properties = properties
                return true
            }
            if parser.null() { return true }
            guard let value = parser.string() else { return false }
            fields.append((key, value))
            return true
        }
        guard ok else { return nil }
        // Set after `properties`, as the decoder does: another top-level string is a property and wins over `properties`.
        for (key, value) in fields { context.set(key, to: value) }
        return context
    }

    // MARK: JSON

    /// `{ "key": value, … }`, calling `member` after each key with the parser at the value.
    private mutating func object(_ member: (inout RequestLineParser, String) -> Bool) -> Bool {
        skipWhitespace()
        guard consume(0x7B) else { return false }
        skipWhitespace()
        if consume(0x7D) { return true }
        while true {
            skipWhitespace()
            guard let key = string() else { return false }
            skipWhitespace()
            guard consume(0x3A) else { return false }
            skipWhitespace()
            guard member(&self, key) else { return false }
            skipWhitespace()
            if consume(0x2C) { continue }
            return consume(0x7D)
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
            index += 1
        }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func null() -> Bool {
        guard index + 4 <= bytes.count, bytes[index] == 0x6E, bytes[index + 1] == 0x75, bytes[index + 2] == 0x6C,
            bytes[index + 3] == 0x6C
        else { return false }
        index += 4
        return true
    }

    /// A JSON string; `nil` (and the position unspecified) when the next value is not one the fast path takes.
    private mutating func string() -> String? {
        guard consume(0x22) else { return nil }
        let start = index
        // Plain run: no escape, so the bytes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x22 {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == 0x5C { break }
            if byte < 0x20 { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        // With escapes.
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self).unicodeScalars)
        var runStart = index
        func flush(_ parser: RequestLineParser) {
            if runStart < parser.index {
                scalars.append(
                    contentsOf: String(decoding: UnsafeBufferPointer(rebasing: parser.bytes[runStart..<parser.index]), as: UTF8.self)
                        .unicodeScalars)
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x22 {
                flush(self)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { return nil }
            guard byte == 0x5C else {
                index += 1
                continue
            }
            flush(self)
            index += 1
            guard index < bytes.count else { return nil }
            let escape = bytes[index]
            index += 1
            switch escape {
            case 0x22: scalars.append("\"")
            case 0x5C: scalars.append("\\")
            case 0x2F: scalars.append("/")
            case 0x62: scalars.append("\u{08}")
            case 0x66: scalars.append("\u{0C}")
            case 0x6E: scalars.append("\n")
            case 0x72: scalars.append("\r")
            case 0x74: scalars.append("\t")
            case 0x75:
                guard let unit = hex4() else { return nil }
                if (0xD800..<0xDC00).contains(unit) {
                    guard consume(0x5C), consume(0x75), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                    let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    guard let scalar = Unicode.Scalar(value) else { return nil }
                    scalars.append(scalar)
                } else {
                    guard let scalar = Unicode.Scalar(UInt32(unit)) else { return nil }  // a lone low surrogate
                    scalars.append(scalar)
                }
            default:
                return nil
            }
            runStart = index
        }
        return nil
    }

    private mutating func hex4() -> UInt16? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}
