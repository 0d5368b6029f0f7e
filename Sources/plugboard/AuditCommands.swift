import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardFlags
import PlugboardModel
import PlugboardStore

struct AuditCommand: RemoteCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Show the audit log; verify its hash chain; print its checkpoint.",
        subcommands: [Verify.self, Checkpoint.self])

    @OptionGroup var global: GlobalOptions
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Only rows at or after this time: ISO-8601 (2026-11-21, 2026-11-21T18:00:00Z) or an age such as 30m, 12h, 7d.",
            valueName: "time"))
    var since: String?
    @Option(name: .long, help: "Only rows whose OS user or declared principal is this name.") var actor: String?
    @Option(name: .long, help: "Only rows about this target id (a plug-in id also matches its versions).") var target: String?
    @Option(name: .long, help: "At most this many rows (the newest).") var limit: Int?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        try checkArguments { () throws(BoardError) in if let since { _ = try parseSince(since) } }
    }

    func execute(_ output: Output) throws(BoardError) {
        let sinceTime = try since.map { text throws(BoardError) in try parseSince(text) }
        if global.serverURL != nil {
            try executeRemotely(output, since: sinceTime)
            return
        }
        let query = AuditQuery(since: sinceTime, by: actor, target: target, limit: limit)
        let board = try global.openBoard()
        // Streamed whatever the log's length: one row in memory at a time, the output written in blocks.
        var blocks = OutputBlocks()
        if output.json {
            // JSON Lines: one record a line, oldest first.
            try board.readAuditLog { log in
                try log.forEach(query) { record in
                    Self.appendJSONLine(record, to: &blocks.text)
                    blocks.flushIfFull()
                }
            }
            blocks.flush()
            return
        }
        // A table: its columns' widths from the rows, then the rows. Up to `bufferedRows` rows are kept from the first
        // pass; a longer listing reads the log a second time (in the same read of the board) instead of holding it.
        let headers = Self.headers
        let found = try board.readAuditLog { log in
            var widths = headers.map(\.count)
            var kept: [[String]] = []
            var count = 0
            try log.forEach(query) { record in
                let cells = Self.cells(record)
                Table.widen(&widths, toFit: cells)
                count += 1
                if count <= Self.bufferedRows {
                    kept.append(cells)
                } else if !kept.isEmpty {
                    kept = []
                }
            }
            guard count > 0 else { return false }
            func append(_ cells: [String]) {
                Table.appendLine(cells, widths: widths, to: &blocks.text)
                blocks.text.append("\n")
                blocks.flushIfFull()
            }
            append(headers)
            if count <= Self.bufferedRows {
                kept.forEach(append)
            } else {
                try log.forEach(query) { append(Self.cells($0)) }
            }
            return true
        }
        guard found else {
            print("No audit rows match.")
            return
        }
        blocks.flush()
    }

    /// The rows from the served board, a page at a time, printed as ``execute(_:)`` prints the board file's.
    func executeRemotely(_ output: Output, since: String?) throws(BoardError) {
        var records: [AuditRecord] = []
        var after: Int64?
        repeat {
            let page = try global.perform(BoardRequests.Audit(since: since, actor: actor, target: target, limit: limit, after: after))
            records += page.records
            after = page.nextAfter
        } while after != nil
        var blocks = OutputBlocks()
        if output.json {
            for record in records {
                Self.appendJSONLine(record, to: &blocks.text)
                blocks.flushIfFull()
            }
            blocks.flush()
            return
        }
        guard !records.isEmpty else {
            print("No audit rows match.")
            return
        }
        let headers = Self.headers
        let rows = records.map(Self.cells)
        var widths = headers.map(\.count)
        for row in rows { Table.widen(&widths, toFit: row) }
        for row in [headers] + rows {
            Table.appendLine(row, widths: widths, to: &blocks.text)
            blocks.text.append("\n")
            blocks.flushIfFull()
        }
        blocks.flush()
    }

    /// The columns of the table of rows.
    static let headers = ["SEQ", "AT", "ACTOR", "ACTION", "OUTCOME", "TARGET", "ENV", "REASON"]

    /// How many rows of a table are kept from the pass that measures its columns (a few MB at most); a longer
    /// listing reads the log again to print them.
    static let bufferedRows = 10_000

    /// Appends `record` as one line of JSON: what `JSONEncoder` makes of it with the CLI's settings (snake_case keys,
    /// sorted; absent values left out), written directly (the encoder took 10 µs a row, most of a million-row listing).
    static func appendJSONLine(_ record: AuditRecord, to out: inout String) {
        var first = true
        func field(_ key: String, _ value: String?) {
            guard let value else { return }
            out.append(first ? "{\"" : ",\"")
            first = false
            out.append(key)
            out.append("\":")
            BatchEvaluator.appendJSONString(value, to: &out)
        }
        field("action", record.action)
        field("actor", record.by)
        field("after_json", record.afterJSON)
        field("at", record.at)
        field("before_json", record.beforeJSON)
        field("environment", record.environment)
        field("hash", record.hash)
        field("on_behalf_of", record.onBehalfOf)
        field("outcome", record.outcome)
        field("prev_hash", record.prevHash)
        field("reason", record.reason)
        out.append(",\"seq\":")
        out.append(String(record.seq))
        field("state_changes", record.stateChanges)
        field("state_root", record.stateRoot)
        field("target_id", record.targetID)
        field("target_type", record.targetType)
        field("via", record.via)
        out.append("}\n")
    }

    /// A row's cells in the table, escaped.
    static func cells(_ record: AuditRecord) -> [String] {
        var who = record.onBehalfOf.map { "\(record.by) (for \($0))" } ?? record.by
        if let via = record.via { who += " via \(via)" }
        return [
            String(record.seq), record.at, who, record.action, record.outcome,
            record.targetID.map { "\(record.targetType):\($0)" } ?? record.targetType, record.environment.cell, record.reason.cell,
        ].map(Validate.escaped)
    }

    /// Turns `--since` into an ISO-8601 UTC time.
    func parseSince(_ text: String) throws(BoardError) -> String {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        if let unit = text.last, let seconds = units[unit], let amount = Double(text.dropLast()), amount >= 0 {
            return Timestamp.format(Date().addingTimeInterval(-amount * seconds))
        }
        if let date = Timestamp.parse(text) { return Timestamp.format(date) }
        throw BoardError(
            .invalidInput,
            "--since '\(text)' is not a time: use ISO-8601 (2026-11-21 or 2026-11-21T18:00:00Z) or an age such as 30m, 12h, 7d")
    }

    struct Verify: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract:
                "Recompute the hash chain and compare every row of policy with the digests the log recorded; exit 1 naming what differs.",
            discussion:
                "Names every row added, changed or removed behind the CLI's back. With --checkpoint SEQ:HASH:ROOT (from plugboard audit checkpoint, kept elsewhere) a truncated or rewritten log and state are detected too."
        )
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: ArgumentHelp("A checkpoint printed earlier by plugboard audit checkpoint.", valueName: "seq:hash:root"))
        var checkpoint: String?

        func validate() throws {
            try checkArguments { () throws(BoardError) in if let checkpoint { _ = try AuditCheckpoint(parsing: checkpoint) } }
        }

        func execute(_ output: Output) throws(BoardError) {
            let expected = try checkpoint.map { text throws(BoardError) in try AuditCheckpoint(parsing: text) }
            let result = try global.perform(BoardRequests.Verify(checkpoint: checkpoint))
            if output.json { output.printJSON(result) }
            guard result.ok else {
                // The first line is the error; further problems follow as notes.
                throw BoardError(
                    .integrity,
                    (["audit log verification failed: \(result.problems[0])"] + result.problems.dropFirst()).joined(separator: "\n"))
            }
            if !output.json {
                let state =
                    result.stateRoot.map { "; the board's \(result.stateRowsChecked) rows of policy match it (state root \($0))" } ?? ""
                print(
                    "The audit log is intact: \(result.rowsChecked) rows, head \(result.head?.description ?? "-")\(expected.map { ", checkpoint \($0.seq) matches" } ?? "")\(state)."
                )
            }
        }
    }

    struct Checkpoint: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "checkpoint",
            abstract: "Print the head of the audit chain and the state root (SEQ:HASH:ROOT) to keep somewhere else.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let head = try global.perform(BoardRequests.Checkpoint())
            if output.json { output.printJSON(head) } else { print(head.description) }
        }
    }
}
