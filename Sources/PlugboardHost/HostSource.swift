public import Foundation
public import PlugboardModel
public import PlugboardPluginAPI

/// Where a ``PluginHost`` reads the board: the board file on this machine (`BoardFileSource`), or a board served by
/// `plugboard serve` (`RemoteBoardSource` in the `PlugboardRemoteHost` module). The host applies the same loading
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
    /// of the releases it could select, and the environment's flags, proven from `anchor`, the newest audit head the
    /// host accepted (nil before its first): the snapshot's ``SourceSnapshot/head`` extends it.
    ///
    /// - Throws: `BoardError` `.integrity` when what the source holds cannot be proven from the anchor
    ///   (an edit behind the audit log, an older copy, a snapshot not signed by the board): the host then keeps its
    ///   last good state and reports why.
    func snapshot(environment: String, relevantTo: Set<String>, anchor: AuditCheckpoint?) async throws(BoardError) -> SourceSnapshot

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

    /// Delivers the last load report now and returns once it is delivered or could not be (within a short bound).
    /// The host calls it before it enters plug-in code that crashed its previous process, so that the crash reaches
    /// the board even when the code crashes the host again.
    func deliverLoadReport() async

    /// Called when the host stops, after its last report: deliver what is pending and let go of connections.
    func finish() async
}

extension HostSource {
    /// Nothing to deliver: ``writeLoadReport(_:entries:source:)`` recorded the report.
    public func deliverLoadReport() async {}

    /// Nothing to deliver or close.
    public func finish() async {}
}

/// A snapshot from a ``HostSource``.
public struct SourceSnapshot: Sendable {
    /// The registry.
    public var registry: RegistrySnapshot
    /// The check of every release the host could select, by `ReleaseCheck.key(_:_:)`, when the source
    /// made them in advance (a served board's); nil when the source makes them when asked (the board file).
    public var checks: [String: ReleaseCheck]?
    /// The source's ``HostSource/version()`` when the snapshot was read.
    public var version: BoardVersion
    /// The audit head that proves the snapshot (the host's next anchor); nil for a board whose log is empty.
    public var head: AuditCheckpoint?
    /// Until when the board's signed word vouches for the snapshot (a served board's); nil when it needs none (the
    /// board file, proven as it is read). A host configured to fail closed unloads its plug-ins some time after it.
    public var expiresAt: Date?
    /// Nil when the snapshot is current; otherwise where it comes from, for events and the load report
    /// (for example `a cached snapshot of 2026-11-23T10:00:00Z (the server at … is unreachable: …)`).
    public var stale: String?

    /// Creates a snapshot.
    public init(
        registry: RegistrySnapshot, checks: [String: ReleaseCheck]? = nil, version: BoardVersion, head: AuditCheckpoint? = nil,
        stale: String? = nil, expiresAt: Date? = nil
    ) {
        self.registry = registry
        self.checks = checks
        self.version = version
        self.head = head
        self.stale = stale
        self.expiresAt = expiresAt
    }
}
