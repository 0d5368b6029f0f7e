package import Foundation
package import PlugboardModel
package import PlugboardStore
import Synchronization

/// One operation as it travels in the operations API, and as the CLI and the server perform it.
///
/// The CLI builds a request from its arguments and either performs it on the board file (``perform(on:as:)``) or
/// sends it to `plugboard serve --admin` as `POST /api/admin/{name}` with ``wireBody()`` as the JSON body; the server
/// decodes it with ``fromWire(_:)`` and performs it as the access token's principal. Both give the same
/// ``OperationReply``: the same JSON, the same error, the same notes. ``ParsedOperation`` derives the wire from the
/// operation's arguments; ``RoutedRequest`` from a `Codable` type and its listed fields.
package protocol OperationRequest: BoardOperation {
    /// The schema of the answer (default: read from the `Response` type, ``JSONSchema/of(_:)``).
    static var responseJSONSchema: JSONSchema { get }
    /// The fields of its JSON body, for the OpenAPI document.
    static var parameters: [OperationParameter] { get }

    /// The request as the JSON body of its route.
    func wireBody() throws(BoardError) -> Data
    /// A request from the JSON body of its route; a malformed one is refused with a sentence.
    static func fromWire(_ body: Data) throws(BoardError) -> Self

    /// The request with the checks its wire makes on the way in applied, for a request made in Swift (its fields'
    /// types and `validate()`); refused with the sentence the CLI and the server give.
    func checked() throws(BoardError) -> Self

    /// Whether this request starts or widens what runs, and where: then, where approvals are required, it becomes a
    /// change request (``submit(on:as:options:)``). Default: from the declaration.
    func widening(on board: Board) throws(BoardError) -> WideningScope?

    /// Performs the operation on `board` as `actor`: every check the board makes applies (admins, owners, policies).
    func perform(on board: Board, as actor: Principal) throws(BoardError) -> OperationReply<Response>

    /// The answer as the API sends it (default: ``OperationJSON``, the CLI's `--json`).
    static func encodeResponse(_ value: Response) -> Data
    /// An answer the API sent.
    static func decodeResponse(_ data: Data) throws -> Response
}

extension OperationRequest {
    /// The operation's name (`plugin.kill`): the path of its route under `/api/admin/` and its OpenAPI `operationId`.
    package static var name: String { declaration.name }
    /// Who may perform it, and its lane on a served board.
    package static var access: OperationAccess { declaration.access }
    /// One sentence: what it does.
    package static var summary: String { declaration.abstract }
    /// More about it, for the OpenAPI document's description (may be empty).
    package static var discussion: String { declaration.discussion }
    /// The name of the schema of the answer in the OpenAPI document's components: the declaration's, else the answer's
    /// type name (`ChangeResult`), or for a list its element's and `List` (`[Approver]` is `ApproverList`).
    package static var responseSchema: String {
        if let named = declaration.response { return named }
        let type = String(describing: Response.self)
        guard type.hasPrefix("Array<"), type.hasSuffix(">") else { return type }
        return type.dropFirst("Array<".count).dropLast() + "List"
    }
    /// The largest request body the server reads for it, when not the server's usual limit.
    package static var bodyLimit: Int? { declaration.bodyLimit }

    package static var responseJSONSchema: JSONSchema { JSONSchema.of(Response.self) }

    package func checked() throws(BoardError) -> Self { self }

    package static func encodeResponse(_ value: Response) -> Data { Data(OperationJSON.text(value, pretty: false).utf8) }
    package static func decodeResponse(_ data: Data) throws -> Response { try OperationJSON.decoder().decode(Response.self, from: data) }
}

/// A request whose wire form is its `Codable` encoding (snake_case keys), with its fields listed for the document.
package protocol RoutedRequest: OperationRequest, Codable {
    /// The fields of its JSON body.
    static var fields: [OperationParameter] { get }
}

extension RoutedRequest {
    package static var parameters: [OperationParameter] { fields }

    package func wireBody() throws(BoardError) -> Data {
        do { return try OperationJSON.encoder(pretty: false).encode(self) } catch {
            throw BoardError(.invalidInput, "the request cannot be encoded: \(error)")
        }
    }

    package static func fromWire(_ body: Data) throws(BoardError) -> Self {
        do { return try OperationJSON.decoder().decode(Self.self, from: body.isEmpty ? Data("{}".utf8) : body) } catch {
            throw BoardError(.invalidInput, "the body is not a \(name) request: \(OperationJSON.describe(error))")
        }
    }
}

/// What an operation answers: its value, and notes (the CLI prints them as `note:` lines on stderr; the API sends them
/// as `Plugboard-Note` headers).
public struct OperationReply<Value: Sendable>: Sendable {
    /// The answer.
    public var value: Value
    /// Sentences about the answer (for example that some telemetry was dropped).
    public var notes: [String]

    /// An answer with notes.
    package init(_ value: Value, notes: [String] = []) {
        self.value = value
        self.notes = notes
    }
}

/// One field of a request's JSON body: its wire name (snake_case), its JSON type, whether it is required, and what it
/// is, for the OpenAPI document.
package struct OperationParameter: Sendable {
    package enum Kind: String, Sendable {
        case string, integer, boolean, stringArray, object
    }

    package let name: String
    package let kind: Kind
    package let required: Bool
    package let summary: String

    /// A field.
    package init(_ name: String, _ kind: Kind, required: Bool = false, _ summary: String) {
        self.name = name
        self.kind = kind
        self.required = required
        self.summary = summary
    }
}

/// The wire format of requests and answers: JSON with snake_case keys, sorted, as the CLI prints with `--json`.
package enum OperationJSON {
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

extension OperationJSON {
    /// Where a JSON document does not fit the type it was decoded as, in a few words.
    package static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "it cannot be parsed" }
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty ? "the top level" : "'" + keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") + "'"
        }
        switch error {
        case .dataCorrupted(let context): return context.codingPath.isEmpty ? "it is not JSON" : "\(path(context.codingPath)) is malformed"
        case .keyNotFound(let key, let context): return "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context): return "\(path(context.codingPath)) has the wrong type"
        case .valueNotFound(_, let context): return "\(path(context.codingPath)) is null"
        @unknown default: return "it cannot be parsed"
        }
    }

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
