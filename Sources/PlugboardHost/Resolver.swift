public import PlugboardModel
public import PlugboardVersioning

/// Decides which plug-ins a host loads, applying the loading rules to a `RegistrySnapshot`. Pure: no I/O.
///
/// A plug-in P at version V is loaded only if all hold:
/// 1. P is enabled in the host's environment, and V is the pinned version, or else the highest release that is
///    not yanked, not killed and whose `host` range contains the host's API version; when P has a rollout
///    (`RegistrySnapshot.Plugin.rollout`), only the releases it allows this host count (`Rollout.allows(_:forHost:)`:
///    the rolled-out release in the host's cohort, and releases up to the previous one), and P is skipped as `rollout`
///    when none does; without one, in a protected environment (`RegistrySnapshot.approvedReleasesOnly`), only releases
///    up to the newest one a change took in (`RegistrySnapshot.Plugin.approvedVersion`) count, and P is skipped as
///    `unapproved` when none does. A pinned
///    version ignores rollouts and that bound;
/// 2. no kill switch covers P, P@V or all plug-ins, and where signed approvals are required, P's enablement carries
///    enough valid ones (``/PlugboardModel/ApprovalCheck``, with the host's `approvals` anchor); the snapshot's
///    advisories (`RegistrySnapshot.advisories`) leave out the releases they stop, and those they refuse for a new load
///    unless the host runs it (`running`), as kill switches of those versions would;
/// 3. P's gate flag, if any, is on for the host's context;
/// 4. every dependency resolves to a loaded plug-in within its range, with no cycles;
/// 5. the host did not quarantine P@V for crashing it (checked by the `quarantine` closure);
/// 6. the host can provide V — a compiled-in factory for exactly V, or an artifact whose SHA-256 matches the
///    digest recorded at registration (checked by the `availability` closure).
public struct Resolver: Sendable {
    /// The host's API version, matched against each manifest's `host` range.
    public let hostVersion: SemanticVersion
    /// The host's id, which decides its cohort in each rollout (rule 1).
    public let hostID: String
    /// Evaluates a gate flag for the host's context.
    public let gate: @Sendable (String) -> Bool
    /// Why the host quarantined P@V (rule 5, a `quarantined` reason); nil means it did not.
    public let quarantine: @Sendable (_ pluginID: String, _ version: String) -> SkipReason?
    /// Whether the host can provide P@V (rule 6); nil means yes.
    public let availability: @Sendable (_ pluginID: String, _ version: RegistrySnapshot.Version) -> SkipReason?
    /// The approver keys the host trusts itself (rule 2); nil trusts the board's approvers and policy.
    public let approvals: ApprovalAnchor?
    /// Signatures of approvals already verified, kept by the host across resolutions.
    let verifiedApprovals: VerifiedApprovals?
    /// The version of each plug-in this host runs, by id: an advisory that refuses new loads lets the host keep it.
    var running: [String: String] = [:]

    /// Version ranges and versions parsed once per resolution (the same texts recur across passes and plug-ins).
    final class Parsed {
        private var ranges: [String: VersionRange?] = [:]
        private var versions: [String: SemanticVersion?] = [:]

        func range(_ text: String) -> VersionRange? {
            if let cached = ranges[text] { return cached }
            let range = VersionRange(parsing: text)
            ranges[text] = range
            return range
        }

        func version(_ text: String) -> SemanticVersion? {
            if let cached = versions[text] { return cached }
            let version = SemanticVersion(parsing: text)
            versions[text] = version
            return version
        }
    }

    /// Resolves every plug-in of the snapshot.
    public func resolve(_ snapshot: RegistrySnapshot) -> Resolution {
        let parsed = Parsed()
        var skipped: [String: LoadDecision] = [:]
        var candidates: [String: RegistrySnapshot.Version] = [:]

        // Rules 1, 2, 3, 5 and 6, per plug-in.
        for plugin in snapshot.plugins.values {
            switch select(plugin, in: snapshot, parsed) {
            case .success(let version): candidates[plugin.id] = version
            case .failure(let failure):
                skipped[plugin.id] = LoadDecision(pluginID: plugin.id, version: failure.version, skip: failure.reason)
            }
        }

        // Rule 4: drop candidates whose dependencies do not resolve, until nothing changes; then break cycles.
        // Ends when every remaining candidate can be ordered (each pass removes at least one plug-in otherwise).
        while true {
            var changed = false
            for id in candidates.keys.sorted() {
                guard let version = candidates[id] else { continue }
                if let reason = dependencyProblem(id, version, candidates: candidates, skipped: skipped, snapshot: snapshot, parsed) {
                    candidates[id] = nil
                    skipped[id] = LoadDecision(pluginID: id, version: version.version, skip: reason)
                    changed = true
                }
            }
            if changed { continue }
            let order = topologicalOrder(candidates)
            if order.count == candidates.count {
                return Resolution(
                    load: order.map { LoadDecision(pluginID: $0, version: candidates[$0]?.version, skip: nil) },
                    skipped: skipped.keys.sorted().compactMap { skipped[$0] })
            }
            // Something is left unordered, so at least one cycle remains: skip its members and go round again.
            let members = cycleMembers(candidates, unordered: Set(candidates.keys).subtracting(order)).sorted()
            for id in members {
                skipped[id] = LoadDecision(
                    pluginID: id, version: candidates[id]?.version,
                    skip: SkipReason(
                        .dependencyCycle,
                        "\(id) is in a dependency cycle (\(members.joined(separator: " -> "))); break the cycle in the manifests"))
                candidates[id] = nil
            }
        }
    }

