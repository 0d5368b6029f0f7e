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
        return scanner.value(at: "$")
    }

    private struct Scanner {
        package let bytes: [UInt8]
        package var index = 0

        package init(bytes: [UInt8]) { self.bytes = bytes }

        package mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        /// Scans one value; returns the first duplicate key inside it.
        package mutating func value(at location: String) -> (key: String, location: String)? {
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
                    if let found = value(at: location + "." + key) { return found }
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
                    if let found = value(at: "\(location)[\(position)]") { return found }
                }
            case UInt8(ascii: "\""):
                _ = string()
                return nil
            default:
                // A number, true, false or null: up to the next delimiter.
                while index < bytes.count, !",}] \t\r\n".utf8.contains(bytes[index]) { index += 1 }
                return nil
            }
        }

        /// Scans a string starting at its opening quote and returns its decoded text.
        package mutating func string() -> String {
            index += 1
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
