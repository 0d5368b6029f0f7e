import PlugboardPluginAPI

/// Calls into plug-ins' features, under the crash marker.
///
/// App code that calls a plug-in's feature through these methods, rather than on an instance from
/// ``PluginHost/features(_:)``, lets the host notice a crash in that call as it notices one in activation: the host
/// notes the release in its state folder's marker for the length of the call, so that a process that dies in it
/// reports the crash at its next start, counts it against the release, quarantines the release after repeated crashes
/// (``CrashQuarantine``) and reports it to the board, where a rollout's guard counts it. Calls may come from any thread
/// at once; each costs a small file rewritten before and after it (tens of microseconds) when crash tracking is on, and
/// nothing more when it is off. A crash while several calls were in progress counts against each of their releases.
extension PluginHost {
    /// Calls `body` with the active plug-in `pluginID` as `feature`, under the crash marker; nil when the plug-in is not
    /// active or does not provide `feature`.
    ///
    /// - Parameters:
    ///   - pluginID: The plug-in.
    ///   - feature: The feature protocol the host defines.
    ///   - body: The call into the plug-in.
    public nonisolated func call<Feature, Result>(_ pluginID: String, as feature: Feature.Type, _ body: (Feature) throws -> Result)
        rethrows -> Result?
    {
        guard let (plugin, instance) = active(pluginID, as: feature) else { return nil }
        let token = entering(plugin.pluginID, plugin.version, .call)
        defer { left(token) }
        return try body(instance)
    }

    /// Calls `body` with the active plug-in `pluginID` as `feature`, under the crash marker; nil when the plug-in is not
    /// active or does not provide `feature`.
    ///
    /// - Parameters:
    ///   - pluginID: The plug-in.
    ///   - feature: The feature protocol the host defines.
    ///   - body: The call into the plug-in.
    public nonisolated func call<Feature, Result>(
        _ pluginID: String, as feature: Feature.Type, _ body: (Feature) async throws -> Result
    ) async rethrows -> Result? {
        guard let (plugin, instance) = active(pluginID, as: feature) else { return nil }
        let token = entering(plugin.pluginID, plugin.version, .call)
        defer { left(token) }
        return try await body(instance)
    }

    /// Calls `body` with each active plug-in that provides `feature`, in load order, each call under the crash marker.
    ///
    /// - Parameters:
    ///   - feature: The feature protocol the host defines.
    ///   - body: The call into one plug-in.
    public nonisolated func forEach<Feature>(_ feature: Feature.Type, _ body: (Feature) throws -> Void) rethrows {
        for plugin in activePlugins {
            guard let instance = plugin.instance as? Feature else { continue }
            let token = entering(plugin.pluginID, plugin.version, .call)
            defer { left(token) }
            try body(instance)
        }
    }

    /// Calls `body` with each active plug-in that provides `feature`, in load order, each call under the crash marker.
    ///
    /// - Parameters:
    ///   - feature: The feature protocol the host defines.
    ///   - body: The call into one plug-in.
    public nonisolated func forEach<Feature>(_ feature: Feature.Type, _ body: (Feature) async throws -> Void) async rethrows {
        for plugin in activePlugins {
            guard let instance = plugin.instance as? Feature else { continue }
            let token = entering(plugin.pluginID, plugin.version, .call)
            defer { left(token) }
            try await body(instance)
        }
    }

    private nonisolated func active<Feature>(_ pluginID: String, as feature: Feature.Type) -> (ActivePlugin, Feature)? {
        guard let plugin = activePlugins.first(where: { $0.pluginID == pluginID }), let instance = plugin.instance as? Feature else {
            return nil
        }
        return (plugin, instance)
    }
}
