import PlugboardModel
import PlugboardVersioning

/// Rollouts (rule 1): a plug-in's rollout caps the release each host selects, and withdraws one that runs above it.
extension Resolver {
    /// The releases of `releases` that `rollout` allows the host `hostID` (``Rollout/allows(_:forHost:)``: the rolled-out
    /// version in the cohort, and releases up to the previous one), in their order; none when it leaves the host none.
    static func allowed(
        _ releases: [RegistrySnapshot.Version], by rollout: Rollout, hostID: String, _ parsed: Parsed
    ) -> [RegistrySnapshot.Version] {
        releases.filter { release in parsed.version(release.version).map { rollout.allows($0, forHost: hostID) } ?? false }
    }

    /// Why the host `hostID` runs no release under `rollout`: nothing it allows the host is live.
    static func nothingLive(under rollout: Rollout, hostID: String) -> SkipReason {
        let release = "\(rollout.pluginID)@\(rollout.version)"
        switch rollout.state {
        case .aborted:
            return SkipReason(.rollout, "the rollout of \(release) was aborted and no release before it is live")
        case .completed:
            return SkipReason(.rollout, "the rollout of \(release) is completed, but neither it nor a release before it is live")
        case .running, .paused:
            if rollout.includes(hostID: hostID) {
                return SkipReason(.rollout, "the rollout of \(release) reaches this host, but neither it nor a release before it is live")
            }
            let paused = rollout.state == .paused ? ", paused" : ""
            return SkipReason(
                .rollout,
                "the rollout of \(release) has not reached this host (step \(rollout.percent)%\(paused)), and no release before it is live")
        }
    }

    /// Why the host `hostID` must stop running `version` of `plugin` at once: its rollout no longer allows the release
    /// on this host (the rollout was aborted, or the host left its cohort, so the release is above the rollout's cap
    /// for the host). Nil when the rollout allows it, when there is no rollout, and for a pinned plug-in (a pinned
    /// version ignores rollouts).
    static func withdrawal(of version: String, _ plugin: RegistrySnapshot.Plugin?, hostID: String) -> SkipReason? {
        guard let plugin, plugin.pinnedVersion == nil, let rollout = plugin.rollout, let running = SemanticVersion(parsing: version)
        else { return nil }
        if rollout.allows(running, forHost: hostID) { return nil }
        let release = "\(rollout.pluginID)@\(rollout.version)"
        let stops = "\(plugin.id)@\(version) stops on this host"
        if rollout.state == .aborted {
            return SkipReason(.rollout, "the rollout of \(release) was aborted: \(stops)")
        }
        if rollout.state != .completed, !rollout.includes(hostID: hostID) {
            let paused = rollout.state == .paused ? ", paused" : ""
            return SkipReason(
                .rollout, "the rollout of \(release) (step \(rollout.percent)%\(paused)) does not include this host: \(stops)")
        }
        return SkipReason(.rollout, "the rollout of \(release) (\(rollout.state.rawValue)) bounds what this host runs: \(stops)")
    }
}
