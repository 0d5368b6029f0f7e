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

/// `plugboard principal …`: which identity provider account signs in as which principal.
struct PrincipalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "principal", abstract: "Link identity provider accounts to principals.",
        subcommands: commands(IdentityOperations.principals))
}

/// `plugboard sso …`: which identity provider groups give which role at sign-in.
struct SSOCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sso", abstract: "Map identity provider groups to roles.", subcommands: commands(IdentityOperations.sso))
}
