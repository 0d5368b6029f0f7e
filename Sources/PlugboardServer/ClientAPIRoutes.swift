import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import PlugboardFlags
import PlugboardModel
import PlugboardStore
import ServiceLifecycle

/// The Unleash client API: features (with ETag), delta, streaming, register, metrics.
struct ClientAPIRoutes: Sendable {
    let watcher: BoardWatcher
    let usage: UsageBuffer
    let configuration: ServerConfiguration
    /// Reads the tokens again for a token not known yet (one just created), at a bounded rate.
    let tokenReread: TokenReread

    func add(to router: Router<ServeContext>) {
        router.group("/api/client").add(middleware: authentication(.sdk))
            .get("features") { request, context in try self.features(request, token: context.requireToken()) }
            .get("delta") { request, context in try self.delta(request, token: context.requireToken()) }
            .get("streaming") { request, context in try self.streaming(request, token: context.requireToken()) }
            .post("register") { request, context in try await self.register(request, token: context.requireToken()) }
            .post("metrics") { request, context in try await self.metrics(request, token: context.requireToken()) }
    }

    /// The authentication of routes that take tokens of the kind `routes` take.
    func authentication(_ routes: TokenCheck.Routes) -> APITokenAuthentication {
        APITokenAuthentication(tokens: watcher.tokens, reread: tokenReread, routes: routes)
    }

    // MARK: Reading flags

    func features(_ request: Request, token: APITokenCredential) throws -> Response {
        let feed = try board { () throws(BoardError) in try watcher.feed(token.environment) }
        let query = request.uri.queryParameters
        let namePrefix = query.get("namePrefix")
        let projects = Set(query.getAll("project").filter { !$0.isEmpty })
        let tags = query.getAll("tag").filter { !$0.isEmpty }
        guard projects.count <= Self.filterLimit, tags.count <= Self.filterLimit else {
            throw Refusal(.badRequest, "the request names more than \(Self.filterLimit) projects or tags; name fewer")
        }
        if namePrefix == nil && projects.isEmpty && tags.isEmpty {
            if Reply.matches(request.headers, feed.etag) { return Reply.notModified(etag: feed.etag) }
            return Reply.json(.ok, feed.body, etag: feed.etag)
        }
        var set = feed.features
        set.features = set.features.filter { feature in
            (namePrefix.map { feature.name.hasPrefix($0) } ?? true) && (projects.isEmpty || projects.contains(feature.project ?? "default"))
                // The board keeps no tags: a tag filter matches no flag.
                && tags.isEmpty
        }
        let data = set.encoded(prettyPrinted: false)
        let etag = EnvironmentFeed.etag(data)
        if Reply.matches(request.headers, etag) { return Reply.notModified(etag: etag) }
        return Reply.json(.ok, ByteBuffer(bytes: data), etag: etag)
    }

