import Foundation
import Logging
public import PlugboardModel
public import PlugboardPluginAPI
import PlugboardVersioning
import Synchronization

/// The runtime a host app embeds: loads only eligible plug-ins from the board, in dependency order, isolates
/// their failures, and applies board changes (kill switches, enable, disable) while it runs.
///
/// ```swift
/// let board = try Board.open(at: "/var/lib/app/plugboard.sqlite")
/// let host = PluginHost(configuration: HostConfiguration(
///     board: board,
///     identity: HostIdentity(hostID: "web-1", environment: "production", hostVersion: "2.4.0"),
///     flags: BoardFlagProvider(board: board, environment: "production")))
/// host.register("com.example.calendar", version: "1.4.0") { _ in CalendarPlugin() }
/// await host.start()
/// for provider in host.features(CalendarProvider.self) { … }
/// ```
///
/// Two ways in: plug-ins compiled into the host, registered with ``register(_:version:factory:)``, and
/// plug-ins loaded from the `.so` artifact recorded on the board (SHA-256 checked before `dlopen`).
public actor PluginHost {
    /// A plug-in the host has activated.
    public struct ActivePlugin: Sendable {
        /// The plug-in id.
        public let pluginID: String
        /// The version loaded.
        public let version: String
        /// Compiled in, or loaded from a library.
        public let origin: Origin
        /// The instance; look features up with ``PluginHost/features(_:)``.
        public let instance: any Plugin
    }

    /// Where an active plug-in's code came from.
    public enum Origin: Sendable, Hashable {
        case compiledIn
        case dynamicLibrary(sha256: String)
    }

    struct CompiledIn: Sendable {
        let version: String
        let factory: PluginFactory
    }

    struct LoadedLibrary: Sendable {
        let version: String
        let registration: PluginRegistration
    }

    public nonisolated let configuration: HostConfiguration
    let source: any HostSource
    let loader: DynamicLoader
    let eventBus = InMemoryEventBus()

    /// The versions compiled in, by plug-in id, in the order registered.
    nonisolated let compiledIn = Mutex<[String: [CompiledIn]]>([:])
    /// What app code sees: active plug-ins in activation order. Updated before deactivation starts.
    nonisolated let lookup = Mutex<[ActivePlugin]>([])
    /// The versions of the active plug-ins, as flag context (`plugin.ID.version`).
    nonisolated let running = RunningReleases()
    nonisolated let statuses = Mutex<[String: LoadReportEntry]>([:])
    /// Approval signatures verified in earlier resolutions.
    nonisolated let verifiedApprovals = VerifiedApprovals()
    nonisolated let subscribers = Mutex<[UUID: AsyncStream<HostEvent>.Continuation]>([:])

    var libraries: [String: LoadedLibrary] = [:]
    /// Plug-ins whose board-selected version differs from the library already loaded: kept running until a restart.
    var pendingRestart: [String: String] = [:]
    var lastVersion: BoardVersion?
    var lastReport: [LoadReportEntry]?
    var lastReportStale: String?
    var reportsDisabled = false
    /// Why the snapshot in use is not current (a cached snapshot while the server is unreachable), as last said.
    var stale: String?
    var polling: Task<Void, Never>?
    /// The reconciliation running now (its passes run until no caller asked for another).
    var reconciliation: Task<Void, Never>?
    var reconcileAgain = false
    /// Set by ``stop()``: no reconciliation starts or activates anything from then on.
    var stopping = false
    /// The environment's signature policy as of the last snapshot.
    var policy: SignaturePolicy = .off
    /// The newest audit head this host accepted: it acts only on a board whose log extends it (kept in the state
    /// folder when the configuration has one). Nil until read from there, or before the first snapshot.
    var anchor: AuditCheckpoint?
    var anchorRead = false
    /// Why the board could not be proven, as last said (nil once it is proven again).
    var unproven: String?
    /// When the host fails closed if nothing newer is verified by then (see ``HostConfiguration/failClosedAfter``).
    var failClosedAt: Date?
    /// Where the host notes the plug-in code it enters and the releases that crashed it (nil: crash tracking is off).
    let crashJournal: CrashJournal?
    /// Set once the crash journal was read (and a previous process's crash recorded) on the first reconciliation.
    var crashesNoticed = false
    /// Releases this host quarantined, by `ReleaseCheck.key(_:_:)`, with their quarantine record.
    var quarantine: [String: CrashJournal.Record] = [:]
    /// The calls into plug-in code in progress, noted in the state folder's marker (nil: crash tracking is off).
    let markers: CallMarkers?
    /// Set once the host said that it runs in safe mode.
    var saidSafeMode = false
    /// The crash journal's records as the host last read or wrote them: an entry of a release that crashed this host
    /// within the crash window carries the count of its crashes, counted when the entry is made.
    var crashRecords: [CrashJournal.Record] = []
    /// Set when the first reconciliation found a crash of a previous process: it is reported before anything loads.
    var crashToReport = false

    /// Prepares the host on the configured board; nothing is loaded until ``start()``.
    public init(configuration: HostConfiguration) {
        self.configuration = configuration
        self.source = configuration.source
        self.loader = DynamicLoader(cacheFolder: configuration.dynamicLibraryCache)
        self.crashJournal = configuration.crashQuarantine == nil ? nil : configuration.stateFolder.map { CrashJournal(folder: $0) }
        self.markers = crashJournal.map { CallMarkers(journal: $0) }
        _ = DynamicLoader.interfaceIsShared  // decided now, before any plug-in library is loaded
    }

    // MARK: Registration and lookup (callable from any thread)

    /// Registers a plug-in compiled into the host: its id, a version compiled in, and its factory.
    ///
    /// Each call adds a version (registering the same version again replaces its factory), so a host may carry several
    /// versions of one plug-in: when the board's selection moves from one to another (a new release, a kill switch, a
    /// rollout's step or abort), the host deactivates the running one and activates the other in the same
    /// reconciliation, without a restart. The board still decides whether and which version loads; a selected version
    /// that is not compiled in is reported, not loaded.
    public nonisolated func register(_ pluginID: String, version: String, factory: @escaping PluginFactory) {
        compiledIn.withLock { compiled in
            compiled[pluginID, default: []].removeAll { $0.version == version }
            compiled[pluginID, default: []].append(CompiledIn(version: version, factory: factory))
        }
    }

    /// Every active plug-in that provides `feature`, in load order.
    public nonisolated func features<T>(_ feature: T.Type) -> [T] {
        lookup.withLock { $0.compactMap { $0.instance as? T } }
    }

    /// The active plug-ins, in load order.
    public nonisolated var activePlugins: [ActivePlugin] { lookup.withLock { $0 } }

    /// Flag evaluation for the host app's own code, in the host's context: its identity, and the version of every
    /// plug-in it runs as the property `plugin.ID.version` (absent while it runs none), so that a flag can require a
    /// release (`plugin.com.example.checkout.version` `SEMVER_GTE` `2.0.0`) and follows it as it comes and goes. Plug-ins
    /// get the same context through `PluginContext.flags`.
    public nonisolated var flags: any FlagEvaluating {
        RunningVersionFlags(inner: configuration.flags.evaluator(for: configuration.identity), releases: running)
    }

    /// The active instance of one plug-in, if it is active.
    public nonisolated func plugin(_ pluginID: String) -> (any Plugin)? {
        lookup.withLock { $0.first { $0.pluginID == pluginID }?.instance }
    }

    /// What happened to every plug-in the host knows of (board and compiled-in), sorted by id.
    public nonisolated var status: [LoadReportEntry] {
        statuses.withLock { $0.values.sorted { $0.pluginID < $1.pluginID } }
    }

    /// A stream of what the host does from now on.
    public nonisolated func events() -> AsyncStream<HostEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<HostEvent>.makeStream(bufferingPolicy: .bufferingNewest(1000))
        continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    // MARK: Lifecycle

    /// Loads every eligible plug-in, writes the load report, and starts watching the board for changes.
    @discardableResult
    public func start() async -> [LoadReportEntry] {
        await reconcile()
        if polling == nil {
            let interval = configuration.pollInterval
            let source = source
            polling = Task { [weak self] in
                while !Task.isCancelled {
                    await source.waitForChange(interval: interval)
                    guard let self else { return }
                    await self.pollOnce()
                }
            }
        }
        return status
    }

    /// Stops watching the board and deactivates every plug-in, dependants first.
    ///
    /// A reconciliation in flight is awaited first (it activates nothing more once the host is stopping), so that no
    /// plug-in loads after the deactivations and the last load report says that the host stopped.
    public func stop() async {
        stopping = true
        polling?.cancel()
        polling = nil
        if let running = reconciliation { await running.value }
        let active = lookup.withLock { $0 }
        for plugin in active.reversed() {
            await deactivate(plugin, reason: SkipReason(.hostStopping, "the host is stopping"), reportState: .deactivated)
        }
        // A clean stop: a feature call still in progress when the process exits is not a crash.
        markers?.close()
        await writeReportIfChanged()
        await source.finish()
        // Finish outside the lock: finishing runs onTermination, which takes the lock too.
        let continuations = subscribers.withLock { subscribers in
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        continuations.forEach { $0.finish() }
    }

    /// Checks the source's version once (for a board file `PRAGMA data_version`, a cheap read) and applies changes if
    /// it changed.
    public func pollOnce() async {
        guard let version = try? source.version(), version != lastVersion || failClosedAt.map({ Date() >= $0 }) == true else { return }
        emit(.boardChanged(dataVersion: version.dataVersion))
        await reconcile()
    }

    /// Re-reads the board and brings the set of active plug-ins in line with it.
    ///
    /// A call made while a reconciliation runs asks it for one more pass and returns when that pass is done, so that
    /// every change committed before the call is applied when it returns.
    public func reconcile() async {
        guard !stopping else { return }
        if let running = reconciliation {
            reconcileAgain = true
            await running.value
            return
        }
        let passes = Task { await self.reconcileUntilCurrent() }
        reconciliation = passes
        await passes.value
    }

    func reconcileUntilCurrent() async {
        repeat {
            reconcileAgain = false
            await reconcileOnce()
        } while reconcileAgain && !stopping
        reconciliation = nil
    }

}
