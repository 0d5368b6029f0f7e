import PlugboardStore
import PlugboardVersioning

/// Decides which plug-ins a host loads, applying the loading rules to a ``RegistrySnapshot``. Pure: no I/O.
///
/// A plug-in P at version V is loaded only if all hold:
/// 1. P is enabled in the host's environment, and V is the pinned version, or else the highest release that is
///    not yanked, not killed and whose `host` range contains the host's API version;
/// 2. no kill switch covers P, P@V or all plug-ins;
/// 3. P's gate flag, if any, is on for the host's context;
/// 4. every dependency resolves to a loaded plug-in within its range, with no cycles;
/// 5. the host can provide V — a compiled-in factory for exactly V, or an artifact whose SHA-256 matches the
///    digest recorded at registration (checked by the `availability` closure).
public struct Resolver: Sendable {
    /// The host's API version, matched against each manifest's `host` range.
    public let hostVersion: SemanticVersion
    /// Evaluates a gate flag for the host's context.
    public let gate: @Sendable (String) -> Bool
    /// Whether the host can provide P@V (rule 5); nil means yes.
    public let availability: @Sendable (_ pluginID: String, _ version: RegistrySnapshot.Version) -> SkipReason?

    /// Creates a resolver.
    public init(hostVersion: SemanticVersion, gate: @escaping @Sendable (String) -> Bool,
                availability: @escaping @Sendable (String, RegistrySnapshot.Version) -> SkipReason?) {
        self.hostVersion = hostVersion
        self.gate = gate
        self.availability = availability
    }

    /// Resolves every plug-in of the snapshot.
    public func resolve(_ snapshot: RegistrySnapshot) -> Resolution {
        var skipped: [String: LoadDecision] = [:]
        var candidates: [String: RegistrySnapshot.Version] = [:]

        // Rules 1, 2, 3 and 5, per plug-in.
        for plugin in snapshot.plugins.values {
            switch select(plugin, in: snapshot) {
            case .success(let version): candidates[plugin.id] = version
            case .failure(let failure): skipped[plugin.id] = LoadDecision(pluginID: plugin.id, version: failure.version, skip: failure.reason)
            }
        }

        // Rule 4: drop candidates whose dependencies do not resolve, until nothing changes; then break cycles.
        while true {
            var changed = false
            for id in candidates.keys.sorted() {
                guard let version = candidates[id] else { continue }
                if let reason = dependencyProblem(id, version, candidates: candidates, skipped: skipped, snapshot: snapshot) {
                    candidates[id] = nil
                    skipped[id] = LoadDecision(pluginID: id, version: version.version, skip: reason)
                    changed = true
                }
            }
            if changed { continue }
            let cyclic = cycleMembers(candidates)
            if cyclic.isEmpty { break }
            let members = cyclic.sorted()
            for id in members {
                skipped[id] = LoadDecision(pluginID: id, version: candidates[id]?.version, skip: SkipReason(
                    .dependencyCycle, "\(id) is in a dependency cycle (\(members.joined(separator: " -> "))); break the cycle in the manifests"))
                candidates[id] = nil
            }
        }

        let order = topologicalOrder(candidates)
        return Resolution(
            load: order.map { LoadDecision(pluginID: $0, version: candidates[$0]?.version, skip: nil) },
            skipped: skipped.keys.sorted().compactMap { skipped[$0] })
    }

    private struct Refusal: Error {
        let version: String?
        let reason: SkipReason
    }

