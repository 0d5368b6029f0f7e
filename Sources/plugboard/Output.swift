import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// Writes command results as aligned text tables or as one JSON document, and errors as one sentence on stderr.
struct Output {
    let json: Bool

    /// Prints `value` as pretty JSON with snake_case keys (``OperationJSON``, the wire's format too).
    func printJSON(_ value: some Encodable) {
        print(OperationJSON.text(value))
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
