import ArgumentParser
import Foundation
import PlugboardStore

struct AuditCommand: BoardCommand {
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
    }

    func execute(_ output: Output) throws(BoardError) {
        let query = AuditQuery(
            since: try since.map { text throws(BoardError) in try parseSince(text) }, actor: actor, target: target, limit: limit)
        let records = try global.openBoard().auditRecords(query)
        if output.json {
            // JSON Lines: one record a line, oldest first.
            for record in records { print(Output.jsonText(record, pretty: false)) }
            return
        }
        var table = Table("SEQ", "AT", "ACTOR", "ACTION", "OUTCOME", "TARGET", "ENV", "REASON")
        for record in records {
            let who = record.onBehalfOf.map { "\(record.actor) (for \($0))" } ?? record.actor
            table.add(
                String(record.seq), record.at, who, record.action, record.outcome,
                record.targetID.map { "\(record.targetType):\($0)" } ?? record.targetType, record.environment.cell, record.reason.cell)
        }
        table.print(empty: "No audit rows match.")
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

    struct Verify: BoardCommand {
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

        func execute(_ output: Output) throws(BoardError) {
            let expected = try checkpoint.map { text throws(BoardError) in try AuditCheckpoint(parsing: text) }
            let board = try global.openBoard()
            let result = try board.verifyAudit(checkpoint: expected)
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

    struct Checkpoint: BoardCommand {
        static let configuration = CommandConfiguration(
            commandName: "checkpoint",
            abstract: "Print the head of the audit chain and the state root (SEQ:HASH:ROOT) to keep somewhere else.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            guard let head = try global.openBoard().auditCheckpoint() else {
                throw BoardError(.notFound, "the audit log is empty")
            }
            if output.json { output.printJSON(head) } else { print(head.description) }
        }
    }
}
