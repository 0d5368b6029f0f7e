import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore

/// `plugboard backup --to FILE`: a verified online copy of the board.
struct Backup: BoardCommand {
    /// With `--server`, the served board's backup is downloaded (board admins).
    static let localOnly: String? = nil
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the board to a file while it is in use, and verify the copy before reporting it.",
        discussion: """
            The copy is taken with SQLite's online backup (hosts, plugboard serve and other commands go on meanwhile), \
            written with mode 0600 to a temporary file and renamed to FILE once its audit chain and state root verify. \
            Secrets stay sealed. The master key, the board key and the plug-in artifacts are kept beside the board, \
            never in it, so they are not in the copy: keep them apart from it.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("The backup file to write (replaced if it exists).", valueName: "file"))
    var to: String

    func validate() throws {
        guard !to.isEmpty else { throw ValidationError("--to needs a file name") }
    }

    /// What `--json` prints.
    struct Report: Encodable {
        let path: String
        let seq: Int64
        let hash: String
        let stateRoot: String?
        let size: Int64
        let time: String
        let notInBackup: [String]
    }

    func execute(_ output: Output) throws(BoardError) {
        let backup: BoardBackup
        let outside: [BoardCompanions.Companion]
        let boardPath: String
        if let client = try global.adminClient() {
            // The server takes and verifies the backup; its digest is checked here before the file is renamed into place.
            let described = try client.downloadBackup(to: to)
            backup = BoardBackup(
                path: to, seq: described.seq, hash: described.hash, stateRoot: described.stateRoot, size: described.size,
                time: described.time)
            outside = described.notInBackup
            boardPath = described.board
        } else {
            let board = try global.openBoard(requireCurrentSchema: false)
            backup = try board.backup(to: to)
            outside = BoardCompanions(board: board.path).present
            boardPath = board.path
        }
        if output.json {
            output.printJSON(
                Report(
                    path: backup.path, seq: backup.seq, hash: backup.hash, stateRoot: backup.stateRoot, size: backup.size,
                    time: backup.time, notInBackup: outside.map(\.path)))
            return
        }
        print(
            "Backed up the board \(boardPath) to \(backup.path) (\(backup.size) bytes): audit log to seq \(backup.seq), state root \(backup.stateRoot ?? "-"), verified."
        )
        for companion in outside {
            print("Not in the backup: \(companion.what) (\(companion.path)); keep a copy of it apart from the backup.")
        }
    }
}

/// `plugboard restore --from FILE`: replaces the board with a verified backup, carrying newer stops forward.
struct Restore: BoardCommand {
    static let localOnly: String? = "a restore replaces the board file on its machine"
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the board with a backup, verified first; newer stops are carried forward and nothing is widened.",
        discussion: """
            The backup must verify (a board, a schema not newer than this binary, its audit chain and state root) \
            before anything is touched, and the restore needs an admin of the board being replaced (of the backup when \
            there is none). Kill switches, yanks, signer revocations and token revocations that the board being \
            replaced has and the backup lacks are made again on the restored board, unless --without-carry-forward is \
            given (the output then names them). Whatever the board being replaced narrows, the restored board narrows \
            too, always: plug-ins disabled there, raised signature policies, admins, owners and maintainers removed, \
            gate flags switched off, and rollouts aborted. Each is audited as restore.carried-forward. The replaced \
            board is kept beside it as BOARD.replaced-TIME; the swap leaves the whole old board or the whole new one \
            at its path whatever step fails. The restore is refused while any process has the board open.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("The backup to restore, made with plugboard backup.", valueName: "file"))
    var from: String

    @Flag(
        name: .long,
        help: "Do not carry kill switches, yanks and revocations forward from the board being replaced (narrowings still are).")
    var withoutCarryForward = false

    func validate() throws {
        guard !from.isEmpty else { throw ValidationError("--from needs a file name") }
    }

    func execute(_ output: Output) throws(BoardError) {
        let result = try Board.restore(from: from, to: global.boardPath, carryForward: !withoutCarryForward, by: try global.actor())
        if output.json {
            output.printJSON(result)
            return
        }
        var lines = ["Restored the board \(result.path) from \(result.from) (its audit log to seq \(result.backupSeq))."]
        if let kept = result.replacedBoardKeptAt { lines.append("The board it replaced is kept at \(kept).") }
        if !result.migrated.isEmpty {
            lines.append(
                "The backup's schema was older than this binary's: applied \(result.migrated.count) migration(s) (\(result.migrated.joined(separator: ", ")))."
            )
        }
        if result.carried.isEmpty {
            lines.append(
                "Carried forward: nothing\(result.carryForwardNote.map { " (\($0))" } ?? " (the backup lacks no stop and widens nothing)")."
            )
        } else {
            lines.append("Carried forward from the replaced board, because the backup lacks them or would widen what it allows:")
            lines.append(Self.table(result.carried))
        }
        if !result.notCarried.isEmpty {
            lines.append("Not carried forward (--without-carry-forward), though the replaced board has them and the backup lacks them:")
            lines.append(Self.table(result.notCarried))
        }
        lines.append("The restored board verifies: audit log to seq \(result.seq), state root \(result.stateRoot ?? "-").")
        lines.append(
            "Hosts that accepted a later state of the board than this backup refuse the restored board (it does not extend their anchor) and keep what they run until their anchor is removed."
        )
        for companion in BoardCompanions(board: result.path).missing {
            lines.append("Not found beside the board: \(companion.what) (\(companion.path)); restore it from where you keep it.")
        }
        print(lines.joined(separator: "\n"))
    }

    /// The stops and narrowings as a table.
    static func table(_ stops: [CarriedStop]) -> String {
        var table = Table("KIND", "TARGET", "MADE AT", "MADE BY", "REASON")
        for stop in stops {
            let target = stop.environment.map { "\(stop.target) in \($0)" } ?? stop.target
            table.add(stop.kind, target, stop.madeAt ?? "-", stop.madeBy ?? "-", stop.reason ?? "-")
        }
        return table.render().trimmingCharacters(in: .newlines)
    }
}
