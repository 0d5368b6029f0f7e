package import Foundation
package import PlugboardModel
package import PlugboardStore
import Synchronization

/// One operation of the admin API: what the CLI does to a board, as a value that travels.
///
/// The CLI builds a request from its arguments and either performs it on the board file (``perform(on:as:)``) or
/// sends it to `plugboard serve --admin`, which decodes the same type from the HTTP request and performs it there, as
/// the access token's principal. Both give the same ``AdminReply``: the same JSON, the same error, the same notes.
///
/// On the wire a request is one JSON object in snake_case: path parameters come from the route's path, query
/// parameters from the query (for `GET`), the rest from the JSON body.
package protocol AdminRequest: Codable, Sendable {
    /// What the operation answers with: the JSON the CLI prints with `--json`.
    associatedtype Response: Codable & Sendable

    /// The route, its parameters and its answer, from which the server routes and the OpenAPI document are made.
    static var route: AdminRoute { get }

    /// Performs the operation on `board` as `actor`: every check the board makes applies (admins, owners, policies).
    func perform(on board: Board, as actor: Principal) throws(BoardError) -> AdminReply<Response>

    /// The answer as the API sends it (default: ``AdminJSON``, the CLI's `--json`).
    static func encodeResponse(_ value: Response) -> Data
    /// An answer the API sent.
    static func decodeResponse(_ data: Data) throws -> Response
}

extension AdminRequest {
    package static func encodeResponse(_ value: Response) -> Data { Data(AdminJSON.text(value, pretty: false).utf8) }
    package static func decodeResponse(_ data: Data) throws -> Response { try AdminJSON.decoder().decode(Response.self, from: data) }
}

/// What an operation answers: its value, and notes for stderr (a CLI prints them as `note:` lines; the API sends them
/// as `Plugboard-Note` headers).
package struct AdminReply<Value: Sendable>: Sendable {
    /// The answer.
    package var value: Value
    /// Sentences about the answer (for example that some telemetry was dropped).
    package var notes: [String]

    /// An answer with notes.
    package init(_ value: Value, notes: [String] = []) {
        self.value = value
        self.notes = notes
    }
}

/// Where an operation lives in the admin API and what it takes.
package struct AdminRoute: Sendable {
    /// The HTTP method.
    package enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
        case put = "PUT"
        case delete = "DELETE"
    }

    /// Whether a read-only access token may call it.
    package enum Access: String, Sendable {
        case read, write
    }

    /// The server's lane for its work: reads, changes, or the stops (kill switches, aborted rollouts, disables, yanks
    /// and revocations), which no flood of reads or changes queues behind.
    package enum Lane: String, Sendable {
        case read, change, stop
    }

    /// The OpenAPI `operationId`, which is also the CLI command it serves (`plugin.kill`).
    package let name: String
    package let method: Method
    /// The path under `/api/admin`, with `{name}` for path parameters.
    package let path: String
    package let access: Access
    /// One sentence: what it does.
    package let summary: String
    package let parameters: [AdminParameter]
    /// The name of the schema of the answer in the OpenAPI document's components.
    package let response: String
    /// The largest request body the server reads for it, when not the server's usual limit.
    package let bodyLimit: Int?
    /// The server's lane for it: ``Lane/stop`` for the stops, else that of its access.
    package let lane: Lane

    /// A route.
    package init(
        _ name: String, _ method: Method, _ path: String, _ access: Access, summary: String, parameters: [AdminParameter] = [],
        response: String, bodyLimit: Int? = nil, lane: Lane? = nil
    ) {
        self.bodyLimit = bodyLimit
        self.lane = lane ?? (access == .read ? .read : .change)
        self.name = name
        self.method = method
        self.path = path
        self.access = access
        self.summary = summary
        self.parameters = parameters
        self.response = response
    }

    /// The names of the path's parameters, in order.
    package var pathParameters: [String] {
        parameters.filter { $0.place == .path }.map(\.name)
    }
}

/// One parameter of a route: its wire name (snake_case), where it goes, and its JSON type.
package struct AdminParameter: Sendable {
    package enum Place: String, Sendable {
        case path, query, body
    }

    package enum Kind: String, Sendable {
        case string, integer, boolean, stringArray, object
    }

    package let name: String
    package let place: Place
    package let kind: Kind
    package let required: Bool
    package let summary: String

    /// A parameter.
    package init(_ name: String, _ place: Place, _ kind: Kind = .string, required: Bool = false, _ summary: String) {
        self.name = name
        self.place = place
        self.kind = kind
        self.required = required
        self.summary = summary
    }

    /// A string parameter.
    package init(_ name: String, _ place: Place, required: Bool = false, _ summary: String) {
        self.init(name, place, .string, required: required, summary)
    }

    /// A required path parameter.
    package static func path(_ name: String, _ summary: String) -> AdminParameter {
        AdminParameter(name, .path, required: true, summary)
    }

    /// The environment a request acts in (the CLI's `--env`): a query parameter of reads, a body field of writes.
    package static func env(_ place: Place) -> AdminParameter {
        AdminParameter("env", place, required: true, "The environment (the CLI's --env).")
    }
}

/// The wire format of requests and answers: JSON with snake_case keys, sorted, as the CLI prints with `--json`.
package enum AdminJSON {
    /// An encoder of the CLI's `--json` output.
    package static func encoder(pretty: Bool = true) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A decoder of what ``encoder(pretty:)`` writes.
    package static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        // The same few keys come back for every object of a listing: each is converted once.
        let names = Mutex<[String: String]>([:])
        decoder.keyDecodingStrategy = .custom { path in
            guard let last = path.last else { return Key(stringValue: "") }
            let key = last.stringValue
            if last.intValue != nil || !key.utf8.contains(UInt8(ascii: "_")) { return last }
            if let known = names.withLock({ $0[key] }) { return Key(stringValue: known) }
            let name = propertyName(key)
            names.withLock { $0[key] = name }
            return Key(stringValue: name)
        }
        return decoder
    }

    /// The text of `value` as the CLI prints it.
    package static func text(_ value: some Encodable, pretty: Bool = true) -> String {
        guard let data = try? encoder(pretty: pretty).encode(value), let text = String(data: data, encoding: .utf8) else { return "null" }
        return text
    }
}

extension AdminJSON {
    /// The property name a snake_case key was made from, as the board's types spell acronyms (`plugin_id` →
    /// `pluginID`, `artifact_sha256` → `artifactSHA256`, `before_json` → `beforeJSON`, `key_i_ds` → `keyIDs`):
    /// Foundation's `convertFromSnakeCase` would give `pluginId`, which no type declares.
    static func propertyName(_ key: String) -> String {
        let parts = key.split(separator: "_", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1, let first = parts.first, !first.isEmpty else { return key }
        var name = first
        var index = 1
        while index < parts.count {
            let part = parts[index]
            if part == "i", index + 1 < parts.count, parts[index + 1] == "ds" {
                name += "IDs"
                index += 2
                continue
            }
            switch part {
            case "id": name += "ID"
            case "json": name += "JSON"
            case "sha256": name += "SHA256"
            case "": name += "_"
            default: name += part.prefix(1).uppercased() + part.dropFirst()
            }
            index += 1
        }
        return name
    }

    /// A coding key of any name.
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) {
            stringValue = String(intValue)
            self.intValue = intValue
        }
    }
}