    /// Rules 1, 2, 3 and 5 for one plug-in.
    private func select(_ plugin: RegistrySnapshot.Plugin, in snapshot: RegistrySnapshot) -> Result<RegistrySnapshot.Version, Refusal> {
        let id = plugin.id
        guard plugin.enabled else {
            return .failure(Refusal(version: nil, reason: SkipReason(.disabled, "\(id) is not enabled in \(snapshot.environment)")))
        }
        if snapshot.allKilled {
            return .failure(Refusal(version: nil, reason: SkipReason(.killed, "a kill switch covers all plug-ins (\(snapshot.allKilledReason ?? "no reason given"))")))
        }
        if plugin.killed {
            return .failure(Refusal(version: nil, reason: SkipReason(.killed, "a kill switch covers \(id) (\(plugin.killReason ?? "no reason given"))")))
        }
        let version: RegistrySnapshot.Version
        if let pinned = plugin.pinnedVersion {
            guard let match = plugin.versions.first(where: { $0.version == pinned }) else {
                return .failure(Refusal(version: pinned, reason: SkipReason(.pinnedVersionMissing, "\(id) is pinned to \(pinned), which is not registered")))
            }
            if match.killed {
                return .failure(Refusal(version: pinned, reason: SkipReason(.killed, "a kill switch covers \(id)@\(pinned), the pinned version")))
            }
            if !worksWithHost(match) {
                return .failure(Refusal(version: pinned, reason: SkipReason(.incompatibleHost, "\(id)@\(pinned) (pinned) needs host \(match.hostRange ?? "*"), this host is \(hostVersion)")))
            }
            version = match
        } else {
            let live = plugin.versions.filter { !$0.yanked && !$0.killed && !(SemanticVersion(parsing: $0.version)?.isPrerelease ?? true) }
            guard !live.isEmpty else {
                let why = plugin.versions.isEmpty ? "has no registered version" : "has no release left that is neither yanked nor killed"
                return .failure(Refusal(version: nil, reason: SkipReason(.yanked, "\(id) \(why)")))
            }
            guard let match = live.first(where: worksWithHost) else {
                let ranges = Set(live.compactMap(\.hostRange)).sorted().joined(separator: ", ")
                return .failure(Refusal(version: live.first?.version, reason: SkipReason(.incompatibleHost, "no release of \(id) works with host API \(hostVersion) (they need \(ranges))")))
            }
            version = match
        }
        if let flag = version.gate, !gate(flag) {
            return .failure(Refusal(version: version.version, reason: SkipReason(.gateOff, "the gate flag \(flag) is off for this host")))
        }
        if let problem = availability(id, version) {
            return .failure(Refusal(version: version.version, reason: problem))
        }
        return .success(version)
    }

    private func worksWithHost(_ version: RegistrySnapshot.Version) -> Bool {
        guard let text = version.hostRange else { return true }
        guard let range = VersionRange(parsing: text) else { return false }
        return range.contains(hostVersion)
    }

    private func dependencyProblem(_ id: String, _ version: RegistrySnapshot.Version, candidates: [String: RegistrySnapshot.Version],
                                   skipped: [String: LoadDecision], snapshot: RegistrySnapshot) -> SkipReason? {
        for (dependency, rangeText) in version.dependencies.sorted(by: { $0.key < $1.key }) {
            guard snapshot.plugins[dependency] != nil else {
                return SkipReason(.missingDependency, "\(id) needs \(dependency) \(rangeText), which is not registered")
            }
            guard let resolved = candidates[dependency] else {
                let why = skipped[dependency]?.skip?.message ?? "it is not loaded"
                return SkipReason(.dependencyNotLoaded, "\(id) needs \(dependency), which is not loaded: \(why)")
            }
            let range = VersionRange(parsing: rangeText)
            guard let resolvedVersion = SemanticVersion(parsing: resolved.version), let range, range.contains(resolvedVersion) else {
                return SkipReason(.incompatibleDependency, "\(id) needs \(dependency) \(rangeText), but \(dependency)@\(resolved.version) is the one loaded")
            }
        }
        return nil
    }

    /// Plug-ins that lie on a dependency cycle (not those that merely depend on one: they are skipped
    /// afterwards because their dependency is not loaded).
    private func cycleMembers(_ candidates: [String: RegistrySnapshot.Version]) -> Set<String> {
        let unordered = Set(candidates.keys).subtracting(topologicalOrder(candidates))
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

    /// Kahn's algorithm over candidate → dependency edges; ties by id. Plug-ins on a cycle are left out.
    private func topologicalOrder(_ candidates: [String: RegistrySnapshot.Version]) -> [String] {
        var remaining = candidates.mapValues { Set($0.dependencies.keys).intersection(candidates.keys) }
        var order: [String] = []
        while true {
            let ready = remaining.filter { $0.value.isEmpty }.keys.sorted()
            guard !ready.isEmpty else { break }
            for id in ready {
                order.append(id)
                remaining[id] = nil
            }
            for key in remaining.keys { remaining[key]?.subtract(ready) }
        }
        return order
    }
}
