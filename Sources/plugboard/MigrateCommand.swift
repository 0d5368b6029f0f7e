import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// `plugboard migrate`: apply pending schema migrations or show their status.
struct Migrate: BoardCommand {
    static let localOnly: String? = "it upgrades the board file itself"
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply pending migrations, or show applied and pending ones with --status.")

    @OptionGroup var global: GlobalOptions

    @Flag(name: .long, help: "Show applied and pending migrations without changing anything.")
    var status = false

    func execute(_ output: Output) throws(BoardError) {
        let board = try global.openBoard(requireCurrentSchema: false)
        if status {
            let state = try board.migrationStatus()
            if output.json {
                output.printJSON(state)
                return
            }
            var table = Table("VERSION", "FILE", "STATE", "APPLIED AT", "APPLIED BY")
            for info in state.applied {
                let edited = state.edited.contains(info)
                let unknown = state.unknown.contains(info)
                table.add(
                    String(format: "%04d", info.version), info.fileName, unknown ? "unknown (newer)" : edited ? "EDITED" : "applied",
                    info.appliedAt.cell, info.appliedBy.cell)
            }
            for info in state.pending { table.add(String(format: "%04d", info.version), info.fileName, "pending", "-", "-") }
            table.print(empty: "No migrations.")
            try state.checkCompatible()
            return
        }
        let applied = try board.migrate(by: try global.actor())
        if output.json {
            output.printJSON(["applied": applied.map(\.fileName)])
        } else if applied.isEmpty {
            print("The board is up to date; nothing to apply.")
        } else {
            print("Applied \(applied.count) migration(s): \(applied.map(\.fileName).joined(separator: ", ")).")
        }
    }
}
