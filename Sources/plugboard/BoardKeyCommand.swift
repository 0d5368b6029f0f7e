import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardStore

/// `plugboard board-key …`: the board's own Ed25519 keys, with which `plugboard serve` signs host snapshots.
struct BoardKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "board-key",
        abstract: "Show or rotate the board's own key, which signs the snapshots served to remote hosts.",
        discussion: """
            The keys live in <board>.board-key (mode 0600, beside the master key, never in the board); plugboard init
            makes the first one, and plugboard serve makes one for a board that has none. Give hosts the public key
            (HostConfiguration boardKeys:, or --board-key): they load nothing from a snapshot or cache it did not sign.
            """,
        subcommands: [Show.self, Rotate.self, Retire.self])

    struct Show: BoardKeyFileCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Print the board's public keys (the current one first) and their key ids.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            guard let keyring = try BoardKeyring.load(boardPath: global.boardPath) else {
                throw BoardError(
                    .notFound,
                    "\(BoardKeyring.path(forBoard: global.boardPath)) does not exist; plugboard board-key rotate makes it (plugboard serve makes it too)"
                )
            }
            BoardKeyCommand.print(keyring, output)
        }
    }

    struct Rotate: BoardKeyFileCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate", abstract: "Make a new current key; the previous one keeps signing until plugboard board-key retire.",
            discussion: """
                Restart plugboard serve to sign with the new key. Hosts that know the previous key learn the new one from
                the snapshots both keys sign; once every host has read one, retire the previous key.
                """)
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let current = try BoardKeyring.load(boardPath: global.boardPath)
            let keyring = BoardKeyring(keys: BoardKeyring.generate().keys + (current?.keys.prefix(1) ?? []))
            try keyring.save(boardPath: global.boardPath)
            BoardKeyCommand.print(keyring, output)
        }
    }

    struct Retire: BoardKeyFileCommand {
        static let configuration = CommandConfiguration(
            commandName: "retire", abstract: "Drop the previous key after a rotation: snapshots are signed by the current key alone.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            guard let keyring = try BoardKeyring.load(boardPath: global.boardPath), keyring.keys.count > 1 else {
                throw BoardError(.notFound, "the board has no previous key to retire (plugboard board-key show)")
            }
            let current = BoardKeyring(keys: Array(keyring.keys.prefix(1)))
            try current.save(boardPath: global.boardPath)
            BoardKeyCommand.print(current, output)
        }
    }

    /// The keys, as text or `--json` (`{"path", "keys": [{"keyID", "publicKey"}]}`).
    static func print(_ keyring: BoardKeyring, _ output: Output) {
        struct Key: Encodable {
            let keyID: String
            let publicKey: String
        }
        struct Result: Encodable {
            let keys: [Key]
        }
        let keys = zip(keyring.keyIDs, keyring.publicKeys).map { Key(keyID: $0, publicKey: $1) }
        if output.json {
            output.printJSON(Result(keys: keys))
            return
        }
        for (index, key) in keys.enumerated() {
            Swift.print("\(index == 0 ? "current " : "previous") \(key.keyID) \(key.publicKey)")
        }
    }
}

/// A subcommand of `plugboard board-key`: it works on the board key's file, so it runs where the board is.
protocol BoardKeyFileCommand: BoardCommand {}

extension BoardKeyFileCommand {
    static var localOnly: String? { "the board key lives in a file beside the board, where plugboard serve reads it" }
}
