import ArgumentParser
import Dispatch
import Foundation
import Logging
import PlugboardEvents
import PlugboardModel
import PlugboardOperations
import PlugboardServer
import PlugboardStore
import Synchronization

/// `plugboard serve`: the board's flags over HTTP for Unleash SDKs and OpenFeature (OFREP) SDKs.
struct ServeCommand: BoardCommand {
    static let localOnly: String? = "it serves a board file of its own machine"
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the board's flags over HTTP: Unleash's client API (point SDKs at http://HOST:PORT/api) and OFREP.",
        discussion: """
            Every request needs a token from plugboard token create (Authorization: TOKEN, or Authorization: Bearer TOKEN);
            a token reads one environment, SDK routes or (--for hosts) the plug-in hosts' routes under /api/host/.
            GET /health needs none. A revoked or expired token's open event streams end within a second. Changes made with the CLI reach streaming clients
            within a fraction of a second. Stops cleanly on SIGTERM or SIGINT. Request logs go to stderr.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("Where to listen; 0.0.0.0:PORT exposes it to the network.", valueName: "host:port"))
    var listen = "127.0.0.1:4242"
    @Option(help: ArgumentHelp("PEM certificate chain: serve HTTPS.", valueName: "file"))
    var tlsCert: String?
    @Option(help: ArgumentHelp("The certificate's private key, PEM or DER, in a file of any name.", valueName: "file"))
    var tlsKey: String?
    @Option(help: "trace, debug, info (one line a request), notice, warning, error.")
    var logLevel = "info"
    @Option(
        name: .customLong("poll-ms"),
        help: ArgumentHelp("How often to look for changes on the board (PRAGMA data_version, a cheap read), 5-1000.", valueName: "ms"))
    var pollMilliseconds = 20
    @Option(
        help: ArgumentHelp(
            "How long a signed host snapshot vouches for the board, 2-86400 (hosts hear nothing newer: stale).", valueName: "seconds"))
    var snapshotLifetime = 60
    @Option(help: ArgumentHelp("The most connections open at once, event streams included; more wait to be accepted.", valueName: "n"))
    var maxConnections = 4096
    @Option(
        help: ArgumentHelp(
            "The most requests in progress from one client address (event streams apart); more get 429. Raise it behind a proxy.",
            valueName: "n"))
    var maxRequestsPerClient = 64
    @Flag(
        help: "Serve the operations API under /api/admin/: every CLI command for holders of access tokens (plugboard access-token create).")
    var admin = false
    @Option(
        help: ArgumentHelp(
            "Serve the operations API on an address of its own (implies --admin), for example 127.0.0.1:4243.", valueName: "host:port"))
    var adminListen: String?
    @Option(
        help: ArgumentHelp(
            "The most MiB of artifact uploads one principal may have waiting for their registration (at most 4 uploads; 1 for a principal who holds no role).",
            valueName: "MiB"))
    var adminUploadQuota = 2048
    @Option(
        help: ArgumentHelp(
            "The most MiB of artifact uploads waiting for their registration, from everyone (at most 64 uploads); uploads also leave 1 GiB of the disk free.",
            valueName: "MiB"))
    var adminUploadTotal = 8192
    @Option(
        help: ArgumentHelp(
            "Publish the hosts' signed events to a pub/sub relay's publisher location (an http:// URL the environment's name is appended to, for example Nchan's http://127.0.0.1:8080/plugboard-publish/).",
            valueName: "url"))
    var relayPublish: String?
    @Option(
        help: ArgumentHelp(
            "The label of an Alertmanager alert that names the plug-in the alerting trigger (POST /api/triggers/alertmanager) kills.",
            valueName: "name"))
    var alertPluginLabel = "plugin"
    @OptionGroup var oidc: OIDCOptions
    @Flag(help: "Let webhook endpoints be on private and loopback addresses (never link-local ones, where cloud metadata answers).")
    var webhookAllowPrivate = false
    @Flag(help: "Let subscribed advisory feeds be fetched from private and loopback addresses, over http too (never link-local ones).")
    var feedAllowPrivate = false
    @Option(help: ArgumentHelp("How long one advisory feed fetch may take, for drills and tests: 30s, 2s", visibility: .hidden))
    var feedFetchTimeout: String?
    @Option(help: ArgumentHelp("The console's address for links in webhook events (default: this server's).", valueName: "url"))
    var webhookConsoleURL: String?
    @Option(help: ArgumentHelp("Webhook retry waits, for drills and tests: 200ms,1s,…", visibility: .hidden))
    var webhookRetrySchedule: String?
    @Option(help: ArgumentHelp("How long one webhook attempt may take, for drills and tests: 10s, 600s", visibility: .hidden))
    var webhookAttemptTimeout: String?
    @Flag(
        name: .customLong("print-openapi"), help: ArgumentHelp("Print the operations API's OpenAPI document and exit.", visibility: .hidden)
    )
    var printOpenAPI = false

    func validate() throws {
        guard (16...1_000_000).contains(maxConnections) else {
            throw ValidationError("--max-connections \(maxConnections) is outside 16-1000000; 4096 is the default")
        }
        guard (1...100_000).contains(maxRequestsPerClient) else {
            throw ValidationError("--max-requests-per-client \(maxRequestsPerClient) is outside 1-100000; 64 is the default")
        }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together; give both or neither") }
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level '\(logLevel)' is not one of trace, debug, info, notice, warning, error")
        }
        _ = try Self.address(listen)
        if let adminListen { _ = try Self.address(adminListen, option: "--admin-listen") }
        guard (2...86400).contains(snapshotLifetime) else {
            throw ValidationError("--snapshot-lifetime \(snapshotLifetime) is outside 2-86400 seconds; 60 is the default")
        }
        for (option, value) in [("--admin-upload-quota", adminUploadQuota), ("--admin-upload-total", adminUploadTotal)]
        where !(1...1_048_576).contains(value) {
            throw ValidationError("\(option) \(value) is outside 1-1048576 MiB")
        }
        if let relayPublish, Self.relayURL(relayPublish) == nil {
            throw ValidationError(
                "--relay-publish '\(relayPublish)' is not an http:// URL, for example http://127.0.0.1:8080/plugboard-publish/")
        }
        if !Self.isLabelName(alertPluginLabel) {
            throw ValidationError(
                "--alert-plugin-label '\(alertPluginLabel)' is not a Prometheus label name (a letter or _, then letters, digits or _, at most 128)"
            )
        }
        if oidc.given, !admin, adminListen == nil {
            throw ValidationError("--oidc-issuer signs people in to the console: give --admin (or --admin-listen) too")
        }
        if oidc.given, oidc.oidcRedirectUrl == nil, (try? Self.address(adminListen ?? listen))?.port == 0 {
            throw ValidationError(
                "the console's port is chosen when it starts (port 0), so the provider's callback is not known: give --oidc-redirect-url")
        }
        if let webhookRetrySchedule, WebhookSettings.schedule(webhookRetrySchedule) == nil {
            throw ValidationError(
                "--webhook-retry-schedule '\(webhookRetrySchedule)' is not waits separated by commas, for example 200ms,1s,5m")
        }
        if let webhookAttemptTimeout, WebhookSettings.schedule(webhookAttemptTimeout)?.count != 1 {
            throw ValidationError("--webhook-attempt-timeout '\(webhookAttemptTimeout)' is not one wait, for example 10s")
        }
        guard (5...1000).contains(pollMilliseconds) else {
            throw ValidationError("--poll-ms \(pollMilliseconds) is outside 5-1000; 20 is the default")
        }
    }

    /// Whether `name` is a Prometheus label name: `[a-zA-Z_][a-zA-Z0-9_]*`, here at most 128 characters.
    static func isLabelName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        func letter(_ b: UInt8) -> Bool { (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") || b == UInt8(ascii: "_") }
        guard let first = bytes.first, letter(first), bytes.count <= 128 else { return false }
        return bytes.allSatisfy { letter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// The relay's publisher URL: http:// with a host.
    static func relayURL(_ text: String) -> URL? {
        guard let url = URL(string: text), url.scheme?.lowercased() == "http", url.host?.isEmpty == false else { return nil }
        return url
    }

    static func address(_ text: String, option: String = "--listen") throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("\(option) '\(text)' is not HOST:PORT, for example 127.0.0.1:4242")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw ValidationError("\(option) '\(text)' has no host; use for example 127.0.0.1:4242") }
        return (host, port)
    }

    func execute(_ output: Output) throws(BoardError) {
        if printOpenAPI {
            FileHandle.standardOutput.write(Data(OperationsOpenAPI.document().utf8))
            return
        }
        let board = try global.openBoard()
        guard let (host, port) = try? Self.address(listen) else { return }
        for path in [tlsCert, tlsKey].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: path) {
            throw BoardError(.io, "cannot read \(path); give a readable PEM file to --tls-cert and --tls-key")
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in ServeLogHandler(label: label, level: level) }
        var logger = Logger(label: "plugboard.serve")
        logger.logLevel = level
        var configuration = ServerConfiguration(
            host: host, port: port, tlsCertificatePath: tlsCert, tlsKeyPath: tlsKey, maxConnections: maxConnections,
            maxRequestsPerClient: maxRequestsPerClient, pollInterval: .milliseconds(pollMilliseconds),
            logger: logger, snapshotLifetime: .seconds(snapshotLifetime))
        configuration.admin = admin || adminListen != nil
        configuration.adminUploadQuota.perPrincipalBytes = adminUploadQuota << 20
        configuration.adminUploadQuota.totalBytes = adminUploadTotal << 20
        configuration.relayPublish = relayPublish.flatMap(Self.relayURL)?.absoluteString
        configuration.alertPluginLabel = alertPluginLabel
        configuration.adminAddress = adminListen.flatMap { try? Self.address($0, option: "--admin-listen") }
        let scheme = tlsCert == nil ? "http" : "https"
        // "" for the operations API beside the rest, else its own address.
        let adminURL: String? =
            !configuration.admin
            ? nil
            : configuration.adminAddress.map { "\(scheme)://\($0.host.contains(":") ? "[\($0.host)]" : $0.host):\($0.port)" } ?? ""
        var webhooks = WebhookSettings()
        webhooks.allowPrivate = webhookAllowPrivate
        webhooks.consoleURL = webhookConsoleURL ?? "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
        if let schedule = webhookRetrySchedule.flatMap(WebhookSettings.schedule) { webhooks.schedule = schedule }
        if let timeout = webhookAttemptTimeout.flatMap(WebhookSettings.schedule)?.first { webhooks.attemptTimeout = timeout }
        configuration.webhooks = webhooks
        var feeds = AdvisoryFeedSettings()
        feeds.allowPrivate = feedAllowPrivate
        if let timeout = feedFetchTimeout.flatMap(WebhookSettings.schedule)?.first { feeds.timeout = timeout }
        configuration.advisoryFeeds = feeds
        WebhookOperations.allowPrivateAddresses.withLock { $0 = webhookAllowPrivate }
        let json = output.json
        let failure = ServeFailure()
        let done = DispatchSemaphore(value: 0)
        Task {
            var configuration = configuration
            do {
                if oidc.given {
                    // The console's own URL, for the callback's default: the operations API's address, else the server's.
                    let console =
                        adminURL.flatMap { $0.isEmpty ? nil : $0 } ?? "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
                    do {
                        configuration.identityProvider = try await oidc.provider(console: console, logger: logger)
                    } catch {
                        throw BoardError(.invalidInput, "the identity provider cannot be used: \(String(describing: error))")
                    }
                }
                let server = try PlugboardServer(board: BoardFile(board), configuration: configuration)
                try await server.run { port in
                    let url = "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
                    var urls = ["url": url, "unleash": url + "/api", "ofrep": url + "/ofrep/v1"]
                    if let adminURL { urls["admin"] = adminURL == "" ? url + "/api/admin" : adminURL + "/api/admin" }
                    let adminText = urls["admin"].map { ", the operations API at \($0)" } ?? ""
                    let line =
                        json
                        ? OperationJSON.text(urls, pretty: false)
                        : "Serving the board at \(url): Unleash SDKs at \(url)/api, OFREP at \(url)/ofrep/v1\(adminText) (Ctrl-C stops)"
                    FileHandle.standardOutput.write(Data((line + "\n").utf8))
                }
            } catch let error as BoardError {
                failure.set(error)
            } catch {
                failure.set(BoardError(.io, Self.sentence(for: error, listen: listen)))
            }
            done.signal()
        }
        done.wait()
        if let error = failure.error { throw error }
    }
}

extension ServeCommand {
    /// Why the server could not start, as one sentence that says what to do; the library's own text (NIO's
    /// `bind(descriptor:ptr:bytes:): Address already in use (errno: 98)`) only when nothing better is known.
    static func sentence(for error: any Error, listen: String) -> String {
        let text = String(describing: error)
        let start = "cannot serve on \(listen): "
        let known: [(needles: [String], words: String)] = [
            (
                ["Address already in use", "errno: 98", "EADDRINUSE"],
                "the port is already in use (another plugboard serve, or another program); stop it or choose another port with --listen"
            ),
            (
                ["Permission denied", "errno: 13", "EACCES"],
                "this user may not listen on that port (ports below 1024 need privileges); choose a port above 1024 with --listen"
            ),
            (
                ["Cannot assign requested address", "errno: 99", "EADDRNOTAVAIL"],
                "that address is not one of this machine's; listen on 127.0.0.1, 0.0.0.0 or an address of this machine"
            ),
            (
                ["Name or service not known", "NXDOMAIN", "unknown host", "No address associated"],
                "the host name does not resolve; give an IP address or a name of this machine with --listen"
            ),
            (
                ["NIOSSL", "SSL", "PEM", "certificate"],
                "the TLS certificate or key cannot be used; give a PEM certificate chain to --tls-cert and its private key to --tls-key"
            ),
        ]
        for entry in known where entry.needles.contains(where: { text.localizedCaseInsensitiveContains($0) }) {
            return start + entry.words
        }
        let short = text.count > 160 ? String(text.prefix(160)) + "…" : text
        return start + "the network refused it (\(short)); check --listen and try again"
    }
}

/// The error a serving task ended with, handed back to the command's thread.
private final class ServeFailure: Sendable {
    private let stored = Mutex<BoardError?>(nil)
    func set(_ error: BoardError) { stored.withLock { $0 = error } }
    var error: BoardError? { stored.withLock { $0 } }
}
