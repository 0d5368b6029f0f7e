public import ArgumentParser
import Foundation
import PlugboardAdmin
import PlugboardModel
import PlugboardStore

/// `plugboard admin …`: who administers the board.
struct AdminCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Manage board admins.",
        subcommands: [Add.self, Remove.self, List.self])

    struct Add: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Make a principal (an OS user name) a board admin.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The principal to make an admin.") var principal: String

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(AccessRequests.SetAdmin(principal: principal, admin: true)))
        }
    }

    struct Remove: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a board admin (never the last one).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The admin to remove.") var principal: String

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(AccessRequests.SetAdmin(principal: principal, admin: false)))
        }
    }

    struct List: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List board admins.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let admins = try global.perform(AccessRequests.Admins())
            if output.json {
                output.printJSON(admins)
                return
            }
            var table = Table("PRINCIPAL", "ADDED AT", "ADDED BY")
            for admin in admins { table.add(admin.principal, admin.addedAt, admin.addedBy) }
            table.print(empty: "No admins.")
        }
    }
}

/// `plugboard owner …`: who owns and maintains each plug-in.
struct OwnerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "owner", abstract: "Manage who owns and maintains a plug-in.",
        subcommands: [Add.self, Remove.self, List.self])

    struct Add: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add an owner or maintainer to a plug-in (or change their role).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Argument(help: "The principal (an OS user name).") var principal: String
        @Option(name: .long, help: "owner (may manage owners) or maintainer.") var role: PluginOwner.Role = .owner

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(AccessRequests.SetOwner(id: id, principal: principal, role: role.rawValue)))
        }
    }

    struct Remove: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove an owner or maintainer (never the last owner).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Argument(help: "The principal to remove.") var principal: String

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(AccessRequests.SetOwner(id: id, principal: principal, role: nil)))
        }
    }

    struct List: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List a plug-in's owners and maintainers.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String

        func execute(_ output: Output) throws(BoardError) {
            let owners = try global.perform(AccessRequests.Owners(id: id))
            if output.json {
                output.printJSON(owners)
                return
            }
            var table = Table("PRINCIPAL", "ROLE", "ADDED AT", "ADDED BY")
            for owner in owners { table.add(owner.principal, owner.role.rawValue, owner.addedAt, owner.addedBy) }
            table.print(empty: "\(id) has no owners.")
        }
    }
}

extension PluginOwner.Role: ExpressibleByArgument {}
