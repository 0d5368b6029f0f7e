import Foundation
public import PlugboardHost
public import PlugboardModel
public import PlugboardPluginAPI
package import PlugboardStore

/// The board file on this machine: the host polls `PRAGMA data_version`, reads the registry in the transaction that
/// proves the board from the host's anchor (structure, audit chain, state root, every kill switch), proves each release
/// it considers against the audit log's head, and writes its load report to the board.
public struct BoardFileSource: HostSource {
    /// The board.
    package let board: Board

    /// A source reading `board`, a connection the host's other parts share.
    package init(board: Board) { self.board = board }

    /// A source reading the board file at `path`; refused with a sentence when it is not a board.
    public init(path: String) throws(BoardError) { self.init(board: try Board.open(at: path)) }

    public var name: String { "the board at \(board.path)" }

    public func version() throws(BoardError) -> BoardVersion { try board.version() }

    public func waitForChange(interval: Duration) async { try? await Task.sleep(for: interval) }

    public func snapshot(environment: String, relevantTo: Set<String>, anchor: AuditCheckpoint?) async throws(BoardError) -> SourceSnapshot
    {
        let (registry, head) = try board.provenRegistrySnapshot(environment: environment, relevantTo: relevantTo, anchor: anchor)
        return SourceSnapshot(registry: registry, version: registry.version, head: head)
    }

    public func check(pluginID: String, version: String, in snapshot: SourceSnapshot) throws(BoardError) -> ReleaseCheck {
        try board.releaseCheck(
            pluginID: pluginID, version: version, environment: snapshot.registry.environment, policy: snapshot.registry.signaturePolicy,
            anchor: snapshot.head)
    }

    public func localArtifact(sha256: String) -> String? { ArtifactStore(root: board.artifactsPath).path(forSHA256: sha256) }

    public func fetchArtifacts(_ digests: [String]) async -> [String: String] { [:] }

    public func writeLoadReport(_ identity: HostIdentity, entries: [LoadReportEntry], source: String?) async throws(BoardError) {
        try board.writeLoadReport(
            hostID: identity.hostID, environment: identity.environment, hostVersion: identity.hostVersion, entries: entries,
            source: source)
    }
}
