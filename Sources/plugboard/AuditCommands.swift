import ArgumentParser
import Foundation
import PlugboardFlags
import PlugboardModel
import PlugboardOperations
import PlugboardStore

struct AuditCommand: RemoteCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Show the audit log; verify its hash chain; print its checkpoint.",
        subcommands: [Verify.self] + commands([BoardOperations.Checkpoint.self]))

    @OptionGroup var global: GlobalOptions
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Only rows at or after this time: ISO-8601 (2026-11-21, 2026-11-21T18:00:00Z) or an age such as 30m, 12h, 7d.",
            valueName: "time"))
    var since: String?
    @Option(name: .long, help: "Only rows whose OS user or declared principal is this name.") var actor: String?
    @Option(name: .long, help: "Only rows about this target id (a plug-in id also matches its versions).") var target: String?
    @Option(name: .long, help: "Only rows of this action (plugin.kill).") var action: String?
    @Option(name: .long, help: "At most this many rows (the newest).") var limit: Int?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        try checkArguments { () throws(BoardError) in if let since { _ = try parseSince(since) } }
    }

    func execute(_ output: Output) throws(BoardError) {
        let sinceTime = try since.map { text throws(BoardError) in try parseSince(text) }
        var listing = AuditListing(json: output.json)
        if global.serverURL != nil {
            // The served board's rows, a page at a time; a long table reads them again rather than hold them.
            let request = BoardOperations.Audit(since: sinceTime, actor: actor, target: target, action: action, limit: limit, after: nil)
            try forEachServedRow(request) { listing.add($0) }
            if listing.needsSecondReading, let first = listing.first, let last = listing.last {
                let again = BoardOperations.Audit(
                    since: sinceTime, actor: actor, target: target, action: action, limit: nil, after: first - 1)
                listing.startTable()
                try forEachServedRow(again, through: last) { listing.addAgain($0) }
            }
            listing.finish()
            return
        }
        var query = AuditQuery(since: sinceTime, by: actor, target: target, limit: limit)
        query.action = action
        let board = try global.openBoard()
        // Streamed whatever the log's length, in one read of the board: one row in memory at a time, the output
        // written in blocks.
        try board.readAuditLog { log in
            try log.forEach(query) { listing.add($0) }
            if listing.needsSecondReading {
                listing.startTable()
                try log.forEach(query) { listing.addAgain($0) }
            }
        }
        listing.finish()
    }

    /// Calls `body` with each row the served board answers `request` with, oldest first, a page at a time; with
    /// `last`, only rows up to that sequence number.
    func forEachServedRow(
        _ request: BoardOperations.Audit, through last: Int64? = nil, _ body: (AuditRecord) -> Void
    ) throws(BoardError) {
        var request = request
        repeat {
            let page = try global.perform(request)
            for record in page.records {
                if let last, record.seq > last { return }
                body(record)
            }
            request.after = page.nextAfter
        } while request.after != nil
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

    /// `audit verify`: exits 1 naming what differs when the log is not intact.
    struct Verify: RemoteCommand {
        static let configuration = declared(BoardOperations.Verify.self)
        @OptionGroup var global: GlobalOptions
        @OptionGroup var operation: BoardOperations.Verify

        func execute(_ output: Output) throws(BoardError) {
            let result = try global.perform(operation)
            if output.json { output.printJSON(result) }
            guard result.ok else {
                // The first line is the error; further problems follow as notes.
                throw BoardError(
                    .integrity,
                    (["audit log verification failed: \(result.problems[0])"] + result.problems.dropFirst()).joined(separator: "\n"))
            }
            if !output.json, let text = operation.text(for: result) { print(text) }
        }
    }
}

/// The rows `plugboard audit` prints, as JSON Lines or a table, holding at most ``AuditCommand/bufferedRows`` of them:
/// a table's columns are measured on a first reading of the rows; a longer listing reads them a second time to print
/// them.
struct AuditListing {
    let json: Bool
    private var blocks = OutputBlocks()
    private var widths = AuditCommand.headers.map(\.count)
    private var kept: [[String]] = []
    private var count = 0
    /// The sequence numbers of the first and the last row read.
    private(set) var first: Int64?
    private(set) var last: Int64?

    init(json: Bool) { self.json = json }

    /// A row of the first reading: written as a JSON line, or measured (and kept while few).
    mutating func add(_ record: AuditRecord) {
        count += 1
        if first == nil { first = record.seq }
        last = record.seq
        if json {
            AuditCommand.appendJSONLine(record, to: &blocks.text)
            blocks.flushIfFull()
            return
        }
        let cells = AuditCommand.cells(record)
        Table.widen(&widths, toFit: cells)
        if count <= AuditCommand.bufferedRows {
            kept.append(cells)
        } else if !kept.isEmpty {
            kept = []
        }
    }

    /// Whether the table has more rows than were kept: they are read again, after ``startTable()``, with
    /// ``addAgain(_:)``.
    var needsSecondReading: Bool { !json && count > AuditCommand.bufferedRows }

    /// Writes the header line, and the rows kept.
    mutating func startTable() {
        append(AuditCommand.headers)
        kept.forEach { append($0) }
        kept = []
    }

    /// A row of the second reading, written.
    mutating func addAgain(_ record: AuditRecord) { append(AuditCommand.cells(record)) }

    /// Writes what is left; a table of no row is a sentence.
    mutating func finish() {
        if !json, count == 0 {
            print("No audit rows match.")
            return
        }
        if !json, !needsSecondReading { startTable() }
        blocks.flush()
    }

    private mutating func append(_ cells: [String]) {
        Table.appendLine(cells, widths: widths, to: &blocks.text)
        blocks.text.append("\n")
        blocks.flushIfFull()
    }
}
