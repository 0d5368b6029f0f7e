public import ArgumentParser
public import Foundation
import PlugboardBoardSecureStorage
public import PlugboardModel
import PlugboardSecureStorage
package import PlugboardStore

/// A plug-in's secrets through the operations API: stored, listed and deleted, never read (the API returns no secret's
/// plaintext; `plugboard secret get` runs on the board's machine). The operations behind
/// `plugboard secret set|list|delete`.
public enum SecretOperations {
    /// The operations whose CLI command is their declaration, in the order `plugboard secret --help` lists them.
    package static let commands: [any ParsedOperation.Type] = [List.self, Delete.self]

    /// Every secret operation: ``Set`` (whose CLI command reads the value from a file or stdin), then ``commands``.
    package static let all: [any ParsedOperation.Type] = [Set.self] + commands

    /// `secret set --plugin ID KEY`: the value travels base64-encoded in the body, over the server's TLS.
    public struct Set: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .secretSet, .write, abstract: "Encrypt and store a secret of a plug-in.",
            discussion: """
                The value is stored byte for byte: from --from-file FILE (or - for stdin) nothing is added or \
                stripped, so `printf %s "$TOKEN" | plugboard secret set --plugin ID KEY --from-file -` stores no \
                newline. A VALUE argument works too, but may stay in your shell history and is visible to other \
                users in the process list.
                """)
        @Option(help: "The plug-in id.") public var plugin: PluginID
        @Argument(help: "The key name (not secret: stored in clear and audited).") public var key: String
        /// The value's exact bytes, base64. A plain string: a refusal never quotes it.
        @Option(help: "The value's bytes, base64.") public var valueBase64: String
        public init() {}
        public init(plugin: PluginID, key: String, value: Data) {
            self.plugin = plugin
            self.key = key
            valueBase64 = value.base64EncodedString()
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            guard let value = Data(base64Encoded: valueBase64) else { throw BoardError(.invalidInput, "value_base64 is not base64") }
            let secrets = try BoardSecureStorage.open(board: board)
            return OperationReply(try secrets.setSecret(value, forKey: key, pluginID: plugin.text, by: actor))
        }
    }

    /// `secret list --plugin ID`: names and data key versions, never values.
    public struct List: ParsedOperation {
        public static let declaration = OperationDeclaration(
            .secretList, .read, abstract: "List a plug-in's secrets: names and data key versions, never values.",
            discussion: "Needs no master key: key names are not secret.", response: "SecretList")
        @Option(help: "The plug-in id.") public var plugin: PluginID
        public init() {}
        public init(plugin: PluginID) { self.plugin = plugin }
        /// What it answers.
        public typealias Response = [SecretEntry]
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(try board.secretEntries(pluginID: plugin.text))
        }
        package func text(for entries: [SecretEntry]) -> String? {
            Table.listing(
                entries, "KEY", "DATA KEY", "STATE", "UPDATED",
                empty: "\(plugin) has no secrets; store one with plugboard secret set --plugin \(plugin) KEY --from-file FILE."
            ) { entry in
                [
                    entry.key, "v\(entry.dataKeyVersion) (\(entry.dataKeyState))",
                    entry.readable ? "readable" : "unreadable: data key shredded", entry.updatedAt,
                ]
            }
        }
    }

    /// `secret delete --plugin ID KEY`: takes a secret away; a stop.
    public struct Delete: ParsedOperation, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .secretDelete, .stop, abstract: "Delete a secret of a plug-in.")
        @Option(help: "The plug-in id.") public var plugin: PluginID
        @Argument(help: "The key name.") public var key: String
        public init() {}
        public init(plugin: PluginID, key: String) {
            self.plugin = plugin
            self.key = key
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            let secrets = try BoardSecureStorage.open(board: board)
            return OperationReply(try secrets.deleteSecret(forKey: key, pluginID: plugin.text, by: actor))
        }
    }
}