    private struct Refusal: Error {
        let version: String?
        let reason: SkipReason
    }

    /// Rules 1, 2, 3, 5 and 6 for one plug-in.
    private func select(_ plugin: RegistrySnapshot.Plugin, in snapshot: RegistrySnapshot, _ parsed: Parsed) -> Result<
        RegistrySnapshot.Version, Refusal
    > {
        func worksWithHost(_ version: RegistrySnapshot.Version) -> Bool {
            guard let text = version.hostRange else { return true }
            return parsed.range(text)?.contains(hostVersion) ?? false
        }
        let id = plugin.id
        guard plugin.enabled else {
            return .failure(Refusal(version: nil, reason: SkipReason(.disabled, "\(id) is not enabled in \(snapshot.environment)")))
        }
        if snapshot.allKilled {
            return .failure(
                Refusal(
                    version: nil,
                    reason: SkipReason(.killed, "a kill switch covers all plug-ins (\(snapshot.allKilledReason ?? "no reason given"))")))
        }
        if plugin.killed {
            return .failure(
                Refusal(version: nil, reason: SkipReason(.killed, "a kill switch covers \(id) (\(plugin.killReason ?? "no reason given"))"))
            )
        }
        if let problem = ApprovalCheck.problem(
            pluginID: id, environment: snapshot.environment, evidence: snapshot.approvals, anchor: approvals,
            verifies: verifiedApprovals?.verifies ?? ApprovalStatement.verifies)
        {
            return .failure(Refusal(version: nil, reason: SkipReason(.unapproved, problem)))
        }
        let version: RegistrySnapshot.Version
        if let pinned = plugin.pinnedVersion {
            guard let match = plugin.versions.first(where: { $0.version == pinned }) else {
                return .failure(
                    Refusal(
                        version: pinned, reason: SkipReason(.pinnedVersionMissing, "\(id) is pinned to \(pinned), which is not registered"))
                )
            }
            if match.killed {
                return .failure(
                    Refusal(version: pinned, reason: SkipReason(.killed, "a kill switch covers \(id)@\(pinned), the pinned version")))
            }
            if let refusal = advisoryRefusal(id, pinned, snapshot) { return .failure(Refusal(version: pinned, reason: refusal)) }
            if !worksWithHost(match) {
                return .failure(
                    Refusal(
                        version: pinned,
                        reason: SkipReason(
                            .incompatibleHost, "\(id)@\(pinned) (pinned) needs host \(match.hostRange ?? "*"), this host is \(hostVersion)")
                    ))
            }
            version = match
        } else {
            var live = plugin.versions.filter { !$0.yanked && !$0.killed && !(parsed.version($0.version)?.isPrerelease ?? true) }
            guard !live.isEmpty else {
                let why = plugin.versions.isEmpty ? "has no registered version" : "has no release left that is neither yanked nor killed"
                return .failure(Refusal(version: nil, reason: SkipReason(.yanked, "\(id) \(why)")))
            }
            // Advisories: a release one stops is left out as a killed one is, one that refuses new loads unless it runs here.
            if snapshot.advisories != nil {
                let clear = live.filter { advisoryRefusal(id, $0.version, snapshot) == nil }
                if clear.isEmpty, let first = live.first, let refusal = advisoryRefusal(id, first.version, snapshot) {
                    return .failure(Refusal(version: first.version, reason: refusal))
                }
                live = clear
            }
            if let rollout = plugin.rollout {
                live = Self.allowed(live, by: rollout, hostID: hostID, parsed)
                guard !live.isEmpty else {
                    return .failure(Refusal(version: nil, reason: Self.nothingLive(under: rollout, hostID: hostID)))
                }
            } else if snapshot.approvedReleasesOnly == true {
                // A protected environment runs no release newer than the one a change took in.
                guard let approved = plugin.approvedVersion else {
                    return .failure(
                        Refusal(
                            version: nil,
                            reason: SkipReason(
                                .unapproved,
                                "no release of \(id) was taken in by a change in \(snapshot.environment), which is protected (enabling it there takes in its newest release, as a change request)"
                            )))
                }
                let ceiling = parsed.version(approved)
                live = live.filter { release in
                    guard let ceiling, let version = parsed.version(release.version) else { return false }
                    return version <= ceiling
                }
                guard !live.isEmpty else {
                    return .failure(
                        Refusal(
                            version: nil,
                            reason: SkipReason(
                                .unapproved,
                                "no live release of \(id) is at or below \(approved), the newest release a change took in for \(snapshot.environment)"
                            )))
                }
            }
            guard let match = live.first(where: worksWithHost) else {
                let ranges = Set(live.compactMap(\.hostRange)).sorted().joined(separator: ", ")
                return .failure(
                    Refusal(
                        version: live.first?.version,
                        reason: SkipReason(
                            .incompatibleHost, "no release of \(id) works with host API \(hostVersion) (they need \(ranges))")))
            }
            version = match
        }
        if let flag = version.gate, !gate(flag) {
            return .failure(Refusal(version: version.version, reason: SkipReason(.gateOff, "the gate flag \(flag) is off for this host")))
        }
        if let problem = quarantine(id, version.version) {
            return .failure(Refusal(version: version.version, reason: problem))
        }
        if let problem = availability(id, version) {
            return .failure(Refusal(version: version.version, reason: problem))
        }
        return .success(version)
    }

