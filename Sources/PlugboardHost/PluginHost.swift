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

    private struct CompiledIn: Sendable {
        let version: String
        let factory: PluginFactory
    }

    private struct LoadedLibrary: Sendable {
        let version: String
        let registration: PluginRegistration
    }

    public nonisolated let configuration: HostConfiguration
    private let source: any HostSource
    private let loader: DynamicLoader
    private let eventBus = InMemoryEventBus()

    private nonisolated let compiledIn = Mutex<[String: CompiledIn]>([:])
    /// What app code sees: active plug-ins in activation order. Updated before deactivation starts.
    private nonisolated let lookup = Mutex<[ActivePlugin]>([])
    private nonisolated let statuses = Mutex<[String: LoadReportEntry]>([:])
    private nonisolated let subscribers = Mutex<[UUID: AsyncStream<HostEvent>.Continuation]>([:])

    private var libraries: [String: LoadedLibrary] = [:]
    /// Plug-ins whose board-selected version differs from the library already loaded: kept running until a restart.
    private var pendingRestart: [String: String] = [:]
    private var lastVersion: BoardVersion?
    private var lastReport: [LoadReportEntry]?
    private var lastReportStale: String?
    private var reportsDisabled = false
    /// Why the snapshot in use is not current (a cached snapshot while the server is unreachable), as last said.
    private var stale: String?
    private var polling: Task<Void, Never>?
    /// The reconciliation running now (its passes run until no caller asked for another).
    private var reconciliation: Task<Void, Never>?
    private var reconcileAgain = false
    /// Set by ``stop()``: no reconciliation starts or activates anything from then on.
    private var stopping = false
    /// The environment's signature policy as of the last snapshot.
    private var policy: SignaturePolicy = .off
    /// The newest audit head this host accepted: it acts only on a board whose log extends it (kept in the state
    /// folder when the configuration has one). Nil until read from there, or before the first snapshot.
    private var anchor: AuditCheckpoint?
    private var anchorRead = false
    /// Why the board could not be proven, as last said (nil once it is proven again).
    private var unproven: String?
    /// When the host fails closed if nothing newer is verified by then (see ``HostConfiguration/failClosedAfter``).
    private var failClosedAt: Date?

    /// Prepares the host on the configured board; nothing is loaded until ``start()``.
    public init(configuration: HostConfiguration) {
        self.configuration = configuration
        self.source = configuration.source
        self.loader = DynamicLoader(cacheFolder: configuration.dynamicLibraryCache)
        _ = DynamicLoader.interfaceIsShared  // decided now, before any plug-in library is loaded
    }

    // MARK: Registration and lookup (callable from any thread)

    /// Registers a plug-in compiled into the host: its id, the version compiled in, and its factory.
    /// The board still decides whether it loads; a different selected version is reported, not loaded.
    public nonisolated func register(_ pluginID: String, version: String, factory: @escaping PluginFactory) {
        compiledIn.withLock { $0[pluginID] = CompiledIn(version: version, factory: factory) }
    }

    /// Every active plug-in that provides `feature`, in load order.
    public nonisolated func features<T>(_ feature: T.Type) -> [T] {
        lookup.withLock { $0.compactMap { $0.instance as? T } }
    }

    /// The active plug-ins, in load order.
    public nonisolated var activePlugins: [ActivePlugin] { lookup.withLock { $0 } }

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

    private func reconcileUntilCurrent() async {
        repeat {
            reconcileAgain = false
            await reconcileOnce()
        } while reconcileAgain && !stopping
        reconciliation = nil
    }

    // MARK: Reconciliation

    private func reconcileOnce() async {
        let read: SourceSnapshot
        do {
            if !anchorRead {
                anchor =
                    try configuration.stateFolder.flatMap { folder throws(BoardError) in try HostAnchor.read(folder) }
                    ?? configuration.anchor
                anchorRead = true
            }
            // Only what this host can act on: enabled plug-ins, its compiled-in, active and reported ones, and their
            // dependencies. The rest of the registry costs it nothing.
            let relevant = compiledIn.withLock { Set($0.keys) }.union(lookup.withLock { $0.map(\.pluginID) })
                .union(statuses.withLock { $0.keys })
            read = try await source.snapshot(environment: configuration.identity.environment, relevantTo: relevant, anchor: anchor)
        } catch  where error.code == .integrity {
            await keepLastGoodState(error.message)
            return
        } catch {
            // A stopping host cancels its poll: nothing to say.
            if !Task.isCancelled { warn("cannot read \(source.name): \(error.message); keeping the current plug-ins") }
            return
        }
        // stop() waits for this pass: what it read must not load anything once the host is stopping.
        guard !stopping else { return }
        lastVersion = read.version
        accept(read.head)
        if read.stale != stale {
            stale = read.stale
            if let why = read.stale { warn("the host runs from \(why)") }
        }
        let snapshot = read.registry
        configuration.flags.refresh()
        policy = snapshot.signaturePolicy
        let notes = ReconcileNotes(source: source, read: read)
        var resolution = resolver(notes).resolve(snapshot)
        // Artifacts the source must bring first (a served board's, into the host's cache): fetch, then decide again.
        let missing = notes.missingArtifacts.withLock { $0.sorted() }
        if !missing.isEmpty {
            let failures = await source.fetchArtifacts(missing)
            resolution = resolver(notes, fetchFailures: failures).resolve(snapshot)
        }

        // A served board's snapshot that nothing renewed for too long: only the required plug-ins keep running.
        failClosedAt = nil
        if let after = configuration.failClosedAfter, let expires = read.expiresAt {
            let deadline = expires.addingTimeInterval(Double(after.components.seconds) + Double(after.components.attoseconds) * 1e-18)
            if Date() >= deadline {
                let reason = SkipReason(
                    .stale,
                    "the board's signed word on this host's snapshot expired at \(Timestamp.format(expires)) and nothing newer was verified since; the host fails closed"
                )
                let required = configuration.requiredPlugins
                resolution = Resolution(
                    load: resolution.load.filter { required.contains($0.pluginID) },
                    skipped: resolution.skipped
                        + resolution.load.filter { !required.contains($0.pluginID) }.map {
                            LoadDecision(pluginID: $0.pluginID, version: $0.version, skip: reason)
                        })
            } else {
                failClosedAt = deadline
            }
        }

        // Compiled-in plug-ins the board does not know are reported, never loaded.
        var decisions = resolution.skipped
        for id in compiledIn.withLock({ Array($0.keys) }).sorted() where snapshot.plugins[id] == nil {
            decisions.append(
                LoadDecision(
                    pluginID: id, version: nil, skip: SkipReason(.disabled, "\(id) is compiled in but not registered on the board")))
        }

        // 1. Deactivate what must stop, dependants first (reverse load order).
        let wanted = Dictionary(uniqueKeysWithValues: resolution.load.map { ($0.pluginID, $0.version ?? "") })
        let skips = Dictionary(decisions.map { ($0.pluginID, $0.skip) }, uniquingKeysWith: { a, _ in a })
        for plugin in lookup.withLock({ $0 }).reversed() where wanted[plugin.pluginID] != plugin.version {
            let reason =
                skips[plugin.pluginID].flatMap { $0 }
                ?? SkipReason(.restartRequired, "\(plugin.pluginID) moves to version \(wanted[plugin.pluginID] ?? "?")")
            if reason.code == .restartRequired, pendingRestart[plugin.pluginID] != reason.message {
                // A newer version of a loaded library cannot replace it in-process: keep serving, say so once.
                pendingRestart[plugin.pluginID] = reason.message
                warn(reason.message)
                continue
            }
            if reason.code == .restartRequired { continue }
            await deactivate(plugin, reason: reason, reportState: .deactivated)
        }

        // 2. Record skips for plug-ins that are not active.
        for decision in decisions {
            guard let skip = decision.skip, lookup.withLock({ !$0.contains { $0.pluginID == decision.pluginID } }) else { continue }
            let previous = statuses.withLock { $0[decision.pluginID] }
            let entry = LoadReportEntry(
                pluginID: decision.pluginID, version: decision.version,
                state: previous?.state == .deactivated && previous?.reasonCode == skip.code.rawValue ? .deactivated : .skipped,
                reasonCode: skip.code.rawValue, reason: skip.message)
            if previous != entry {
                setStatus(entry)
                if entry.state == .skipped { emit(.skipped(pluginID: decision.pluginID, version: decision.version, reason: skip)) }
            }
        }

        // 3. Activate what should run and does not, dependencies first.
        for decision in resolution.load where !stopping {
            let id = decision.pluginID
            let version = decision.version ?? ""
            if lookup.withLock({ $0.contains { $0.pluginID == id } }) { continue }
            if let missing = snapshot.plugins[id]?.versions.first(where: { $0.version == version })?.dependencies.keys.sorted()
                .first(where: { dependency in lookup.withLock { !$0.contains { $0.pluginID == dependency } } })
            {
                let why = statuses.withLock { $0[missing]?.reason } ?? "it is not active"
                record(id, version, .skipped, SkipReason(.dependencyNotLoaded, "\(id) needs \(missing), which is not active: \(why)"))
                continue
            }
            await activate(id, version: version, notes)
        }

        // 4. Keep the signature warnings of running plug-ins current (a policy changed, a key revoked or trusted).
        for plugin in lookup.withLock({ $0 }) {
            let warning = signatureWarning(plugin.pluginID, plugin.version, notes)
            guard let previous = statuses.withLock({ $0[plugin.pluginID] }), previous.state == .loaded, previous.warning != warning
            else { continue }
            setStatus(LoadReportEntry(pluginID: plugin.pluginID, version: plugin.version, state: .loaded, warning: warning))
            if let warning { warn("\(plugin.pluginID)@\(plugin.version) keeps running despite a signature problem: \(warning)") }
        }
        await writeReportIfChanged()
    }

    /// Takes `head` as the host's anchor (kept in the state folder, if any) once a snapshot it proves was read.
    private func accept(_ head: AuditCheckpoint?) {
        if unproven != nil {
            unproven = nil
            configuration.logger.notice("the board is proven again at audit row \(head?.seq ?? 0)")
        }
        guard let head, head != anchor else { return }
        anchor = head
        guard let folder = configuration.stateFolder else { return }
        do { try HostAnchor.write(head, to: folder) } catch { warn("cannot keep the host's anchor: \(error.message)") }
    }

    /// What the host does when the source cannot be proven from its anchor: it keeps what runs (its last good state),
    /// loads nothing new, and reports every plug-in that is not running as `unproven_state` with the reason.
    private func keepLastGoodState(_ problem: String) async {
        lastVersion = try? source.version()
        if unproven != problem {
            unproven = problem
            warn("\(source.name) cannot be proven, so the host keeps its last good state: \(problem)")
        }
        let active = Set(lookup.withLock { $0.map(\.pluginID) })
        let known = compiledIn.withLock { Set($0.keys) }.union(statuses.withLock { $0.keys })
        for id in known.subtracting(active).sorted() {
            let previous = statuses.withLock { $0[id] }
            let reason = SkipReason(.unprovenState, "\(problem); run plugboard audit verify")
            let entry = LoadReportEntry(
                pluginID: id, version: previous?.version, state: .skipped, reasonCode: reason.code.rawValue, reason: reason.message)
            if previous != entry {
                setStatus(entry)
                emit(.skipped(pluginID: id, version: previous?.version, reason: reason))
            }
        }
        await writeReportIfChanged()
    }

    /// The resolver for one snapshot. An artifact not on this machine is noted in `notes` and refused for now; once the
    /// source was asked for them (`fetchFailures` given), one still missing is refused with why.
    private func resolver(_ notes: ReconcileNotes, fetchFailures: [String: String]? = nil) -> Resolver {
        let hostVersion = SemanticVersion(parsing: configuration.identity.hostVersion) ?? (try! SemanticVersion("0.0.0"))
        let evaluator = configuration.flags.evaluator(for: configuration.identity)
        let compiled = compiledIn.withLock { $0.mapValues(\.version) }
        let loaded = libraries.mapValues(\.version)
        let source = source
        let environment = configuration.identity.environment
        let policy = policy
        return Resolver(
            hostVersion: hostVersion,
            gate: { flag in evaluator.bool(flag, default: false, context: [:]).value },
            availability: { id, version in
                Self.availability(
                    of: id, version, compiled: compiled, loaded: loaded,
                    check: { () throws(BoardError) in try notes.check(id, version.version) },
                    artifact: { sha in
                        if let path = source.localArtifact(sha256: sha) { return .success(path) }
                        guard let fetchFailures else {
                            notes.missingArtifacts.withLock { _ = $0.insert(sha) }
                            return .failure(MissingArtifact(why: "is not on this machine yet"))
                        }
                        return .failure(
                            MissingArtifact(why: "could not be fetched from \(source.name): \(fetchFailures[sha] ?? "no reason given")"))
                    }, environment: environment, policy: policy)
            })
    }

    private func activate(_ id: String, version: String, _ notes: ReconcileNotes) async {
        guard let entry = notes.read.registry.plugins[id]?.versions.first(where: { $0.version == version }) else { return }
        let factory: PluginFactory
        let origin: Origin
        if let compiled = compiledIn.withLock({ $0[id] }) {
            factory = compiled.factory
            origin = .compiledIn
        } else if let sha = entry.artifactSHA256 {
            if let library = libraries[id] {
                factory = library.registration.factory
            } else {
                guard let path = source.localArtifact(sha256: sha) else {
                    record(id, version, .failed, SkipReason(.loadFailed, "the artifact of \(id)@\(version) is not on this machine"))
                    return
                }
                switch loader.load(
                    pluginID: id, version: version, path: path, expectedSHA256: sha, entry: entry.entry ?? PluginABI.defaultEntrySymbol)
                {
                case .success(let registration):
                    libraries[id] = LoadedLibrary(version: version, registration: registration)
                    factory = registration.factory
                case .failure(let reason):
                    record(id, version, reason.code == .digestMismatch ? .skipped : .failed, reason)
                    return
                }
            }
            origin = .dynamicLibrary(sha256: sha)
        } else {
            record(id, version, .skipped, SkipReason(.noImplementation, "\(id)@\(version) has no implementation in this host"))
            return
        }

        let context = makeContext(id, version: version, capabilities: Set(entry.capabilities))
        do {
            let instance = try factory(context)
            try await instance.activate(context: context)
            lookup.withLock { $0.append(ActivePlugin(pluginID: id, version: version, origin: origin, instance: instance)) }
            let warning = signatureWarning(id, version, notes)
            setStatus(LoadReportEntry(pluginID: id, version: version, state: .loaded, warning: warning))
            emit(.loaded(pluginID: id, version: version))
            configuration.logger.info("loaded \(id)@\(version)")
            if let warning { warn("loaded \(id)@\(version) despite a signature problem: \(warning)") }
        } catch {
            record(id, version, .failed, SkipReason(.activationFailed, "\(id)@\(version) failed to activate: \(error)"))
        }
    }

    /// Under the `warn` policy, the signature problem of a release the host loads anyway (nil when it has none).
    private func signatureWarning(_ id: String, _ version: String, _ notes: ReconcileNotes) -> String? {
        guard policy == .warn else { return nil }
        let environment = configuration.identity.environment
        do {
            guard let verdict = try notes.check(id, version).signature,
                let reason = SkipReason(verdict, policy: .warn, environment: environment)
            else { return nil }
            return "\(reason.code.rawValue): \(reason.message)"
        } catch {
            return "cannot read the signatures of \(id)@\(version): \(error.message)"
        }
    }

    private func deactivate(_ plugin: ActivePlugin, reason: SkipReason, reportState: LoadReportEntry.State) async {
        // Detach first: from here on no lookup hands the plug-in out.
        lookup.withLock { $0.removeAll { $0.pluginID == plugin.pluginID } }
        eventBus.endSubscriptions(of: plugin.pluginID)
        await plugin.instance.deactivate()
        setStatus(
            LoadReportEntry(
                pluginID: plugin.pluginID, version: plugin.version, state: reportState, reasonCode: reason.code.rawValue,
                reason: reason.message))
        emit(.deactivated(pluginID: plugin.pluginID, version: plugin.version, reason: reason))
        configuration.logger.notice("deactivated \(plugin.pluginID)@\(plugin.version): \(reason.message)")
    }

    private func makeContext(_ id: String, version: String, capabilities: Set<String>) -> PluginContext {
        var logger = Logger(label: "plugboard.plugin.\(id)")
        logger.logLevel = configuration.logger.logLevel
        let storage: any SecureStorage
        if capabilities.contains("secure-storage") {
            do { storage = try configuration.secureStorage(id) } catch {
                storage = UnavailableSecureStorage(pluginID: id, why: String(describing: error))
            }
        } else {
            storage = UnavailableSecureStorage(pluginID: id, why: "its manifest does not request the secure-storage capability")
        }
        return PluginContext(
            pluginID: id, version: version, host: configuration.identity, logger: logger, secureStorage: storage,
            flags: configuration.flags.evaluator(for: configuration.identity),
            configuration: configuration.configuration(id), events: eventBus.bound(to: id),
            services: configuration.services)
    }

    // MARK: Reporting

    private func record(_ id: String, _ version: String?, _ state: LoadReportEntry.State, _ reason: SkipReason) {
        setStatus(LoadReportEntry(pluginID: id, version: version, state: state, reasonCode: reason.code.rawValue, reason: reason.message))
        emit(
            state == .failed
                ? .failed(pluginID: id, version: version, reason: reason) : .skipped(pluginID: id, version: version, reason: reason))
        configuration.logger.warning("\(state.rawValue) \(id)\(version.map { "@\($0)" } ?? ""): \(reason.message)")
    }

    private func setStatus(_ entry: LoadReportEntry) {
        statuses.withLock { $0[entry.pluginID] = entry }
    }

    private func writeReportIfChanged() async {
        let report = status
        guard report != lastReport || stale != lastReportStale, !reportsDisabled else { return }
        do {
            try await source.writeLoadReport(configuration.identity, entries: report, source: stale)
            // A load report does not change the board's version (it is telemetry), and re-reading the version
            // here could swallow a change another process committed meanwhile.
            lastReport = report
            lastReportStale = stale
        } catch  where error.code == .notAllowed {
            // Said once: a read-only host (or one whose token may not report) keeps working without reports.
            reportsDisabled = true
            warn("cannot write load reports to \(source.name) (\(error.message)); the host keeps running without them")
        } catch {
            // Unreachable for now (a served board): the report goes out with the next change or reconnection.
            lastReport = nil
        }
    }

    private func warn(_ message: String) {
        configuration.logger.warning("\(message)")
        emit(.warning(message))
    }

    private nonisolated func emit(_ event: HostEvent) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }
}

/// What one reconciliation learns about releases: the check of each (made once, however often the resolver, a second
/// resolution after a download and the signature warnings ask) and the artifacts missing on this machine.
final class ReconcileNotes: Sendable {
    let source: any HostSource
    let read: SourceSnapshot
    let missingArtifacts = Mutex<Set<String>>([])
    private let checks = Mutex<[String: Result<ReleaseCheck, BoardError>]>([:])

    init(source: any HostSource, read: SourceSnapshot) {
        self.source = source
        self.read = read
    }

    /// The check of `pluginID@version` in this reconciliation's snapshot.
    func check(_ pluginID: String, _ version: String) throws(BoardError) -> ReleaseCheck {
        let key = ReleaseCheck.key(pluginID, version)
        if let known = checks.withLock({ $0[key] }) { return try known.get() }
        let result: Result<ReleaseCheck, BoardError>
        do throws(BoardError) {
            result = .success(try source.check(pluginID: pluginID, version: version, in: read))
        } catch {
            result = .failure(error)
        }
        checks.withLock { $0[key] = result }
        return try result.get()
    }
}
