import ArgumentParser
import Foundation
import PlugboardSecureStorage
import PlugboardStore

struct Init: BoardCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the board, apply migrations, make you its first admin, and set up its master key.",
        discussion: """
            The board file is created with mode 0600 and never overwritten. The master key of its secure storage is
            $PLUGBOARD_MASTER_KEY when set; otherwise the key file <board>.key is created with mode 0600 (an
            existing one is used). Back the key file up apart from the board: without it the secrets are lost.
            """)

    @OptionGroup var global: GlobalOptions

    func execute(_ output: Output) throws(BoardError) {
        let actor = try global.actor()
        var setup: MasterKeySetup?
        let board = try Board.create(at: global.boardPath, actor: actor) { board throws(BoardError) in
            setup = try BoardSecrets.initialize(board: board, actor: actor).setup
        }
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
            masterKey: masterKey)
        if output.json {
            output.printJSON(result)
        } else {
            print("Created the board \(board.path) (schema \(status.applied.last?.fileName ?? "-")); \(actor.osUser) is its admin.")
            if let setup { print(masterKeyNote(setup)) }
        }
    }
}

struct Migrate: BoardCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending migrations, or show applied and pending ones with --status.")

    @OptionGroup var global: GlobalOptions

    @Flag(name: .long, help: "Show applied and pending migrations without changing anything.")
    var status = false

    func execute(_ output: Output) throws(BoardError) {
        let board = try Board.open(at: global.boardPath, requireCurrentSchema: false)
        if status {
            let state = try board.migrationStatus()
            if output.json {
                output.printJSON(state)
                return
            }
            var table = Table("VERSION", "FILE", "STATE", "APPLIED AT", "APPLIED BY")
            for info in state.applied {
                let edited = state.edited.contains(info)
                let unknown = state.unknown.contains(info)
                table.add(
                    String(format: "%04d", info.version), info.fileName, unknown ? "unknown (newer)" : edited ? "EDITED" : "applied",
                    info.appliedAt.cell, info.appliedBy.cell)
            }
            for info in state.pending { table.add(String(format: "%04d", info.version), info.fileName, "pending", "-", "-") }
            table.print(empty: "No migrations.")
            try state.checkCompatible()
            return
        }
        let applied = try board.migrate(actor: try global.actor())
        if output.json {
            output.printJSON(["applied": applied.map(\.fileName)])
        } else if applied.isEmpty {
            print("The board is up to date; nothing to apply.")
        } else {
            print("Applied \(applied.count) migration(s): \(applied.map(\.fileName).joined(separator: ", ")).")
        }
    }
}

struct EnvCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env", abstract: "List environments.",
        subcommands: [List.self], defaultSubcommand: List.self)

    struct List: BoardCommand {
        static let configuration = CommandConfiguration(abstract: "List the board's environments.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let names = try global.openBoard().environments()
            if output.json { output.printJSON(names) } else { names.forEach { print($0) } }
        }
    }
}

struct AdminCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "Manage board admins.",
        subcommands: [Add.self, Remove.self, List.self])

    struct Add: BoardCommand {
        static let configuration = CommandConfiguration(abstract: "Make a principal (an OS user name) a board admin.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The principal to make an admin.") var principal: String

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.openBoard().addAdmin(principal, actor: try global.actor()))
        }
    }

    struct Remove: BoardCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a board admin (never the last one).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The admin to remove.") var principal: String

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.openBoard().removeAdmin(principal, actor: try global.actor()))
        }
    }

    struct List: BoardCommand {
        static let configuration = CommandConfiguration(abstract: "List board admins.")
        @OptionGroup var global: GlobalOptions

        func execute(_ output: Output) throws(BoardError) {
            let admins = try global.openBoard().admins()
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

struct OwnerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "owner", abstract: "Manage who owns and maintains a plug-in.",
        subcommands: [Add.self, Remove.self, List.self])

    struct Add: BoardCommand {
        static let configuration = CommandConfiguration(abstract: "Add an owner or maintainer to a plug-in (or change their role).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Argument(help: "The principal (an OS user name).") var principal: String
        @Option(name: .long, help: "owner (may manage owners) or maintainer.") var role: PluginOwner.Role = .owner

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.openBoard().addOwner(id, principal: principal, role: role, actor: try global.actor()))
        }
    }

    struct Remove: BoardCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an owner or maintainer (never the last owner).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String
        @Argument(help: "The principal to remove.") var principal: String

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.openBoard().removeOwner(id, principal: principal, actor: try global.actor()))
        }
    }

    struct List: BoardCommand {
        static let configuration = CommandConfiguration(abstract: "List a plug-in's owners and maintainers.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The plug-in id.") var id: String

        func execute(_ output: Output) throws(BoardError) {
            let owners = try global.openBoard().owners(of: id)
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
