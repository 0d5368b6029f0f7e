import Foundation
public import Logging
public import PlugboardPluginAPI

extension PluginContext {
    /// A context built from in-memory fakes, for testing a plug-in without a host.
    ///
    /// ```swift
    /// let storage = InMemorySecureStorage()
    /// let context = PluginContext.testing(pluginID: "com.example.calendar", secureStorage: storage,
    ///                                     flags: FakeFlags(["calendar.sync": true]))
    /// let plugin = CalendarPlugin()
    /// try await plugin.activate(context: context)
    /// ```
    public static func testing(
        pluginID: String = "com.example.test",
        version: String = "1.0.0",
        host: HostIdentity = HostIdentity(hostID: "test-host", environment: "test", hostVersion: "1.0.0"),
        secureStorage: (any SecureStorage)? = nil,
        flags: any FlagEvaluating = FakeFlags(),
        configuration: PluginConfiguration = PluginConfiguration(),
        events: InMemoryEventBus = InMemoryEventBus(),
        services: ServiceRegistry = ServiceRegistry(),
        logger: Logger? = nil
    ) -> PluginContext {
        PluginContext(
            pluginID: pluginID, version: version, host: host,
            logger: logger ?? Logger(label: "plugboard.plugin.\(pluginID)"),
            secureStorage: secureStorage ?? InMemorySecureStorage(),
            flags: flags, configuration: configuration, events: events.bound(to: pluginID), services: services)
    }
}
