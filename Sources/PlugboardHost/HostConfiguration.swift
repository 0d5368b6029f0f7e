public import Foundation
public import Logging
public import PlugboardModel
public import PlugboardPluginAPI

/// How a host is set up: where it reads the board, who it is, and the SPI implementations it injects into plug-ins.
///
/// Everything is passed in (dependency injection, no globals), so two hosts in one process can run with
/// different SPI implementations.
///
/// Open the board once per process and hand the same `Board` to the host, its ``BoardFlagProvider`` and its
/// secure storage: one connection to one file, whatever reads it.
public struct HostConfiguration: Sendable {
    /// Where the host reads the board: the board file (`BoardFileSource`) or a served board.
    public var source: any HostSource
    /// Who the host is: id, environment, API version, flag context.
    public var identity: HostIdentity
    /// How often the host polls the board file for changes (`PRAGMA data_version`); a served board pushes changes.
    public var pollInterval: Duration
    /// The secure storage for one plug-in; the host calls it with the plug-in's id, never the plug-in itself.
    public var secureStorage: @Sendable (_ pluginID: String) throws -> any SecureStorage
    /// Feature flags: gates, and the evaluator plug-ins get.
    public var flags: any HostFlagProvider
    /// Each plug-in's configuration slice.
    public var configuration: @Sendable (_ pluginID: String) -> PluginConfiguration
    /// Services the host offers plug-ins.
    public var services: ServiceRegistry
    /// The host's own logger; plug-ins get loggers labelled with their id.
    public var logger: Logger
    /// Where verified copies of dynamic plug-ins are placed before `dlopen` (a private folder is made inside).
    public var dynamicLibraryCache: String
    /// The host's own folder (made 0700), where it keeps its anchor: the newest audit head (sequence, hash, state root)
    /// it accepted. The host acts only on a board whose audit log extends it, so an older copy of the board, or one
    /// whose log was rewritten, is refused even after a restart. Nil keeps the anchor in memory only: a restarted
    /// host then accepts the board's log as it finds it (or from ``anchor``). A served board's host uses its cache
    /// folder. The host also keeps its crash journal there (see ``crashQuarantine``).
    public var stateFolder: String?
    /// The anchor to start from when the state folder holds none: a checkpoint taken with `plugboard audit
    /// checkpoint` and kept apart from the board (`SEQ:HASH:ROOT`), so that even the host's first start refuses a board
    /// whose log does not extend it.
    public var anchor: AuditCheckpoint?
    /// For a served board: how long after its snapshot's signed word expired (a frozen feed, an unreachable server)
    /// the host unloads every plug-in but ``requiredPlugins`` (reason `stale`). Nil keeps running on the last good
    /// snapshot, reported as stale, for as long as it takes.
    public var failClosedAfter: Duration?
    /// Plug-ins the host keeps when it fails closed (see ``failClosedAfter``).
    public var requiredPlugins: Set<String> = []
    /// When the host quarantines a release that keeps crashing it. Crash tracking needs a ``stateFolder``: before
    /// each call into a plug-in's code the host notes there which release it enters, and a process that dies there
    /// reports it on its next start. Nil turns crash tracking off.
    public var crashQuarantine: CrashQuarantine? = CrashQuarantine()
    /// Loads no plug-in at all, and says so: a warning, and every plug-in the board would load reported as skipped
    /// with the reason `safe_mode`. For starting a host that a plug-in keeps crashing before a quarantine decides.
    public var safeMode = false
    /// The approver keys this host trusts, and how many of their signatures a plug-in's enablement needs, kept apart
    /// from the board. With an anchor, the host loads a plug-in only when the change that enabled it in the host's
    /// environment carries that many valid signatures by these keys (or more, when the board's policy asks for more),
    /// whatever the board says of its approvers and policy: a writer who can add an approver, lower the policy or
    /// rewrite the audit log and the state proof cannot enable a plug-in here alone. Nil trusts the board: where its
    /// policy requires signed approvals, its registered, unrevoked approver keys and its count decide (rows that the
    /// audit chain and the state proof protect).
    public var approvals: ApprovalAnchor?

