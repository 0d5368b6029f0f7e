/// Something a host did, for apps that observe it through ``PluginHost/events()``.
public enum HostEvent: Sendable, Hashable {
    /// A plug-in was activated.
    case loaded(pluginID: String, version: String)
    /// A plug-in was not loaded, with the reason.
    case skipped(pluginID: String, version: String?, reason: SkipReason)
    /// A plug-in failed while being created or activated.
    case failed(pluginID: String, version: String?, reason: SkipReason)
    /// A plug-in was detached from every lookup and told to stop.
    case deactivated(pluginID: String, version: String, reason: SkipReason)
    /// The board changed (its `PRAGMA data_version` is given) and the host applied it.
    case boardChanged(dataVersion: Int64)
    /// A problem that does not stop the host (for example: load reports cannot be written).
    case warning(String)
}
