public import ArgumentParser
package import PlugboardModel
package import PlugboardStore
public import PlugboardVersioning

/// What operators tell one host: the operations behind `plugboard host …`.
public enum HostOperations {
    /// The operations of the group, in the order `plugboard host --help` lists them.
    package static let all: [any ParsedOperation.Type] = [ReleaseQuarantine.self]

    /// `host release-quarantine HOST ID VERSION`: the host loads a release it quarantined for crashing it again.
    public struct ReleaseQuarantine: ParsedOperation, PluginTargeted, ChangingOperation {
        public static let declaration = OperationDeclaration(
            .hostReleaseQuarantine, .write, abstract: "End one host's quarantine of a release that crashed it.",
            discussion: """
                A host quarantines a release that crashed it too often, on that host only (skip reason quarantined in \
                plugboard plugin status). This records, audited, that the host HOST may load ID@VERSION again: the host \
                lifts its quarantine when it next reads the board, if it quarantined the release before now. New crashes \
                quarantine it again. Needs the plug-in's owners, maintainers or a board admin.
                """, widens: .boardWide)
        @Argument(help: "The host id, as the host reports it.") public var host: HostID
        @OptionGroup public var target: PluginTarget
        @Argument(help: "The version the host quarantined.") public var version: SemanticVersion
        /// It declares its own `--reason`: a widening command adds none.
        public static var declaresReason: Bool { true }
        @Option(help: "Why (kept in the board and the audit log).") public var reason: Reason?
        public init() {}
        public init(host: HostID, id: PluginID, version: SemanticVersion, reason: Reason?) {
            self.host = host
            self.id = id
            self.version = version
            self.reason = reason
        }
        package func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response> {
            OperationReply(
                try board.releaseQuarantine(hostID: host.text, pluginID: id.text, version: version, reason: reason?.text, by: actor))
        }
    }
}
