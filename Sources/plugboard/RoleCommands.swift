import ArgumentParser
import PlugboardOperations

/// `plugboard admin …`: who administers the board.
struct AdminCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Manage board admins.", subcommands: commands(RoleOperations.admins))
}

/// `plugboard owner …`: who owns and maintains each plug-in.
struct OwnerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "owner", abstract: "Manage who owns and maintains a plug-in.", subcommands: commands(RoleOperations.owners))
}

/// `plugboard group …`: named lists of principals that an approval policy names as who approves.
struct GroupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group", abstract: "Manage groups of principals who approve change requests.",
        subcommands: commands(RoleOperations.groups))
}
