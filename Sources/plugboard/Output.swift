import Foundation
import PlugboardModel
import PlugboardStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes command results as aligned text tables or as one JSON document, and errors as one sentence on stderr.
struct Output {
    let json: Bool

    /// Prints `value` as pretty JSON with snake_case keys.
    func printJSON(_ value: some Encodable) {
        print(Self.jsonText(value))
    }

    static func jsonText(_ value: some Encodable, pretty: Bool = true) -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) else { return "null" }
        return text
    }

    /// Prints the outcome of a change: text, or JSON `{changed, message, notes}`.
    func report(_ result: ChangeResult) {
        if json {
            printJSON(result)
        } else {
            print(multiline(result.message))
            for note in result.notes { print("note: \(multiline(note))") }
        }
    }

    /// Prints an error as `error: <sentence>` on stderr; further lines of the message follow as `note:` lines. Each
    /// line is escaped (``Validate/escaped(_:)``): a message may carry what a file or a server holds.
    func fail(_ error: BoardError) {
        let lines = error.message.split(separator: "\n", omittingEmptySubsequences: true).map { Validate.escaped(String($0)) }
        Self.printError(lines.first ?? "failed")
        for line in lines.dropFirst() { FileHandle.standardError.write(Data("note: \(line)\n".utf8)) }
    }

    static func printError(_ message: String) {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    }

    static func printWarning(_ message: String) {
        FileHandle.standardError.write(Data("warning: \(message)\n".utf8))
    }
}

/// A text table with aligned columns: a header row, then rows, two spaces between columns.
///
/// Cells are escaped as they are added (``Validate/escaped(_:)``): a newline shows as `\n`, an escape sequence or a
/// right-to-left override as `\u{…}`, so that one row stays one line and shows what the board holds.
struct Table {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: String...) { self.headers = headers }

    mutating func add(_ cells: String...) { rows.append(cells.map(Validate.escaped)) }

    func render() -> String {
        var widths = headers.map(\.count)
        for row in rows { Self.widen(&widths, toFit: row) }
        var text = ""
        text.reserveCapacity((rows.count + 1) * (widths.reduce(0, +) + 2 * widths.count + 1))
        Self.appendLine(headers, widths: widths, to: &text)
        for row in rows {
            text.append("\n")
            Self.appendLine(row, widths: widths, to: &text)
        }
        return text
    }

    /// Widens `widths` so that every cell of `row` (escaped) fits its column.
    static func widen(_ widths: inout [Int], toFit row: [String]) {
        for (index, cell) in row.enumerated() where index < widths.count {
            widths[index] = max(widths[index], cell.count)
        }
    }

    /// Appends one row (escaped cells), each column padded to its width but the last, without a newline.
    ///
    /// Padded by characters, appended to one string (Foundation's padding(toLength:) cost a third of a 10,000-row
    /// `plugin list`).
    static func appendLine(_ row: [String], widths: [Int], to text: inout String) {
        for (index, cell) in row.enumerated() {
            if index > 0 { text.append("  ") }
            text.append(cell)
            if index < row.count - 1, index < widths.count {
                let missing = widths[index] - cell.count
                if missing > 0 { text.append(String(repeating: " ", count: missing)) }
            }
        }
    }

    func print(empty: String) {
        Swift.print(rows.isEmpty ? empty : render())
    }
}

/// Standard output gathered in blocks: a command that prints a row at a time writes 64 KiB at a time, and holds no
/// more than one block whatever the output's length.
struct OutputBlocks {
    /// How much output is gathered before it is written.
    static let size = 64 << 10

    /// What is gathered and not yet written.
    var text = ""

    init(reserving extra: Int = 0) { text.reserveCapacity(Self.size + extra) }

    /// Writes the block once it is full.
    mutating func flushIfFull() {
        if text.utf8.count >= Self.size { flush() }
    }

    /// Writes what is gathered.
    mutating func flush() {
        guard !text.isEmpty else { return }
        FileHandle.standardOutput.write(Data(text.utf8))
        text.removeAll(keepingCapacity: true)
    }
}

/// Free text that may span lines (a description), each line escaped as ``Validate/escaped(_:)`` does.
func multiline(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { Validate.escaped(String($0)) }.joined(separator: "\n")
}

extension Optional where Wrapped == String {
    /// The value, or `-` for none, for table cells.
    var cell: String { self ?? "-" }
}

extension Bool {
    var yesNo: String { self ? "yes" : "no" }
}
