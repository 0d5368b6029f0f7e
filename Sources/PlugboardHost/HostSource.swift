import Foundation
import PlugboardPluginAPI
import PlugboardStore

/// Where a ``PluginHost`` reads the board: the board file on this machine (``BoardSource``), or a board served by
/// `plugboard serve` (`ServedBoardSource` in the `PlugboardRemoteHost` module). The host applies the same loading
/// rules, reasons and events whatever the source.
public protocol HostSource: Sendable {
    /// For messages: "the board at PATH", "the server at URL".
    var name: String { get }

    /// A value that changes whenever the source may have something new. Cheap: the host asks after every wait.
    func version() throws(BoardError) -> BoardVersion

    /// Returns when the source may have something new, or after about `interval` (the board file is polled at that
    /// interval; a served board wakes the host when its event stream says something changed).
    func waitForChange(interval: Duration) async

    /// What the host needs to decide: the registry (only what `relevantTo` and the enabled plug-ins need), the checks
    /// of the releases it could select, and the environment's flags.
    func snapshot(environment: String, relevantTo: Set<String>) async throws(BoardError) -> SourceSnapshot

    /// The check of one release in `snapshot` (state proof and signature level), or why it cannot be made.
    func check(pluginID: String, version: String, in snapshot: SourceSnapshot) throws(BoardError) -> ReleaseCheck

    /// Where the verified-at-registration artifact with this digest is on this machine, if it is here. The host
    /// hashes it again before `dlopen`.
    func localArtifact(sha256: String) -> String?

    /// Brings the artifacts to this machine (a served board downloads them into its cache); returns why, for each
    /// one it could not bring.
    func fetchArtifacts(_ digests: [String]) async -> [String: String]

    /// Records the host's load report, so that `plugboard plugin status` shows it.
    func writeLoadReport(_ identity: HostIdentity, entries: [LoadReportEntry], source: String?) async throws(BoardError)

    /// Called when the host stops, after its last report: deliver what is pending and let go of connections.
    func finish() async
}

extension HostSource {
    /// Nothing to deliver or close.
    public func finish() async {}
}

/// A snapshot from a ``HostSource``.
public struct SourceSnapshot: Sendable {
    /// The registry.
    public var registry: RegistrySnapshot
    /// The check of every release the host could select, by ``PlugboardStore/ReleaseCheck/key(_:_:)``, when the source
    /// made them in advance (a served board's); nil when the source makes them when asked (the board file).
    public var checks: [String: ReleaseCheck]?
    /// The source's ``HostSource/version()`` when the snapshot was read.
    public var version: BoardVersion
    /// Nil when the snapshot is current; otherwise where it comes from, for events and the load report
    /// (for example `a cached snapshot of 2026-11-23T10:00:00Z (the server at … is unreachable: …)`).
    public var stale: String?

    /// Creates a snapshot.
    public init(registry: RegistrySnapshot, checks: [String: ReleaseCheck]? = nil, version: BoardVersion, stale: String? = nil) {
        self.registry = registry
        self.checks = checks
        self.version = version
        self.stale = stale
    }
}

/// The board file on this machine: the host polls `PRAGMA data_version`, reads the registry in one transaction,
/// proves each release against the audit log when it considers it, and writes its load report to the board.
public struct BoardSource: HostSource {
    /// The board.
    public let board: Board

    /// A source reading `board`.
    public init(board: Board) { self.board = board }

    public var name: String { "the board at \(board.path)" }

    public func version() throws(BoardError) -> BoardVersion { try board.version() }

    public func waitForChange(interval: Duration) async { try? await Task.sleep(for: interval) }

    public func snapshot(environment: String, relevantTo: Set<String>) async throws(BoardError) -> SourceSnapshot {
        let registry = try board.registrySnapshot(environment: environment, relevantTo: relevantTo)
        return SourceSnapshot(registry: registry, version: registry.version)
    }

    public func check(pluginID: String, version: String, in snapshot: SourceSnapshot) throws(BoardError) -> ReleaseCheck {
        try board.releaseCheck(
            pluginID: pluginID, version: version, environment: snapshot.registry.environment, policy: snapshot.registry.signaturePolicy)
    }

    public func localArtifact(sha256: String) -> String? { ArtifactStore(root: board.artifactsPath).path(forSHA256: sha256) }

    public func fetchArtifacts(_ digests: [String]) async -> [String: String] { [:] }

    public func writeLoadReport(_ identity: HostIdentity, entries: [LoadReportEntry], source: String?) async throws(BoardError) {
        try board.writeLoadReport(
            hostID: identity.hostID, environment: identity.environment, hostVersion: identity.hostVersion, entries: entries,
            source: source)
    }
}
