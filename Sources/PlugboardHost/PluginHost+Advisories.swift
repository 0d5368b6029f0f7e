import PlugboardModel

/// What advisories change in a running host: the warnings it reports with a release it loads or keeps.
extension PluginHost {
    /// The warning the host reports with `id@version` while it runs it: its signature problem under the `warn` policy,
    /// and every advisory that affects it and does not stop it, joined; nil when there is none.
    func loadWarning(_ id: String, _ version: String, _ notes: ReconcileNotes) -> String? {
        let warnings =
            [signatureWarning(id, version, notes)].compactMap { $0 } + Resolver.advisoryWarnings(id, version, notes.read.registry)
        return warnings.isEmpty ? nil : warnings.joined(separator: "; ")
    }
}
