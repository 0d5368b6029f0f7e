import Foundation
import Logging
import PlugboardModel
import PlugboardPluginAPI
import PlugboardVersioning
import Synchronization

/// Reconciliation: what the board allows, proven, brought in line with what runs.
extension PluginHost {
    func reconcileOnce() async {
        noticeCrashes()
        let read: SourceSnapshot
        // The version this pass answers: a change the source notes while the pass reads (a retry it schedules) makes the
        // next poll read again, never one that this pass's outcome hides.
        let attempted = try? source.version()
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
            await keepLastGoodState(error.message, readAt: attempted)
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
        await reportCrashBeforeLoading()
        let snapshot = read.registry
        applyQuarantineReleases(snapshot)
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
        if configuration.safeMode { resolution = Self.safeMode(resolution) }

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
        let hostID = configuration.identity.hostID
        for plugin in lookup.withLock({ $0 }).reversed() where wanted[plugin.pluginID] != plugin.version {
            let id = plugin.pluginID
            let skip = skips[id].flatMap { $0 }
            // A kill switch, a disable, … or a rollout that no longer allows the running release on this host (aborted,
            // or the host left its cohort): the release stops now, like a kill, whatever its origin. A compiled-in
            // plug-in's previous version activates in step 3; a library stays loaded, so the previous release of a
            // dynamic plug-in waits for a restart (restart_required) like any other version change of a library.
            if let reason = skip.flatMap({ $0.code == .restartRequired ? nil : $0 })
                ?? Resolver.withdrawal(of: plugin.version, snapshot.plugins[id], hostID: hostID)
            {
                pendingRestart[id] = nil
                await deactivate(plugin, reason: reason, reportState: .deactivated)
                continue
            }
            // A kill switch over the running version stops it now, whatever replaces it (a library's other version
            // waits for a restart; a compiled-in one activates in step 3).
            if snapshot.plugins[id]?.versions.first(where: { $0.version == plugin.version })?.killed == true {
                pendingRestart[id] = nil
                let next = wanted[id].map { "; \(id) moves to \($0)" } ?? ""
                await deactivate(
                    plugin, reason: SkipReason(.killed, "a kill switch covers \(id)@\(plugin.version)\(next)"), reportState: .deactivated)
                continue
            }
            // So does an advisory that stops the running version.
            if let stop = Resolver.advisoryStop(id, plugin.version, snapshot) {
                pendingRestart[id] = nil
                await deactivate(plugin, reason: stop, reportState: .deactivated)
                continue
            }
            // Another version compiled into the host: switched in-process (step 3 activates it in this pass).
            if plugin.origin == .compiledIn, let next = wanted[id] {
                await deactivate(
                    plugin, reason: SkipReason(.replaced, "\(id) moves from \(plugin.version) to \(next)"), reportState: .deactivated)
                continue
            }
            // A newer version of a loaded library cannot replace it in-process: keep serving, say so once.
            let reason = skip ?? SkipReason(.restartRequired, "\(id) moves to version \(wanted[id] ?? "?")")
            if pendingRestart[id] != reason.message {
                pendingRestart[id] = reason.message
                warn(reason.message)
            }
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

        // 4. Keep the warnings of running plug-ins current (a policy changed, a key revoked or trusted, an advisory).
        for plugin in lookup.withLock({ $0 }) {
            let warning = loadWarning(plugin.pluginID, plugin.version, notes)
            guard let previous = statuses.withLock({ $0[plugin.pluginID] }), previous.state == .loaded, previous.warning != warning
            else { continue }
            setStatus(LoadReportEntry(pluginID: plugin.pluginID, version: plugin.version, state: .loaded, warning: warning))
            if let warning { warn("\(plugin.pluginID)@\(plugin.version) keeps running despite: \(warning)") }
        }
        await writeReportIfChanged()
    }

    /// Takes `head` as the host's anchor (kept in the state folder, if any) once a snapshot it proves was read.
    func accept(_ head: AuditCheckpoint?) {
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
    ///
    /// `readAt` is the source's version when the refused read began: a change since then (a read the source retries)
    /// wakes the host again.
    func keepLastGoodState(_ problem: String, readAt: BoardVersion?) async {
        lastVersion = readAt
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
    func resolver(_ notes: ReconcileNotes, fetchFailures: [String: String]? = nil) -> Resolver {
        let hostVersion = SemanticVersion(parsing: configuration.identity.hostVersion) ?? (try! SemanticVersion("0.0.0"))
        let evaluator = flags
        let compiled = compiledIn.withLock { $0.mapValues { $0.map(\.version) } }
        let loaded = libraries.mapValues(\.version)
        let source = source
        let environment = configuration.identity.environment
        let policy = policy
        let quarantine = quarantine
        let hostID = configuration.identity.hostID
        let window = Self.describe(configuration.crashQuarantine?.window ?? .zero)
        let approvals = configuration.approvals
        var resolver = Resolver(
            hostVersion: hostVersion, hostID: hostID,
            gate: { flag in evaluator.bool(flag, default: false, context: [:]).value },
            quarantine: { id, version in
                Self.quarantineReason(id, version, quarantine[ReleaseCheck.key(id, version)], window: window, hostID: hostID)
            },
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
            }, approvals: approvals, verifiedApprovals: verifiedApprovals)
        resolver.running = Dictionary(lookup.withLock { $0.map { ($0.pluginID, $0.version) } }, uniquingKeysWith: { a, _ in a })
        return resolver
    }

    func activate(_ id: String, version: String, _ notes: ReconcileNotes) async {
        guard let entry = notes.read.registry.plugins[id]?.versions.first(where: { $0.version == version }) else { return }
        let factory: PluginFactory
        let origin: Origin
        if let compiled = compiledIn.withLock({ $0[id]?.first { $0.version == version } }) {
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
                let loading = entering(id, version, .load)
                let loaded = loader.load(
                    pluginID: id, version: version, path: path, expectedSHA256: sha, entry: entry.entry ?? PluginABI.defaultEntrySymbol)
                left(loading)
                switch loaded {
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
        let activated: Result<any Plugin, any Error>
        let activating = entering(id, version, .activate)
        do {
            let instance = try factory(context)
            try await instance.activate(context: context)
            activated = .success(instance)
        } catch {
            activated = .failure(error)
        }
        left(activating)
        switch activated {
        case .success(let instance):
            running.update(
                lookup.withLock { active in
                    active.append(ActivePlugin(pluginID: id, version: version, origin: origin, instance: instance))
                    return active
                })
            let warning = loadWarning(id, version, notes)
            setStatus(LoadReportEntry(pluginID: id, version: version, state: .loaded, warning: warning))
            emit(.loaded(pluginID: id, version: version))
            configuration.logger.info("loaded \(id)@\(version)")
            if let warning { warn("loaded \(id)@\(version) despite: \(warning)") }
        case .failure(let error):
            record(id, version, .failed, SkipReason(.activationFailed, "\(id)@\(version) failed to activate: \(error)"))
        }
    }

    /// Under the `warn` policy, the signature problem of a release the host loads anyway (nil when it has none).
    func signatureWarning(_ id: String, _ version: String, _ notes: ReconcileNotes) -> String? {
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

    func deactivate(_ plugin: ActivePlugin, reason: SkipReason, reportState: LoadReportEntry.State) async {
        // Detach first: from here on no lookup hands the plug-in out.
        running.update(
            lookup.withLock { active in
                active.removeAll { $0.pluginID == plugin.pluginID }
                return active
            })
        eventBus.endSubscriptions(of: plugin.pluginID)
        let deactivating = entering(plugin.pluginID, plugin.version, .deactivate)
        await plugin.instance.deactivate()
        left(deactivating)
        setStatus(
            LoadReportEntry(
                pluginID: plugin.pluginID, version: plugin.version, state: reportState, reasonCode: reason.code.rawValue,
                reason: reason.message))
        emit(.deactivated(pluginID: plugin.pluginID, version: plugin.version, reason: reason))
        configuration.logger.notice("deactivated \(plugin.pluginID)@\(plugin.version): \(reason.message)")
    }

    func makeContext(_ id: String, version: String, capabilities: Set<String>) -> PluginContext {
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
            flags: flags,
            configuration: configuration.configuration(id), events: eventBus.bound(to: id),
            services: configuration.services)
    }
}

/// What one reconciliation learns about releases: the check of each (made once, however often the resolver, a second
/// resolution after a download and the signature warnings ask) and the artifacts missing on this machine.
final class ReconcileNotes: Sendable {
    let source: any HostSource
    let read: SourceSnapshot
    let missingArtifacts = Mutex<Set<String>>([])
    let checks = Mutex<[String: Result<ReleaseCheck, BoardError>]>([:])

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
