public import Foundation
public import Logging

/// What the host injects into each plug-in (the SPI): its identity, and the host services bound to it.
///
/// Every service is bound to the plug-in by the host: ``secureStorage`` reaches only this plug-in's
/// namespace, ``logger`` is labelled with its id, ``configuration`` is its own slice. A plug-in has no way to
/// name another plug-in's data.
public struct PluginContext: Sendable {
    /// The plug-in's id, as registered on the board.
    public let pluginID: String
    /// The version the host loaded.
    public let version: String
    /// Who is hosting the plug-in.
    public let host: HostIdentity
    /// A logger labelled with the plug-in id.
    public let logger: Logger
    /// Encrypted storage for this plug-in only.
    public let secureStorage: any SecureStorage
    /// Feature-flag evaluation for the host's context.
    public let flags: any FlagEvaluating
    /// This plug-in's configuration, which it decodes itself.
    public let configuration: PluginConfiguration
    /// Messages between plug-ins.
    public let events: any EventBus
    /// Services the host offers, looked up by type.
    public let services: ServiceRegistry

    /// Creates a context. Hosts build these; plug-in tests get one from `PlugboardTesting`.
    public init(
        pluginID: String, version: String, host: HostIdentity, logger: Logger, secureStorage: any SecureStorage,
        flags: any FlagEvaluating, configuration: PluginConfiguration, events: any EventBus, services: ServiceRegistry
    ) {
        self.pluginID = pluginID
        self.version = version
        self.host = host
        self.logger = logger
        self.secureStorage = secureStorage
        self.flags = flags
        self.configuration = configuration
        self.events = events
        self.services = services
    }
}

/// Who a host is: its id, environment, API version and the context used for gate flags.
public struct HostIdentity: Sendable, Hashable, Codable {
    /// A stable id for this host (a machine or an app instance), used in load reports and as flag stickiness.
    public let hostID: String
    /// The board environment the host runs in.
    public let environment: String
    /// The host API version (SemVer), matched against each manifest's `host` range.
    public let hostVersion: String
    /// Extra context for flag evaluation (`properties` in Unleash terms), such as region or tenant.
    public let properties: [String: String]

    /// Creates an identity.
    public init(hostID: String, environment: String, hostVersion: String, properties: [String: String] = [:]) {
        self.hostID = hostID
        self.environment = environment
        self.hostVersion = hostVersion
        self.properties = properties
    }
}

/// A plug-in's own configuration: raw JSON the plug-in decodes into its own type.
public struct PluginConfiguration: Sendable, Hashable {
    /// The JSON bytes; `{}` when the host has none for this plug-in.
    public let json: Data

    /// Creates a configuration from JSON bytes.
    public init(json: Data = Data("{}".utf8)) { self.json = json }

    /// Decodes the configuration. Throwing here during activation marks the plug-in failed, not the host.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: json)
    }
}
