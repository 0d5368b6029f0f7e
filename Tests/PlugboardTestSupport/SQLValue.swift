public import Foundation

/// A value of one of SQLite's five storage classes: an argument of ``BoardSQL``'s SQL, or a value of a row it read.
///
/// String and integer literals are text and integer values: `file.execute("UPDATE t SET a = ? WHERE b = ?", 1, "x")`.
public enum SQLValue: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }

    /// The text, or nil when the value is not text.
    public var string: String? {
        if case .text(let text) = self { text } else { nil }
    }

    /// The integer, or nil when the value is not an integer.
    public var int64: Int64? {
        if case .integer(let integer) = self { integer } else { nil }
    }

    /// The integer, or nil when the value is not an integer.
    public var int: Int? { int64.map(Int.init) }

    /// The bytes, or nil when the value is not a blob.
    public var data: Data? {
        if case .blob(let data) = self { data } else { nil }
    }

    /// Whether the value is NULL.
    public var isNull: Bool { self == .null }

    /// The value as an SQL literal that SQLite reads back as the same value: text in single quotes (each `'` doubled;
    /// text that holds a NUL byte as `CAST(X'…' AS TEXT)`), a blob as `X'…'`, an infinite real as `±9e999`, NaN as
    /// `NULL` (SQLite stores no NaN).
    public var literal: String {
        switch self {
        case .null: return "NULL"
        case .integer(let integer): return "\(integer)"
        case .real(let real):
            if real.isNaN { return "NULL" }
            if real.isInfinite { return real < 0 ? "-9e999" : "9e999" }
            return "\(real)"
        case .text(let text):
            if text.utf8.contains(0) { return "CAST(\(SQLValue.blob(Data(text.utf8)).literal) AS TEXT)" }
            return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data):
            return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }

    /// The SQL literal (``literal``).
    public var description: String { literal }
}

/// What `sqlite3` prints in its `quote` output mode, read back into values; and SQL with arguments put in its
/// placeholders.
enum QuotedOutput {
    /// Output that is not what `sqlite3 -quote` prints.
    struct Malformed: Error, CustomStringConvertible {
        let offset: Int
        var description: String { "unexpected output from sqlite3 at byte \(offset)" }
    }

    /// The column names (the header line) and the rows of one statement's output in `quote` mode with headers.
    ///
    /// A line is values separated by commas: `NULL`, a number (`Inf` and `-Inf` for infinite reals), text in single
    /// quotes with each `'` doubled and its newlines as they are, or a blob as `X'…'`. A statement that returned no
    /// rows prints nothing, not even its header.
    static func parse(_ output: Data) throws -> (columns: [String], rows: [[SQLValue]]) {
        let bytes = [UInt8](output)
        var index = 0
        func malformed() -> Malformed { Malformed(offset: index) }
        func quoted() throws -> [UInt8] {
            // At the opening quote: the bytes up to the closing one, doubled quotes made single.
            var text: [UInt8] = []
            index += 1
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "'") {
                    if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "'") {
                        text.append(UInt8(ascii: "'"))
                        index += 2
                        continue
                    }
                    index += 1
                    return text
                }
                text.append(bytes[index])
                index += 1
            }
            throw malformed()
        }
        func value() throws -> SQLValue {
            guard index < bytes.count else { throw malformed() }
            if bytes[index] == UInt8(ascii: "'") { return .text(String(decoding: try quoted(), as: UTF8.self)) }
            if bytes[index] == UInt8(ascii: "X"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "'") {
                index += 1
                let hex = try quoted()
                guard hex.count % 2 == 0 else { throw malformed() }
                var data = Data(capacity: hex.count / 2)
                for pair in stride(from: 0, to: hex.count, by: 2) {
                    guard let byte = UInt8(String(decoding: hex[pair..<pair + 2], as: UTF8.self), radix: 16) else { throw malformed() }
                    data.append(byte)
                }
                return .blob(data)
            }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "\n") { index += 1 }
            let token = String(decoding: bytes[start..<index], as: UTF8.self)
            switch token {
            case "NULL": return .null
            case "Inf": return .real(.infinity)
            case "-Inf": return .real(-.infinity)
            default:
                if let integer = Int64(token) { return .integer(integer) }
                if let real = Double(token), real.isFinite { return .real(real) }
                throw malformed()
            }
        }
        var lines: [[SQLValue]] = []
        while index < bytes.count {
            var line = [try value()]
            while index < bytes.count, bytes[index] == UInt8(ascii: ",") {
                index += 1
                line.append(try value())
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\n") else { throw malformed() }
            index += 1
            lines.append(line)
        }
        guard let header = lines.first else { return ([], []) }
        let columns = try header.map { column in
            guard let name = column.string else { throw Malformed(offset: 0) }
            return name
        }
        guard lines.allSatisfy({ $0.count == columns.count }) else { throw Malformed(offset: 0) }
        return (columns, Array(lines.dropFirst()))
    }

    /// Arguments given for placeholders that `sql` does not hold, or placeholders without an argument.
    struct ArgumentMismatch: Error, CustomStringConvertible {
        let description: String
    }

    /// `sql` with each placeholder replaced by the literal of its argument (``SQLValue/literal``): `?NNN` takes
    /// argument NNN (from 1), `?` the one after the highest taken so far, as SQLite numbers them. Placeholders inside
    /// string literals, quoted identifiers and comments are left alone. Every argument must be used.
    static func bind(_ sql: String, _ arguments: [SQLValue]) throws -> String {
        let bytes = [UInt8](sql.utf8)
        var result: [UInt8] = []
        var index = 0
        var highest = 0
        var used = Set<Int>()
        /// Copies up to and including `close`, or to the end of the SQL.
        func copy(through close: [UInt8], from start: Int) {
            var end = start
            while end < bytes.count, !bytes[end...].starts(with: close) { end += 1 }
            end = min(bytes.count, end + close.count)
            result += bytes[index..<end]
            index = end
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                // A doubled quote inside is two quoted parts in a row: copying each in turn gives the same text.
                copy(through: [byte], from: index + 1)
            case UInt8(ascii: "["):
                copy(through: [UInt8(ascii: "]")], from: index + 1)
            case UInt8(ascii: "-") where bytes[index...].starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]):
                copy(through: [UInt8(ascii: "\n")], from: index + 2)
            case UInt8(ascii: "/") where bytes[index...].starts(with: [UInt8(ascii: "/"), UInt8(ascii: "*")]):
                copy(through: [UInt8(ascii: "*"), UInt8(ascii: "/")], from: index + 2)
            case UInt8(ascii: "?"):
                var end = index + 1
                while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
                let number = end > index + 1 ? Int(String(decoding: bytes[index + 1..<end], as: UTF8.self)) ?? 0 : highest + 1
                guard number >= 1, number <= arguments.count else {
                    throw ArgumentMismatch(description: "placeholder \(number) without an argument (\(arguments.count) given) in: \(sql)")
                }
                highest = max(highest, number)
                used.insert(number)
                result += Array(arguments[number - 1].literal.utf8)
                index = end
            default:
                result.append(byte)
                index += 1
            }
        }
        guard used.count == arguments.count else {
            throw ArgumentMismatch(description: "\(arguments.count) arguments for \(used.count) placeholders in: \(sql)")
        }
        return String(decoding: result, as: UTF8.self)
    }
}
