import ArgumentParser
import Foundation
import PlugboardBoardSecureStorage
import PlugboardModel
import PlugboardOperations
import PlugboardSecureStorage
import PlugboardStore

/// `plugboard init`: a new board, its first admin and its master key.
struct Init: BoardCommand {
    static let localOnly: String? = "it creates a board file"
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create the board, apply migrations, make you its first admin, and set up its master key.",
        discussion: """
            The board file is created with mode 0600 and never overwritten. The master key of its secure storage is \
            $PLUGBOARD_MASTER_KEY when set; otherwise the key file <board>.key is created with mode 0600 (an \
            existing one is used). Back the key file up apart from the board: without it the secrets are lost.
            """)

    @OptionGroup var global: GlobalOptions

    func execute(_ output: Output) throws(BoardError) {
        let actor = try global.actor()
        // The board's own key signs what plugboard serve sends hosts (beside the master key, never in the board).
        let (file, setup, boardKeys) = try BoardFile.initialize(at: global.boardPath, by: actor)
        let board = file.board
        let status = try board.migrationStatus()
        struct MasterKeyResult: Encodable {
            let source: String
            let path: String?
            let variable: String?
            let keyID: String
            let created: Bool
        }
        struct Result: Encodable {
            let board: String
            let boardID: String?
            let admin: String
            let migrations: [String]
            let masterKey: MasterKeyResult?
            let boardKey: String?
        }
        let masterKey = setup.map { setup in
            switch setup.source {
            case .keyFile(let path):
                MasterKeyResult(source: "key_file", path: path, variable: nil, keyID: setup.keyID, created: setup.createdKeyFile)
            case .environment(let variable):
                MasterKeyResult(source: "environment", path: nil, variable: variable, keyID: setup.keyID, created: false)
            case .host: MasterKeyResult(source: "host", path: nil, variable: nil, keyID: setup.keyID, created: false)
            }
        }
        let result = Result(
            board: board.path, boardID: try board.info("board_id"), admin: actor.osUser, migrations: status.applied.map(\.fileName),
            masterKey: masterKey, boardKey: boardKeys?.publicKeys.first)
        if output.json {
            output.printJSON(result)
        } else {
            print("Created the board \(board.path) (schema \(status.applied.last?.fileName ?? "-")); \(actor.osUser) is its admin.")
            if let setup { print(masterKeyNote(setup)) }
            if let key = boardKeys?.publicKeys.first {
                print(
                    "The board's key (it signs what plugboard serve sends hosts) is in \(BoardKeyring.path(forBoard: board.path)); its public key: \(key)"
                )
            }
        }
    }
}
