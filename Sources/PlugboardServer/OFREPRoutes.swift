import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PlugboardFlags
import PlugboardModel
import PlugboardPluginAPI
import PlugboardStore

/// OpenFeature's remote evaluation protocol: `POST /ofrep/v1/evaluate/flags/{key}` and the bulk
/// `POST /ofrep/v1/evaluate/flags` (with an ETag).
///
/// The context's `targetingKey` is the Unleash `userId` (unless `userId` is given); `sessionId`, `remoteAddress`,
/// `environment`, `appName` and `currentTime` are Unleash's fields; everything else becomes a property (numbers
/// and booleans as their text). A flag without variants has a boolean value; a flag with variants has its
/// variant's payload (or name); see ``PlugboardFlags/FlagResolver/remoteValue(_:hasVariants:context:)``.
struct OFREPRoutes: Sendable {
    let api: ClientAPIRoutes

    struct EvaluationRequest: Decodable {
        var context: [String: ContextValue]?
    }

    func add(to router: Router<ServeContext>) {
        router.group("/ofrep/v1/evaluate").add(middleware: api.authentication(.sdk))
            .post("flags/{key}") { request, context in
                // Flag names may be UTF-8: the path carries them percent-encoded.
                let raw = context.parameters.get("key") ?? ""
                return try await self.single(request, key: raw.removingPercentEncoding ?? raw, token: context.requireToken())
            }
            .post("flags") { request, context in try await self.bulk(request, token: context.requireToken()) }
    }

    func single(_ request: Request, key: String, token: APITokenCredential) async throws -> Response {
        let context = try await evaluationContext(request, key: key)
        let feed = try api.board { () throws(BoardError) in try api.watcher.feed(token.environment) }
        guard feed.snapshot.contains(key) else {
            return Reply.json(
                .notFound,
                object: ["key": key, "errorCode": "FLAG_NOT_FOUND", "errorDetails": "flag '\(key)' does not exist in \(token.environment)"])
        }
        let (json, failed) = Self.evaluate(key, feed: feed, context: context)
        return Reply.json(failed ? .badRequest : .ok, ByteBuffer(string: json))
    }

    func bulk(_ request: Request, token: APITokenCredential) async throws -> Response {
        let context = try await evaluationContext(request, key: nil)
        let feed = try api.board { () throws(BoardError) in try api.watcher.feed(token.environment) }
        let flags = feed.snapshot.flagNames.sorted().map { Self.evaluate($0, feed: feed, context: context).json }
        let data = Data(("{\"flags\":[" + flags.joined(separator: ",") + "]}").utf8)
        let etag = EnvironmentFeed.etag(data)
        if Reply.matches(request.headers, etag) { return Reply.notModified(etag: etag) }
        return Reply.json(.ok, ByteBuffer(bytes: data), etag: etag)
    }

    /// One flag's OFREP result object as JSON: success (`value`, `reason`, `variant`, `metadata`) or error
    /// (`errorCode`, `errorDetails`), and whether it is an error.
    static func evaluate(_ key: String, feed: EnvironmentFeed, context: UnleashContext) -> (json: String, failed: Bool) {
        let (details, enabled) = feed.snapshot.remoteValue(key, hasVariants: feed.variantFlags.contains(key), context: context)
        if let code = details.errorCode {
            let json = JSONText.object([
                ("key", JSONText.string(key)), ("errorCode", JSONText.string(code.rawValue)),
                ("errorDetails", JSONText.string(details.errorMessage ?? "flag '\(key)' could not be evaluated")),
            ])
            return (json, true)
        }
        // OFREP clients expect a variant name: booleans are "on" or "off"; a flag with variants that picked none is
        // "disabled", Unleash's name for that case.
        let variant = details.variant ?? (feed.variantFlags.contains(key) ? "disabled" : (enabled ? "on" : "off"))
        var fields: [(String, String)] = [
            ("key", JSONText.string(key)), ("reason", JSONText.string(details.reason.rawValue)), ("variant", JSONText.string(variant)),
            ("metadata", enabled ? #"{"enabled":true}"# : #"{"enabled":false}"#),
        ]
        if let value = details.value { fields.append(("value", Self.json(value))) }
        return (JSONText.object(fields), false)
    }

    /// A value as OFREP sends it. A string payload stays a string (`"1"`); a number payload is a number, written with a
    /// fraction (`1.0`): Unleash's number payloads are floating-point, and OpenFeature SDKs that tell integers from
    /// floats (Python's `get_float_value`) refuse a float flag whose value arrives as `1`.
    static func json(_ value: FlagJSON) -> String {
        guard case .number(let number) = value, number.isFinite, number.rounded() == number, abs(number) < 1e15 else {
            return JSONText.value(value)
        }
        return String(Int64(number)) + ".0"
    }

    private func evaluationContext(_ request: Request, key: String?) async throws -> UnleashContext {
        let body: EvaluationRequest
        switch await Body.decode(
            EvaluationRequest.self, request, limit: api.configuration.maxBodyBytes, what: "the evaluation request", allowEmpty: true)
        {
        case .success(let decoded): body = decoded
        case .failure(let failure):
            guard failure.status == .badRequest else { throw failure }
            var object = [
                "errorCode": "INVALID_CONTEXT", "errorDetails": "the body must be {\"context\": {…}} with a JSON object as the context",
            ]
            if let key { object["key"] = key }
            throw Refusal(.badRequest, body: object)
        }
        return Self.unleashContext(body.context ?? [:])
    }

    static func unleashContext(_ fields: [String: ContextValue]) -> UnleashContext {
        var context = UnleashContext()
        for (name, value) in fields {
            if name == "properties", case .object(let properties) = value {
                for case (let property, .text(let text)) in properties { context.properties[property] = text }
                continue
            }
            guard case .text(let text) = value else { continue }
            if name == "targetingKey" {
                if context.userId == nil { context.userId = text }
            } else {
                context.set(name, to: text)
            }
        }
        return context
    }
}
