public import Foundation
public import Logging
public import PlugboardHost
public import PlugboardModel
public import PlugboardPluginAPI

extension HostConfiguration {
    /// A host reading the board served by `plugboard serve` at `server`, with an API token for hosts of its environment
    /// (`plugboard token create --for hosts`).
    ///
    /// ```swift
    /// let host = PluginHost(configuration: try HostConfiguration(
    ///     server: URL(string: "https://flags.example.com:4242")!, token: ProcessInfo.processInfo.environment["PLUGBOARD_TOKEN"]!,
    ///     cacheFolder: "/var/cache/myapp/plugboard",
    ///     identity: HostIdentity(hostID: "web-7", environment: "production", hostVersion: "2.4.0")))
    /// ```
    ///
    /// `boardKeys` are the board's public keys (`plugboard board-key show`): the host uses only snapshots and caches
    /// signed by them (see ``RemoteBoardSource``). `trustOnFirstUse` trusts the first snapshot's keys instead, with a
    /// warning.
    ///
    /// A host without an anchor takes as its first state only a snapshot the server proved fresh for its own request;
    /// `acceptStaleFirstSnapshot` takes one without that proof (with a warning), and `minimumSequence` refuses every
    /// snapshot of an audit row below it and takes a first one at or above it without the proof.
    ///
    /// `relayStream` reads the event stream through a pub/sub relay (nginx with Nchan, see the remote hosts' guide)
    /// instead of from `server`: the relay is not trusted, since every pushed snapshot is verified.
    ///
    /// Flags come from the same snapshots (gates and the flags plug-ins evaluate), so they need no second connection.
    /// Secure storage lives on the board's machine: give a remote host its own (`secureStorage`), or plug-ins asking for
    /// it get a clear error.
    ///
    /// - Throws: ``PlugboardStore/BoardError`` when the URL or token is malformed or the cache folder cannot be made private.
    public init(
        server: URL, token: String, cacheFolder: String, identity: HostIdentity, boardKeys: [String] = [], trustOnFirstUse: Bool = false,
        acceptStaleFirstSnapshot: Bool = false, minimumSequence: Int64? = nil, relayStream: URL? = nil,
        secureStorage: @escaping @Sendable (String) throws -> any SecureStorage = { id in
            UnavailableSecureStorage(pluginID: id, why: "this host reads a served board and has no secure storage configured")
        },
        configuration: @escaping @Sendable (String) -> PluginConfiguration = { _ in PluginConfiguration() },
        services: ServiceRegistry = ServiceRegistry(),
        logger: Logger = Logger(label: "plugboard.host"),
        dynamicLibraryCache: String = NSTemporaryDirectory()
    ) throws(BoardError) {
        let source = try RemoteBoardSource(
            server: server, token: token, cacheFolder: cacheFolder, boardKeys: boardKeys, trustOnFirstUse: trustOnFirstUse,
            acceptStaleFirstSnapshot: acceptStaleFirstSnapshot, minimumSequence: minimumSequence, relayStream: relayStream,
            logger: logger)
        let flags = BoardFlagProvider(environment: identity.environment, logger: logger, features: { try source.features() })
        self.init(
            source: source, identity: identity, secureStorage: secureStorage, flags: flags, configuration: configuration,
            services: services, logger: logger, dynamicLibraryCache: dynamicLibraryCache)
        stateFolder = cacheFolder
    }
}