    private func dependencyProblem(
        _ id: String, _ version: RegistrySnapshot.Version, candidates: [String: RegistrySnapshot.Version],
        skipped: [String: LoadDecision], snapshot: RegistrySnapshot, _ parsed: Parsed
    ) -> SkipReason? {
        for (dependency, rangeText) in version.dependencies.sorted(by: { $0.key < $1.key }) {
            guard snapshot.plugins[dependency] != nil else {
                return SkipReason(.missingDependency, "\(id) needs \(dependency) \(rangeText), which is not registered")
            }
            guard let resolved = candidates[dependency] else {
                let why = skipped[dependency]?.skip?.message ?? "it is not loaded"
                return SkipReason(.dependencyNotLoaded, "\(id) needs \(dependency), which is not loaded: \(why)")
            }
            guard let resolvedVersion = parsed.version(resolved.version), let range = parsed.range(rangeText),
                range.contains(resolvedVersion)
            else {
                return SkipReason(
                    .incompatibleDependency,
                    "\(id) needs \(dependency) \(rangeText), but \(dependency)@\(resolved.version) is the one loaded")
            }
        }
        return nil
    }

    /// Plug-ins that lie on a dependency cycle (not those that merely depend on one: they are skipped
    /// afterwards because their dependency is not loaded).
    /// `unordered` are the candidates a topological ordering left out.
    private func cycleMembers(_ candidates: [String: RegistrySnapshot.Version], unordered: Set<String>) -> Set<String> {
        func edges(_ id: String) -> Set<String> { Set(candidates[id]?.dependencies.keys ?? [:].keys).intersection(unordered) }
        return unordered.filter { start in
            var seen: Set<String> = []
            var stack = Array(edges(start))
            while let next = stack.popLast() {
                if next == start { return true }
                if seen.insert(next).inserted { stack.append(contentsOf: edges(next)) }
            }
            return false
        }
    }

    /// Kahn's algorithm over candidate → dependency edges, layer by layer with each layer sorted by id (so the
    /// order is deterministic). Plug-ins on a cycle, or that depend on one, are left out. O(V log V + E).
    private func topologicalOrder(_ candidates: [String: RegistrySnapshot.Version]) -> [String] {
        var waitingOn: [String: Int] = [:]
        var dependents: [String: [String]] = [:]
        for (id, version) in candidates {
            let dependencies = version.dependencies.keys.filter { candidates[$0] != nil }
            waitingOn[id] = dependencies.count
            for dependency in dependencies { dependents[dependency, default: []].append(id) }
        }
        var order: [String] = []
        var layer = waitingOn.filter { $0.value == 0 }.map(\.key).sorted()
        while !layer.isEmpty {
            order.append(contentsOf: layer)
            var next: [String] = []
            for id in layer {
                for dependent in dependents[id] ?? [] {
                    waitingOn[dependent, default: 0] -= 1
                    if waitingOn[dependent] == 0 { next.append(dependent) }
                }
            }
            layer = next.sorted()
        }
        return order
    }
}

extension Resolver {
    /// Creates a resolver for the host `hostID`, which decides the host's cohort in rollouts (the empty id, the default,
    /// is one host id like any other: give the host's own).
    public init(
        hostVersion: SemanticVersion, hostID: String = "", gate: @escaping @Sendable (String) -> Bool,
        quarantine: @escaping @Sendable (String, String) -> SkipReason? = { _, _ in nil },
        availability: @escaping @Sendable (String, RegistrySnapshot.Version) -> SkipReason?, approvals: ApprovalAnchor? = nil
    ) {
        self.init(
            hostVersion: hostVersion, hostID: hostID, gate: gate, quarantine: quarantine, availability: availability, approvals: approvals,
            verifiedApprovals: nil)
    }
}
