import ArgumentParser
import Foundation
import PlugboardBoardSecureStorage
import PlugboardModel
import PlugboardOperations
import PlugboardSecureStorage
import PlugboardStore

/// `plugboard secret …`: plug-ins' encrypted secrets.
struct SecretCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret", abstract: "Store, read, list and delete a plug-in's encrypted secrets.",
        discussion: """
            Values are encrypted with the plug-in's data key under the board's master key ($PLUGBOARD_MASTER_KEY, \
            else the key file <board>.key). Key names are not secret: they are stored in clear and audited. \
            Setting, reading and deleting a secret need an owner or maintainer of the plug-in, or an admin.
            """,
        subcommands: [SetSecret.self, GetSecret.self] + commands(SecretOperations.commands))

    /// `secret set`: the operation, with the value read from a file, stdin or the argument here.
    struct SetSecret: RemoteCommand {
        static let configuration = declared(SecretOperations.Set.self)
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "The plug-in id.") var plugin: PluginID
        @Argument(help: "The key name (not secret: stored in clear and audited).") var key: String
        @Argument(help: "The value (prefer --from-file).") var value: String?
        @Option(
            name: .customLong("from-file"),
            help: ArgumentHelp("Read the value from this file, byte for byte; - reads stdin.", valueName: "file"))
        var fromFile: String?

        func validate() throws {
            if value != nil, fromFile != nil { throw ValidationError("give the value either as an argument or with --from-file, not both") }
            if value == nil, fromFile == nil {
                throw ValidationError("give the value with --from-file FILE (- for stdin), or as an argument")
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            if value != nil {
                Output.printWarning(
                    "a value given on the command line may stay in your shell history and is visible to other users in the process list; prefer --from-file FILE or --from-file - (stdin)"
                )
            }
            let data =
                try fromFile.map { path throws(BoardError) in
                    try BoundedInput.read(path: path, limit: BoundedInput.secretLimit, what: "value")
                } ?? Data((value ?? "").utf8)
            output.report(try global.perform(SecretOperations.Set(plugin: plugin, key: key, value: data)))
        }
    }

    struct GetSecret: BoardCommand {
        static let localOnly: String? = "the operations API never returns a secret's plaintext"
        static let configuration = CommandConfiguration(
            commandName: "get", abstract: "Decrypt a secret of a plug-in and print it (the read is audited).",
            discussion: """
                Prints the value's bytes exactly as stored, with no newline added, so that \
                `plugboard secret get --plugin ID KEY > file` and "$(plugboard secret get …)" give back what was set; \
                only when stdout is a terminal a newline follows, to keep your prompt on its own line.
                With --json: {"plugin", "key", "value", "value_base64"}; "value" is the text when the bytes are \
                UTF-8, else null, and "value_base64" always holds the exact bytes.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(name: .long, help: "The plug-in id.") var plugin: String
        @Argument(help: "The key name.") var key: String

        /// The `--json` document.
        struct Result: Encodable {
            let plugin: String
            let key: String
            let value: String?
            let valueBase64: String

            enum CodingKeys: String, CodingKey { case plugin, key, value, valueBase64 }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(plugin, forKey: .plugin)
                try container.encode(key, forKey: .key)
                try container.encode(value, forKey: .value)  // null, not absent, for bytes that are not UTF-8
                try container.encode(valueBase64, forKey: .valueBase64)
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            let secrets = try BoardSecureStorage.open(board: try global.openBoard())
            let value = try secrets.secret(forKey: key, pluginID: plugin, by: try global.actor())
            if output.json {
                output.printJSON(
                    Result(plugin: plugin, key: key, value: String(data: value, encoding: .utf8), valueBase64: value.base64EncodedString()))
                return
            }
            FileHandle.standardOutput.write(value)
            if BoundedInput.stdoutIsTerminal { FileHandle.standardOutput.write(Data("\n".utf8)) }
        }
    }
}
