import Foundation
public import Logging
package import PlugboardEvents
public import PlugboardIdentity
public import PlugboardModel
package import PlugboardStore

/// How `plugboard serve` listens and how it treats clients.
public struct ServerConfiguration: Sendable {
    /// The address to listen on (loopback by default).
    public var host: String
    /// The port; 0 picks a free one (see ``PlugboardServer/run(onListening:)``).
    public var port: Int
    /// PEM certificate chain and private key for HTTPS; both or neither.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// Request bodies larger than this get 413.
    public var maxBodyBytes: Int
    /// Connections idle for this long are closed.
    public var idleTimeout: Duration
    /// At most this many connections are open at once (event streams included); past it, new ones wait to be accepted.
    public var maxConnections: Int
    /// One client address may have at most this many requests in progress (event streams apart); the rest get `429`.
    public var maxRequestsPerClient: Int
    /// How often the board is checked for changes.
    public var pollInterval: Duration
    /// How often buffered client registrations and metrics are written to the board.
    public var usageFlushInterval: Duration
    /// How often an idle event stream gets a comment line, so that proxies keep it open.
    public var streamKeepAlive: Duration
    /// The request log and the server's own messages.
    public var logger: Logger
    /// The board's own keys, with which host snapshots are signed: a server of a ``BoardFile`` loads the board's key
    /// file, `<board>.board-key`, making it on first use; a configuration made without them has a new key of its own.
    package var boardKeys: BoardKeyring = .generate()
    /// How long a signed host snapshot, or a freshness notice, vouches for the board's state: a host that hears
    /// nothing newer by then reports its snapshot as stale (a frozen feed). Notices go out every quarter of it.
    public var snapshotLifetime: Duration
    /// Whether the operations API (`/api/admin/`) is served; off by default.
    public var admin = false
    /// Where the operations API listens when it has an address of its own (`--admin-listen`); nil serves it beside the rest.
    public var adminAddress: (host: String, port: Int)?
    /// Failed authentications one client address may make in ``adminFailedAuthWindow`` before it gets `429`.
    public var adminFailedAuthLimit = 20
    /// The window in which ``adminFailedAuthLimit`` counts failed authentications.
    public var adminFailedAuthWindow: Duration = .seconds(60)
    /// Failed authentications all client addresses together may make in ``adminFailedAuthWindow`` before every failing
    /// request gets `429` (a request whose token is accepted never does).
    public var adminFailedAuthGlobalLimit = 1000
    /// The largest artifact the operations API takes.
    public var adminMaxArtifactBytes = 512 << 20
    /// Request bodies over ``maxBodyBytes`` (registrations of many manifests) one principal may have in flight, from all
    /// of their access tokens together.
    public var adminLargeBodiesPerPrincipal = 2
    /// Bytes of request bodies over ``maxBodyBytes`` in flight for all tokens together.
    public var adminLargeBodyBytes = 256 << 20
    /// How many artifact uploads, and how many bytes, may wait for their registration.
    public var adminUploadQuota = UploadQuota()

    /// Quotas of artifact uploads waiting for the registration that names them.
    public struct UploadQuota: Sendable {
        /// Uploads one principal who holds a role on the board (an admin, or an owner or maintainer of a plug-in) may
        /// have waiting (or in progress).
        public var perPrincipalCount = 4
        /// Uploads one principal who holds no role may have waiting (or in progress): the artifact of a new plug-in.
        public var perPrincipalCountWithoutRole = 1
        /// Bytes one principal's uploads may hold.
        public var perPrincipalBytes = 2 << 30
        /// Uploads the server keeps waiting, from everyone.
        public var totalCount = 64
        /// Bytes the server's waiting uploads may hold.
        public var totalBytes = 8 << 30
        /// Bytes of the board's file system an upload must leave free.
        public var reserve = 1 << 30

        /// The defaults: 4 uploads (1 for a principal who holds no role) and 2 GiB per principal, 64 uploads and 8 GiB in all, 1 GiB left free.
        public init() {}
    }
    /// Where the server reads the time: tokens' expiry and the rate of token re-reads (the system's clocks, or a
    /// test's).
    public var clock = TimeSource.system
    /// How webhook delivery sends (`--webhook-allow-private`, the console's address for links); nil for no delivery.
    package var webhooks: WebhookSettings? = WebhookSettings()
    /// How subscribed advisory feeds are fetched (`--feed-allow-private`); nil: never fetched by the server.
    package var advisoryFeeds: AdvisoryFeedSettings? = AdvisoryFeedSettings()
    /// How often the server runs the board's schedule: every rollout's guard and steps, and (at most once a second) the
    /// change requests whose time came; nil: never (then run `plugboard rollout tick` and `plugboard change apply-due`).
    /// Each pass that acts is an audited change of the board.
    public var rolloutInterval: Duration? = .milliseconds(250)
    /// Where to publish the hosts' events for a pub/sub relay (an http:// URL the environment's name is appended to, for
    /// example Nchan's publisher location `http://127.0.0.1:8080/plugboard-publish/`); nil: no relay.
    public var relayPublish: String?
    /// The label of an Alertmanager alert that names the plug-in the alerting trigger (`POST /api/triggers/alertmanager`)
    /// kills: `plugin` unless `plugboard serve --alert-plugin-label` says otherwise.
    public var alertPluginLabel = "plugin"
    /// Sign-in to the console with the organisation's OpenID Connect provider, discovered before the server starts
    /// (`plugboard serve --oidc-issuer`); nil: the console signs in with access tokens only.
    public var identityProvider: ConsoleIdentityProvider?

    /// Creates a configuration with the defaults: 127.0.0.1:4242, 1 MiB bodies, 60 s idle timeout, 4096 connections,
    /// 64 requests in progress per client address, a board check every 20 ms, usage written every 5 s.
    public init(
        host: String = "127.0.0.1", port: Int = 4242, tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil,
        maxBodyBytes: Int = 1 << 20, idleTimeout: Duration = .seconds(60), maxConnections: Int = 4096, maxRequestsPerClient: Int = 64,
        pollInterval: Duration = .milliseconds(20),
        usageFlushInterval: Duration = .seconds(5), streamKeepAlive: Duration = .seconds(15),
        logger: Logger = Logger(label: "plugboard.serve"), snapshotLifetime: Duration = .seconds(60)
    ) {
        self.snapshotLifetime = snapshotLifetime
        self.host = host
        self.port = port
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.maxBodyBytes = maxBodyBytes
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.maxRequestsPerClient = maxRequestsPerClient
        self.pollInterval = pollInterval
        self.usageFlushInterval = usageFlushInterval
        self.streamKeepAlive = streamKeepAlive
        self.logger = logger
    }
}

/// The identity provider the console signs people in with.
public struct ConsoleIdentityProvider: Sendable {
    /// The provider, its discovery document and keys fetched and checked.
    public let provider: OIDCProvider
    /// Its name on the sign-in page (`Sign in with NAME`).
    public let name: String
    /// How long after signing in at the provider a person may approve, apply or open a widening change in the console
    /// before signing in there again.
    public let stepUpAge: Duration

    /// A value with each stored property given.
    public init(provider: OIDCProvider, name: String, stepUpAge: Duration = Duration.seconds(3600)) {
        self.provider = provider
        self.name = name
        self.stepUpAge = stepUpAge
    }
}
