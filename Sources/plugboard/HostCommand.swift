import ArgumentParser
import PlugboardAdmin
import PlugboardModel

/// `plugboard host …`: what operators tell one host.
struct HostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host", abstract: "Tell one host what to do with what it decided alone (quarantines).",
        subcommands: [ReleaseQuarantine.self])

    struct ReleaseQuarantine: RemoteCommand {
        static let configuration = CommandConfiguration(
            commandName: "release-quarantine", abstract: "End one host's quarantine of a release that crashed it.",
            discussion: """
                A host quarantines a release that crashed it too often, on that host only (skip reason quarantined in \
                plugboard plugin status). This records, audited, that the host HOST may load ID@VERSION again: the host \
                lifts its quarantine when it next reads the board, if it quarantined the release before now. New crashes \
                quarantine it again. Needs the plug-in's owners, maintainers or a board admin.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The host id, as the host reports it.") var host: String
        @Argument(help: "The plug-in id.") var id: String
        @Argument(help: "The version the host quarantined.") var version: String
        @Option(name: .long, help: "Why (kept in the board and the audit log).") var reason: String?

        func validate() throws {
            try checkArguments { () throws(BoardError) in
                try Validate.hostID(host)
                try Validate.pluginID(id)
                _ = try AdminParse.version(version)
                if let reason { try Validate.reason(reason) }
            }
        }

        func execute(_ output: Output) throws(BoardError) {
            output.report(try global.perform(HostRequests.ReleaseQuarantine(hostID: host, id: id, version: version, reason: reason)))
        }
    }
}
