/// A plug-in: what a plug-in gives the host (the FPI).
///
/// The host creates a plug-in through its factory, then calls ``activate(context:)`` once with the
/// ``PluginContext`` it injects, and ``deactivate()`` when the plug-in is disabled, killed or the host stops.
/// Everything else a plug-in provides is a *feature*: a protocol the host defines (in a module both link
/// dynamically) that the plug-in's class also conforms to. Host apps find features with a typed query such as
/// `host.features(CalendarProvider.self)`.
///
/// ```swift
/// final class Greeter: Plugin, GreetingFeature {
///     func activate(context: PluginContext) async throws { … }
///     func deactivate() async {}
///     func greet(_ name: String) -> String { "Hello, \(name)" }
/// }
/// ```
public protocol Plugin: AnyObject, Sendable {
    /// Starts the plug-in. Throwing marks it failed: it is not made available, its dependants are skipped,
    /// and every other plug-in keeps loading.
    func activate(context: PluginContext) async throws

    /// Stops the plug-in: release resources, cancel tasks. After this the host no longer hands it out.
    /// A dynamic library is never unloaded; it is detached and fully unloaded at the next restart.
    func deactivate() async
}

/// Creates a plug-in instance. Throwing marks the plug-in failed, like a throwing ``Plugin/activate(context:)``.
public typealias PluginFactory = @Sendable (PluginContext) throws -> any Plugin

/// The version of the binary interface between a host and dynamic plug-ins.
public enum PluginABI {
    /// Bumped whenever ``PluginRegistration`` or ``PluginContext`` change incompatibly.
    public static let version: UInt32 = 1
    /// The entry symbol a dynamic plug-in exports when its manifest names none.
    public static let defaultEntrySymbol = "plugboard_plugin_entry"
}

/// What a dynamic plug-in's entry symbol returns: its id, the ABI it was built for, and its factory.
///
/// A dynamic plug-in exports one C symbol (by default `plugboard_plugin_entry`) that returns a retained
/// registration:
///
/// ```swift
/// @_cdecl("plugboard_plugin_entry")
/// public func pluginEntry() -> UnsafeMutableRawPointer {
///     PluginRegistration(pluginID: "com.example.greeter") { context in Greeter() }.retainedPointer()
/// }
/// ```
public final class PluginRegistration: Sendable {
    /// The ABI the plug-in was built against (``PluginABI/version`` of its copy of this module).
    public let abiVersion: UInt32
    /// The plug-in id, which must equal the id the board registered.
    public let pluginID: String
    /// Creates the plug-in.
    public let factory: PluginFactory

    /// Creates a registration for the current ABI.
    public init(pluginID: String, factory: @escaping PluginFactory) {
        self.abiVersion = PluginABI.version
        self.pluginID = pluginID
        self.factory = factory
    }

    /// A +1 retained pointer to hand back from the entry symbol; the host takes ownership.
    public func retainedPointer() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }
}
