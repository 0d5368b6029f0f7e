import PlugboardModel

/// A text table with aligned columns: a header row, then rows, two spaces between columns.
///
/// Cells are escaped as they are added (``Validate/escaped(_:)``): a newline shows as `\n`, an escape sequence or a
/// right-to-left override as `\u{…}`, so that one row stays one line and shows what the board holds.
package struct Table {
    package var headers: [String]
    package var rows: [[String]] = []

    /// A table with these column headers and no row yet.
    package init(_ headers: String...) { self.headers = headers }

    /// A table with these column headers and no row yet.
    package init(headers: [String]) { self.headers = headers }

    /// Adds a row; each cell is escaped.
    package mutating func add(_ cells: String...) { rows.append(cells.map(Validate.escaped)) }

    /// The table as text: the header line, then one line per row, without a final newline.
    package func render() -> String {
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
    package static func widen(_ widths: inout [Int], toFit row: [String]) {
        for (index, cell) in row.enumerated() where index < widths.count {
            widths[index] = max(widths[index], cell.count)
        }
    }

    /// Appends one row (escaped cells), each column padded to its width but the last, without a newline.
    ///
    /// Padded by characters, appended to one string (Foundation's padding(toLength:) cost a third of a 10,000-row
    /// `plugin list`).
    package static func appendLine(_ row: [String], widths: [Int], to text: inout String) {
        for (index, cell) in row.enumerated() {
            if index > 0 { text.append("  ") }
            text.append(cell)
            if index < row.count - 1, index < widths.count {
                let missing = widths[index] - cell.count
                if missing > 0 { text.append(String(repeating: " ", count: missing)) }
            }
        }
    }

    /// The table as text, or `empty` when it has no row.
    package func text(empty: String) -> String {
        rows.isEmpty ? empty : render()
    }

    /// Prints the table, or `empty` when it has no row.
    package func print(empty: String) {
        Swift.print(text(empty: empty))
    }
}

extension Optional where Wrapped == String {
    /// The value, or `-` for none, for table cells.
    package var cell: String { self ?? "-" }
}

extension Bool {
    /// `yes` or `no`, for table cells.
    package var yesNo: String { self ? "yes" : "no" }
}

extension Table {
    /// `items` as a table with these column headers, a row of cells each, or `empty` when there is none.
    package static func listing<Item>(_ items: [Item], _ headers: String..., empty: String, row: (Item) -> [String]) -> String {
        var table = Table(headers: headers)
        for item in items { table.rows.append(row(item).map(Validate.escaped)) }
        return table.text(empty: empty)
    }

    /// `AT by WHO`, or `otherwise` when it never happened: when and by whom a row was set.
    package static func when(_ at: String?, by who: String?, otherwise: String) -> String {
        at.map { "\($0) by \(who ?? "?")" } ?? otherwise
    }

    /// `revoked AT by WHO: REASON`, or `otherwise` when it was never revoked: a key's state.
    package static func revocation(_ at: String?, by who: String?, _ reason: String?, otherwise: String) -> String {
        at.map { "revoked \($0) by \(who ?? "?"): \(reason ?? "")" } ?? otherwise
    }
}
