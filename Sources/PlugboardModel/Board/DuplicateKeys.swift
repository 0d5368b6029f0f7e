public import Foundation

/// Finds a key that appears twice in one object of a JSON document.
///
/// `JSONSerialization` (like most parsers) silently keeps one of two equal keys, and which one differs between
/// parsers: SQLite's `json_extract` may read the other. A manifest or features document with a duplicate key is
/// ambiguous, so it is refused. Keys are compared after their escapes are decoded (`"id"` and `"\u0069d"` are the
/// same key). The scan expects text that a JSON parser has already accepted; it never throws.
public enum DuplicateKeys {
    /// The first key found twice in one object, with where that object is (`$`, `$.metadata`, `$.features[2]`).
    public static func first(in data: Data) -> (key: String, location: String)? {
        var scanner = Scanner(bytes: [UInt8](data))
        return scanner.value()
    }

    private struct Scanner {
        /// A step of the path to the value being scanned.
        enum Step {
            case key(String)
            case position(Int)
        }

        let bytes: [UInt8]
        var index = 0
        /// The path to the value being scanned, made into text only for the answer.
        var path: [Step] = []

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// `$`, `$.metadata`, `$.features[2]`: where the value being scanned is.
        var location: String {
            path.reduce(into: "$") { text, step in
                switch step {
                case .key(let key): text += "." + key
                case .position(let position): text += "[\(position)]"
                }
            }
        }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// Scans one value; returns the first duplicate key inside it.
        mutating func value() -> (key: String, location: String)? {
            skipSpace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var seen: Set<String> = []
                while true {
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: "}") {
                        index += 1
                        return nil
                    }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    guard bytes[index] == UInt8(ascii: "\"") else { return nil }
                    let key = string()
                    if !seen.insert(key).inserted { return (key, location) }
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                    index += 1
                    path.append(.key(key))
                    let found = value()
                    path.removeLast()
                    if let found { return found }
                }
            case UInt8(ascii: "["):
                index += 1
                var position = 0
                while true {
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: "]") {
                        index += 1
                        return nil
                    }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        position += 1
                        continue
                    }
                    path.append(.position(position))
                    let found = value()
                    path.removeLast()
                    if let found { return found }
                }
            case UInt8(ascii: "\""):
                skipString()
                return nil
            default:
                // A number, true, false or null: up to the next delimiter.
                while index < bytes.count, !",}] \t\r\n".utf8.contains(bytes[index]) { index += 1 }
                return nil
            }
        }

        /// Moves past a string that is not a key, starting at its opening quote.
        mutating func skipString() {
            index += 1
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            index += 1
        }

        /// Scans a string starting at its opening quote and returns its decoded text.
        mutating func string() -> String {
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") { index += 1 }
            if index >= bytes.count || bytes[index] == UInt8(ascii: "\"") {
                // No escape: the bytes are the text.
                defer { index += 1 }
                return String(decoding: bytes[start..<min(index, bytes.count)], as: UTF8.self)
            }
            index = start
            var units: [UInt16] = []
            var raw: [UInt8] = []
            func flushRaw() {
                units.append(contentsOf: String(decoding: raw, as: UTF8.self).utf16)
                raw.removeAll()
            }
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                guard bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count else {
                    raw.append(bytes[index])
                    index += 1
                    continue
                }
                flushRaw()
                let escape = bytes[index + 1]
                index += 2
                switch escape {
                case UInt8(ascii: "b"): units.append(0x08)
                case UInt8(ascii: "f"): units.append(0x0C)
                case UInt8(ascii: "n"): units.append(0x0A)
                case UInt8(ascii: "r"): units.append(0x0D)
                case UInt8(ascii: "t"): units.append(0x09)
                case UInt8(ascii: "u"):
                    let end = min(index + 4, bytes.count)
                    units.append(UInt16(String(decoding: bytes[index..<end], as: UTF8.self), radix: 16) ?? 0xFFFD)
                    index = end
                default: units.append(UInt16(escape))
                }
            }
            flushRaw()
            index += 1
            return String(decoding: units, as: UTF16.self)
        }
    }
}