    func delta(_ request: Request, token: APITokenCredential) throws -> Response {
        let feed = try board { () throws(BoardError) in try watcher.feed(token.environment) }
        let etag = "\"\(feed.revision)\""
        let known = request.headers[.ifNoneMatch].flatMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: "\" W/"))) }
        if let known, let missed = feed.events(after: known) {
            if missed.isEmpty { return Reply.notModified(etag: etag) }
            return Reply.json(.ok, ByteBuffer(string: "{\"events\":[\(missed.map(\.json).joined(separator: ","))]}"), etag: etag)
        }
        return Reply.json(.ok, ByteBuffer(string: "{\"events\":[\(feed.hydration())]}"), etag: etag)
    }

    func streaming(_ request: Request, token: APITokenCredential) throws -> Response {
        let lastEventID = request.headers[.lastEventID].flatMap { Int($0.httpTrimmed) }
        let stream = try board { () throws(BoardError) in
            try watcher.openStream(token.environment, token: token, lastEventID: lastEventID)
        }
        return Reply.eventStream(stream)
    }

    // MARK: What SDKs report

    /// The most projects or tags one features request may name.
    static let filterLimit = 100
    /// The most flags one metrics report may name (a report names the flags an SDK evaluated since the last one).
    static let toggleLimit = 5_000
    /// The most variants one flag's counts may name.
    static let variantLimit = 64
    /// The most strategy names of a registration that are kept.
    static let strategyLimit = 50

    struct RegisterBody: Decodable, Sendable {
        var appName: String?
        var instanceId: String?
        var sdkVersion: String?
        var strategies: [String]?
    }

    struct MetricsBody: Decodable, Sendable {
        struct Toggle: Decodable, Sendable {
            var yes: Int?
            var no: Int?
            var variants: [String: Int]?
        }
        struct Bucket: Decodable, Sendable { var toggles: [String: Toggle]? }
        var appName: String?
        var instanceId: String?
        var sdkVersion: String?
        var bucket: Bucket?
    }

    func register(_ request: Request, token: APITokenCredential) async throws -> Response {
        let body = try await decode(RegisterBody.self, request, what: "/api/client/register")
        let (app, instance) = try identity(request, appName: body.appName, instanceID: body.instanceId)
        let sdk = try checked(body.sdkVersion ?? request.headers[.unleashSDK], "sdkVersion")
        let strategies = try (body.strategies ?? []).prefix(Self.strategyLimit).map { try checked($0, "strategies")! }
        usage.register(
            ClientRegistration(
                appName: app, instanceID: instance, environment: token.environment, sdkVersion: sdk, strategies: strategies,
                tokenName: token.name))
        return Reply.accepted()
    }

    func metrics(_ request: Request, token: APITokenCredential) async throws -> Response {
        let body = try await decode(MetricsBody.self, request, what: "/api/client/metrics")
        let (app, instance) = try identity(request, appName: body.appName, instanceID: body.instanceId)
        let toggles = body.bucket?.toggles ?? [:]
        guard toggles.count <= Self.toggleLimit else {
            throw Refusal(.badRequest, "the metrics report names more than \(Self.toggleLimit) flags; send smaller reports")
        }
        let known = try board { () throws(BoardError) in try watcher.feed(token.environment) }.flagNames
        let environment = token.environment
        let counts = try await HeavyWork.run(heavy: toggles.count > 100) { () throws -> [FlagUsageCount] in
            let bucket = FlagUsageCount.bucket(for: Date())
            var counts: [FlagUsageCount] = []
            for (name, toggle) in toggles {
                _ = try checked(name, "a flag name")
                let values = [toggle.yes ?? 0, toggle.no ?? 0] + (toggle.variants ?? [:]).values
                guard values.allSatisfy({ (0...1_000_000_000_000).contains($0) }), (toggle.variants ?? [:]).count <= Self.variantLimit
                else {
                    throw Refusal(
                        .badRequest,
                        "the counts of flag '\(name)' are negative, too large or name more than \(Self.variantLimit) variants; send counts of at most 10^12"
                    )
                }
                for variant in (toggle.variants ?? [:]).keys { _ = try checked(variant, "a variant name") }
                counts.append(
                    FlagUsageCount(
                        bucket: bucket, flag: name, environment: environment, appName: app, yes: toggle.yes ?? 0, no: toggle.no ?? 0,
                        variants: toggle.variants ?? [:]))
            }
            return counts
        }
        usage.add(counts, token: token.name, instance: instance, knownFlags: known)
        usage.register(
            ClientRegistration(
                appName: app, instanceID: instance, environment: token.environment, sdkVersion: try checked(body.sdkVersion, "sdkVersion"),
                tokenName: token.name))
        return Reply.accepted()
    }

    // MARK: Helpers

    private func identity(_ request: Request, appName: String?, instanceID: String?) throws -> (String, String) {
        guard let app = try checked(appName ?? request.headers[.unleashAppName], "appName"), !app.isEmpty else {
            throw Refusal(.badRequest, "the body has no appName; send the application's name as Unleash SDKs do")
        }
        let instance = try checked(instanceID ?? request.headers[.unleashInstanceID], "instanceId") ?? "unknown"
        return (app, instance.isEmpty ? "unknown" : instance)
    }

    /// A reported name: at most 255 characters, no control characters.
    private func checked(_ value: String?, _ field: String) throws -> String? {
        guard let value else { return nil }
        guard value.utf8.count <= 255, !HostRoutes.hasControl(value, newlines: false) else {
            throw Refusal(.badRequest, "\(field) is longer than 255 bytes or contains control characters")
        }
        return value
    }

    private func decode<T: Decodable & Sendable>(_ type: T.Type, _ request: Request, what: String) async throws -> T {
        try await Body.decodeHeavy(type, request, limit: configuration.maxBodyBytes, what: what)
    }

    func board<T>(_ body: () throws(BoardError) -> T) throws -> T {
        do { return try body() } catch {
            if error.code == .integrity {
                // Hosts keep their last good state: no view of an unproven board is signed.
                configuration.logger.error("the board cannot be proven", metadata: ["error": "\(error.message)"])
                throw Refusal(.serviceUnavailable, "the board cannot be proven, so it is not served: \(error.message)")
            }
            configuration.logger.error("cannot read the board", metadata: ["error": "\(error.message)"])
            throw Refusal(.serviceUnavailable, "the server cannot read the board right now; try again")
        }
    }

    /// Runs a blocking read or write of the board off the server's threads (a board busy with another process's write
    /// must not hold one of the few threads that serve requests).
    func boardAsync<T: Sendable>(_ body: @escaping @Sendable () throws(BoardError) -> T) async throws -> T {
        let result: Result<T, BoardError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Result { () throws(BoardError) -> T in try body() }) }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error):
            configuration.logger.error("cannot read the board", metadata: ["error": "\(error.message)"])
            throw Refusal(.serviceUnavailable, "the server cannot read the board right now; try again")
        }
    }
}