    /// Creates a configuration reading any ``HostSource``, with the same defaults.
    public init(
        source: any HostSource, identity: HostIdentity, pollInterval: Duration = .milliseconds(100),
        secureStorage: @escaping @Sendable (String) throws -> any SecureStorage = { id in UnavailableSecureStorage(pluginID: id) },
        flags: any HostFlagProvider = NoFlags(),
        configuration: @escaping @Sendable (String) -> PluginConfiguration = { _ in PluginConfiguration() },
        services: ServiceRegistry = ServiceRegistry(),
        logger: Logger = Logger(label: "plugboard.host"),
        dynamicLibraryCache: String = NSTemporaryDirectory()
    ) {
        self.source = source
        self.identity = identity
        self.pollInterval = pollInterval
        self.secureStorage = secureStorage
        self.flags = flags
        self.configuration = configuration
        self.services = services
        self.logger = logger
        self.dynamicLibraryCache = dynamicLibraryCache
    }
}

/// How many crashes of one release, within how long, make a host quarantine it (see
/// ``HostConfiguration/crashQuarantine``).
///
/// A quarantined release is skipped with the reason `quarantined` on this host only, in its load report and so in
/// `plugboard plugin status`; the board does not change. Another version of the plug-in is not quarantined.
public struct CrashQuarantine: Sendable, Hashable {
    /// Crashes of the same release that quarantine it (at least 1).
    public var threshold: Int
    /// How close together the crashes must be: `threshold` of them within this long.
    public var window: Duration

    /// Creates a policy; the defaults quarantine a release after 3 crashes within 10 minutes.
    public init(threshold: Int = 3, window: Duration = .seconds(600)) {
        self.threshold = max(1, threshold)
        self.window = window
    }
}

/// Where a host gets feature flags from: gate evaluation and the evaluator it hands plug-ins.
public protocol HostFlagProvider: Sendable {
    /// Re-reads flag definitions; the host calls it when the board changed. Must not throw on the hot path.
    func refresh()
    /// Flag evaluation bound to a host identity (its id is the default stickiness, its properties the context).
    func evaluator(for host: HostIdentity) -> any FlagEvaluating
}

/// No flags at all: every flag is "not found", so gated plug-ins do not load.
public struct NoFlags: HostFlagProvider, FlagEvaluating {
    public init() {}
    public func refresh() {}
    public func evaluator(for host: HostIdentity) -> any FlagEvaluating { self }
    public func bool(_ flag: String, default value: Bool, context: [String: String]) -> FlagResolution<Bool> { missing(flag, value) }
    public func string(_ flag: String, default value: String, context: [String: String]) -> FlagResolution<String> { missing(flag, value) }
    public func int(_ flag: String, default value: Int, context: [String: String]) -> FlagResolution<Int> { missing(flag, value) }
    public func double(_ flag: String, default value: Double, context: [String: String]) -> FlagResolution<Double> { missing(flag, value) }
    private func missing<T>(_ flag: String, _ value: T) -> FlagResolution<T> {
        FlagResolution(
            value: value, reason: .error, errorCode: .flagNotFound,
            errorMessage: "no flag provider is configured, so flag \(flag) is not found")
    }
}

/// The secure storage a plug-in gets when the host has none configured: every call fails with a clear error.
public struct UnavailableSecureStorage: SecureStorage {
    /// The plug-in that would have owned the storage.
    public let pluginID: String
    /// Why it is unavailable.
    public let why: String

    /// Creates an unavailable storage.
    public init(pluginID: String, why: String = "this host has no secure storage configured") {
        self.pluginID = pluginID
        self.why = why
    }

    private func fail() -> SecureStorageError {
        SecureStorageError(.unavailable, "secure storage for \(pluginID) is unavailable: \(why)")
    }

    public func set(_ value: Data, forKey key: String) async throws { throw fail() }
    public func data(forKey key: String) async throws -> Data? { throw fail() }
    public func removeValue(forKey key: String) async throws { throw fail() }
    public func keys() async throws -> [String] { throw fail() }
}
