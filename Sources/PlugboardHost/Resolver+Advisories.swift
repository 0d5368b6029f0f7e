import PlugboardModel

/// Advisories (rule 2): what the snapshot's advisories do to a release, in the host's environment.
extension Resolver {
    /// Why the host does not select `pluginID@version` because of an advisory: one that stops it (`killed`, as a kill
    /// switch of the version), or one that refuses it for a new load when this host does not run it (`advisory`). Nil
    /// when no advisory keeps it out (a warning does not).
    func advisoryRefusal(_ pluginID: String, _ version: String, _ snapshot: RegistrySnapshot) -> SkipReason? {
        if let stop = Self.advisoryStop(pluginID, version, snapshot) { return stop }
        guard running[pluginID] != version,
            let refusing = snapshot.advisories(affecting: pluginID, version).first(where: { $0.action == .refuseNew })
        else { return nil }
        return SkipReason(
            .advisory,
            "\(refusing.named) refuses \(pluginID)@\(version) for a new load in \(snapshot.environment); a host that runs it keeps it")
    }

    /// Why every host stops `pluginID@version` at once: an advisory whose action in the snapshot's environment is `stop`
    /// affects it. Nil when none does.
    static func advisoryStop(_ pluginID: String, _ version: String, _ snapshot: RegistrySnapshot) -> SkipReason? {
        guard let stopping = snapshot.advisories(affecting: pluginID, version).first(where: { $0.action == .stop }) else {
            return nil
        }
        return SkipReason(.killed, "\(stopping.named) stops \(pluginID)@\(version) in \(snapshot.environment)")
    }

    /// The warnings a host reports for `pluginID@version` while it runs it: each advisory that affects the release and
    /// does not stop it.
    static func advisoryWarnings(_ pluginID: String, _ version: String, _ snapshot: RegistrySnapshot) -> [String] {
        snapshot.advisories(affecting: pluginID, version).filter { $0.action != .stop }.map {
            "\($0.named) affects \(pluginID)@\(version) (\($0.action.rawValue) in \(snapshot.environment))"
        }
    }
}
