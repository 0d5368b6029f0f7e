import ArgumentParser
import Foundation
import PlugboardBoardSecureStorage
import PlugboardModel
import PlugboardOperations
import PlugboardSecureStorage
import PlugboardStore

/// `plugboard keys …`: the master key and the plug-ins' data keys.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Rotate the master key or a plug-in's data key; shred a plug-in's data keys.",
        discussion: """
            The master key comes from $PLUGBOARD_MASTER_KEY (base64 of 32 bytes) when set, else from the key file \
            <board>.key (mode 0600) that plugboard init creates. Back the key file up apart from the board.
            """,
        subcommands: [List.self, Rotate.self, Shred.self, Init.self])

    struct List: MasterKeyCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Show the master key's id and the data keys (versions, states, counts), never key material.",
            discussion: "Needs no master key.")
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "Only this plug-in's data keys.") var plugin: String?

        struct Result: Encodable {
            let masterKeyID: String?
            let dataKeys: [DataKeyEntry]
        }

        func execute(_ output: Output) throws(BoardError) {
            let board = try global.openBoard()
            let result = Result(masterKeyID: try board.masterKeyIdentifier(), dataKeys: try board.dataKeyEntries(pluginID: plugin))
            if output.json {
                output.printJSON(result)
                return
            }
            print("Master key: \(result.masterKeyID.map { "id \($0)" } ?? "none yet (run plugboard keys init)")")
            var table = Table("PLUGIN", "VERSION", "STATE", "SEALED", "VALUES", "CREATED", "RETIRED")
            for key in result.dataKeys {
                table.add(
                    key.pluginID, String(key.version), key.state, String(key.encryptionCount), String(key.valueCount), key.createdAt,
                    key.retiredAt.cell)
            }
            table.print(empty: "No data keys yet: a plug-in gets its first one with its first secret.")
        }
    }

    struct Rotate: MasterKeyCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate", abstract: "Rotate the master key (rewrap every data key), or with --plugin one plug-in's data key.",
            discussion: """
                Master key (admins): a new random key is written to <board>.key.next, the board is rotated to it in \
                one transaction, then the file is renamed over <board>.key; back up the new key file. Values are not \
                re-encrypted. When the key comes from $PLUGBOARD_MASTER_KEY, plugboard cannot store the new key: \
                put one in another variable (export NEW=$(openssl rand -base64 32)), run \
                plugboard keys rotate --new-key-env NEW, then give PLUGBOARD_MASTER_KEY that value everywhere.
                Data key (--plugin; its owners, maintainers, admins): new values are sealed with a new version; old \
                versions still open old values, unless --reencrypt moves them to the new version too.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "Rotate this plug-in's data key instead of the master key.") var plugin: String?
        @Flag(name: .long, help: "With --plugin: also re-encrypt the plug-in's values with the new data key.") var reencrypt = false
        @Option(
            name: .customLong("new-key-env"),
            help: ArgumentHelp(
                "Take the new master key from this environment variable (base64 of 32 bytes) instead of generating one.", valueName: "var"))
        var newKeyEnv: String?

        func validate() throws {
            if reencrypt, plugin == nil {
                throw ValidationError("--reencrypt needs --plugin: a master-key rotation never re-encrypts values")
            }
            if newKeyEnv != nil, plugin != nil {
                throw ValidationError("--new-key-env is for the master key; a data key is always generated")
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            let actor = try global.actor()
            let secrets = try BoardSecureStorage.open(board: try global.openBoard())
            if let plugin {
                output.report(try secrets.rotateDataKey(pluginID: plugin, reencrypt: reencrypt, by: actor))
                return
            }
            if case .environment(let variable) = secrets.keySource, newKeyEnv == nil {
                throw BoardError(
                    .masterKey,
                    "the master key comes from the environment variable \(variable), which plugboard cannot rewrite; put a new key in another variable (export NEW=$(openssl rand -base64 32)), run plugboard keys rotate --new-key-env NEW, then set \(variable) to that value wherever the board is used"
                )
            }
            var newKey = MasterKey.generate()
            if let newKeyEnv {
                do {
                    newKey = try EnvironmentKeyProvider(variableName: newKeyEnv).loadMasterKey()
                } catch {
                    throw BoardError(.invalidInput, error.message)
                }
            }
            let result: ChangeResult
            let whereTheKeyIs: String
            switch secrets.keySource {
            case .keyFile(let path):
                result = try secrets.rotateMasterKeyFile(to: newKey, by: actor)
                whereTheKeyIs =
                    "The new key is in \(path) (mode 0600); back it up now, apart from the board. The old key no longer opens this board."
            case .environment(let variable):
                result = try secrets.rotateMasterKey(to: newKey, by: actor)
                whereTheKeyIs =
                    "The board now needs the key in \(newKeyEnv ?? "the new variable"): set \(variable) to it wherever the board is used (hosts too); the old key no longer opens it."
            case .host:
                output.report(try secrets.rotateMasterKey(to: newKey, by: actor))
                return
            }
            output.report(ChangeResult(changed: true, result.message, notes: result.notes + [whereTheKeyIs]))
        }
    }

    struct Shred: MasterKeyCommand {
        static let configuration = CommandConfiguration(
            commandName: "shred", abstract: "Destroy a plug-in's data keys: its secrets can never be decrypted again.",
            discussion: """
                The secrets stay listed (as unreadable) until deleted or set again; a new secret starts a new data \
                key. On a terminal you are asked to type the plug-in id unless --yes is given; scripts (stdin not a \
                terminal) are not asked.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Option(name: .long, help: "Why (kept in the audit log).") var reason: String?
        @Flag(name: .long, help: "Do not ask for confirmation on a terminal.") var yes = false

        func execute(_ output: Output) throws(BoardError) {
            let secrets = try BoardSecureStorage.open(board: try global.openBoard())
            if !yes, BoundedInput.stdinIsTerminal {
                let count = try secrets.board.secretEntries(pluginID: id).count
                FileHandle.standardError.write(
                    Data(
                        "Shredding destroys every data key of \(id): its \(count) secret(s) can never be decrypted again.\nType the plug-in id to confirm: "
                            .utf8))
                let answer = try BoundedInput.line(what: "answer") ?? ""
                guard answer == id else {
                    throw BoardError(.invalidInput, "shredding was not confirmed (the answer was not \(id)); nothing was shredded")
                }
            }
            output.report(try secrets.shredDataKeys(pluginID: id, reason: reason, by: try global.actor()))
        }
    }

    struct Init: MasterKeyCommand {
        static let configuration = CommandConfiguration(
            commandName: "init", abstract: "Give a board created before secure storage existed its master key (admins).",
            discussion: """
                Uses $PLUGBOARD_MASTER_KEY when set, else the key file <board>.key, which is created (mode 0600) \
                when missing. plugboard init already does this for new boards; on an initialised board it changes \
                nothing.
                """)
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let (_, setup) = try BoardSecureStorage.initialize(board: try global.openBoard(), by: try global.actor())
            guard setup.changed else {
                output.report(
                    ChangeResult(
                        changed: false,
                        "The board's secure storage is already initialised with the master key id \(setup.keyID) (\(setup.source)); nothing changed."
                    ))
                return
            }
            output.report(
                ChangeResult(
                    changed: true, "Initialised the board's secure storage with the master key id \(setup.keyID).",
                    notes: [masterKeyNote(setup)]))
        }
    }
}

/// What an operator must know about a new board's master key: where it is, and to back it up.
func masterKeyNote(_ setup: MasterKeySetup) -> String {
    switch setup.source {
    case .keyFile(let path):
        return
            "\(setup.createdKeyFile ? "Created the master key file" : "Using the existing master key file") \(path) (mode 0600, key id \(setup.keyID)): back it up now, apart from the board; without it the board's secrets cannot be decrypted."
    case .environment(let variable):
        return
            "The master key comes from \(variable) (key id \(setup.keyID)); no key file was created. Keep that key safe, apart from the board: without it the board's secrets cannot be decrypted."
    case .host(let what):
        return "The master key comes from \(what) (key id \(setup.keyID))."
    }
}

/// A subcommand of `plugboard keys`: it handles the master key, so it runs where the board is.
protocol MasterKeyCommand: BoardCommand {}

extension MasterKeyCommand {
    static var localOnly: String? { "master-key handling stays on the board's machine" }
}
