import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardModel
import PlugboardStore

/// `plugboard signer …`: which publisher keys are trusted to sign which plug-ins.
struct SignerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signer", abstract: "Trust, list and revoke the keys that sign plug-in releases.",
        subcommands: [Add.self, List.self, Revoke.self])

    struct Add: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Trust a public key to sign one plug-in's releases (its owners or an admin), or every plug-in's with --all (admins).",
            discussion: "Usage: plugboard signer add ID PUBLIC_KEY [--name TEXT], or plugboard signer add --all PUBLIC_KEY [--name TEXT].")
        @OptionGroup var global: GlobalOptions
        @Flag(name: .long, help: "Trust the key for every plug-in (admins only).") var all = false
        @Argument(help: ArgumentHelp("The plug-in id (omit with --all), then the public key in base64.", valueName: "id-and-key"))
        var arguments: [String] = []
        @Option(name: .long, help: "Whose key it is, for people.") var name: String?

        func validate() throws {
            if all, arguments.count != 1 { throw ValidationError("with --all, give only the public key") }
            if !all, arguments.count != 2 { throw ValidationError("give a plug-in id and a public key, or --all and a public key") }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(
                try global.perform(
                    TrustRequests.AddSigner(id: all ? nil : arguments[0], publicKey: arguments[arguments.count - 1], name: name)))
        }
    }

    struct List: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List trusted keys: all, or those that may sign one plug-in (its own and those trusted for every plug-in).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Only the keys that may sign this plug-in.") var id: String?

        func execute(_ output: Output) throws(BoardError) {
            let signers = try global.perform(TrustRequests.Signers(id: id))
            if output.json {
                output.printJSON(signers)
                return
            }
            var table = Table("KEY ID", "TRUSTED FOR", "NAME", "STATE", "ADDED", "PUBLIC KEY")
            for signer in signers {
                table.add(
                    signer.keyID, signer.pluginID == Signer.everyPlugin ? "every plug-in" : signer.pluginID, signer.name.cell,
                    signer.revokedAt.map { "revoked \($0) by \(signer.revokedBy ?? "?"): \(signer.revokeReason ?? "")" } ?? "trusted",
                    "\(signer.addedAt) by \(signer.addedBy)", signer.publicKey)
            }
            table.print(
                empty: id.map { "No key is trusted to sign \($0); trust one with plugboard signer add \($0) PUBLIC_KEY." }
                    ?? "No key is trusted yet; trust one with plugboard signer add ID PUBLIC_KEY.")
        }
    }

    struct Revoke: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke", abstract: "Revoke a key: no signature it made counts any more, including earlier ones.",
            discussion: "Admins may revoke any key; the owners of every plug-in a key is trusted for may revoke it.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The key id (plugboard signer list).") var keyID: String
        @Option(name: .long, help: "Why (kept in the board and the audit log).") var reason: String

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(TrustRequests.RevokeSigner(keyID: keyID, reason: reason)))
        }
    }
}
