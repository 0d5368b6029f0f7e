import Foundation
import Synchronization

/// The JSON schema of a `Decodable` type, as the OpenAPI document lists it: read from the type itself by decoding one
/// value of it from a recorder that notes every key, type and optional it is asked for.
///
/// Keys are written as the wire writes them (``OperationJSON``'s snake_case). A property the type decodes with
/// `decodeIfPresent` (an optional) is not required: the JSON leaves out what is not set. An enumeration that is
/// `CaseIterable` gives its first case and lists its values; another type whose values must have a form (a version)
/// is tried with a few usual forms until it decodes.
package indirect enum JSONSchema: Sendable, Equatable {
    case string, integer, number, boolean
    /// A string that is one of these.
    case oneOf([String])
    /// Any JSON value (a type the recorder cannot see into).
    case any
    case array(JSONSchema)
    /// An object with these properties, in the order the type declares them.
    case object([Property])
    /// An object whose keys are data (a dictionary), each value of this schema.
    case dictionary(JSONSchema)

    /// One property of an object.
    package struct Property: Sendable, Equatable {
        package let name: String
        package let schema: JSONSchema
        package let required: Bool

        /// A property.
        package init(name: String, schema: JSONSchema, required: Bool) {
            self.name = name
            self.schema = schema
            self.required = required
        }
    }

    /// The schema of `type`'s JSON, its keys as the wire writes them (``OperationJSON``'s snake_case), or as the type
    /// declares them (`snakeCase` false, for a document in another's format, such as Unleash's).
    package static func of<T: Decodable>(_ type: T.Type, snakeCase: Bool = true) -> JSONSchema {
        let recorded = (try? SchemaRecorder.sample(type).schema) ?? .any
        return snakeCase ? recorded.mappingKeys(OperationJSON.key) : recorded
    }

    /// The schema with every property's name passed through `transform`.
    func mappingKeys(_ transform: (String) -> String) -> JSONSchema {
        switch self {
        case .array(let items): .array(items.mappingKeys(transform))
        case .dictionary(let values): .dictionary(values.mappingKeys(transform))
        case .object(let properties):
            .object(
                properties.map {
                    Property(name: transform($0.name), schema: $0.schema.mappingKeys(transform), required: $0.required)
                })
        default: self
        }
    }

    /// The schema as YAML flow and block lines, indented by `indent` spaces.
    package func yaml(indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        switch self {
        case .string, .integer, .number, .boolean, .any, .oneOf: return pad + "\(flow)\n"
        case .array(let items):
            return pad + "type: array\n" + pad + "items:\n" + items.yaml(indent: indent + 2)
        case .dictionary(let values):
            return pad + "type: object\n" + pad + "additionalProperties:\n" + values.yaml(indent: indent + 2)
        case .object(let properties):
            var out = pad + "type: object\n"
            let required = properties.filter(\.required).map(\.name)
            if !required.isEmpty { out += pad + "required: [\(required.map(Self.key).joined(separator: ", "))]\n" }
            guard !properties.isEmpty else { return out + pad + "properties: {}\n" }
            out += pad + "properties:\n"
            for property in properties {
                switch property.schema {
                case .string, .integer, .number, .boolean, .any, .oneOf:
                    out += pad + "  \(Self.key(property.name)): \(property.schema.flow)\n"
                default:
                    out += pad + "  \(Self.key(property.name)):\n" + property.schema.yaml(indent: indent + 4)
                }
            }
            return out
        }
    }

    /// A property's name as a YAML key: quoted unless plainly a name (YAML reads `on`, `yes` or `true` as booleans).
    private static func key(_ name: String) -> String {
        let plain =
            name.first.map { $0.isLetter || $0 == "_" } == true
            && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        let special: Set<String> = ["y", "n", "yes", "no", "on", "off", "true", "false", "null"]
        return plain && !special.contains(name.lowercased()) ? name : "'" + name.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// A scalar schema in YAML's flow style.
    private var flow: String {
        switch self {
        case .string: "{type: string}"
        case .integer: "{type: integer}"
        case .number: "{type: number}"
        case .boolean: "{type: boolean}"
        case .oneOf(let values): "{type: string, enum: [\(values.map { "'\($0)'" }.joined(separator: ", "))]}"
        default: "{}"
        }
    }
}

/// A decoder that records the schema of what is decoded from it.
final class SchemaRecorder: Decoder {
    /// Texts tried, in turn, where a type reads a string: a type that refuses one is decoded again with the next.
    static let texts = ["", "1.0.0", "2026-01-01T00:00:00Z", "a", "com.example.a", "0"]

    let textIndex: Int
    var schema: JSONSchema?
    /// The object being recorded, when the type asked for a keyed container.
    var object: ObjectRecord?
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    init(textIndex: Int) { self.textIndex = textIndex }

    /// A value of `type` and its schema.
    static func sample<T: Decodable>(_ type: T.Type) throws -> (value: T, schema: JSONSchema) {
        if let scalar = scalar(type) { return scalar }
        if let cases = (type as? any CaseIterable.Type)?.allCases as? any Collection, let first = cases.first(where: { _ in true }) as? T {
            let names = cases.compactMap { ($0 as? any RawRepresentable)?.rawValue as? String }
            return (first, names.isEmpty ? .string : .oneOf(names))
        }
        var lastError: (any Error)?
        for index in texts.indices {
            let recorder = SchemaRecorder(textIndex: index)
            do {
                let value = try T(from: recorder)
                return (value, recorder.object?.schema ?? recorder.schema ?? .any)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no sample"))
    }

    private static func scalar<T>(_ type: T.Type) -> (value: T, schema: JSONSchema)? {
        switch type {
        case is String.Type: ("" as? T).map { ($0, .string) }
        case is Bool.Type: (false as? T).map { ($0, .boolean) }
        case is Int.Type: (0 as? T).map { ($0, .integer) }
        case is Int64.Type: (Int64(0) as? T).map { ($0, .integer) }
        case is Int32.Type: (Int32(0) as? T).map { ($0, .integer) }
        case is UInt64.Type: (UInt64(0) as? T).map { ($0, .integer) }
        case is UInt32.Type: (UInt32(0) as? T).map { ($0, .integer) }
        case is UInt8.Type: (UInt8(0) as? T).map { ($0, .integer) }
        case is Double.Type: (0.0 as? T).map { ($0, .number) }
        case is Float.Type: (Float(0) as? T).map { ($0, .number) }
        default: nil
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let record = object ?? ObjectRecord(dictionary: String(describing: Key.self).contains("DictionaryCodingKey"))
        object = record
        return KeyedDecodingContainer(KeyedRecorder<Key>(record: record, textIndex: textIndex))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let recorder = UnkeyedRecorder(textIndex: textIndex)
        recorder.owner = self
        return recorder
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleRecorder(owner: self)
    }

    /// The properties of an object being recorded.
    final class ObjectRecord {
        /// Whether its keys are data (a `[String: V]`): its one sample key's schema is that of every value.
        let dictionary: Bool
        /// Each property's name, whether it is required, and its schema or the object it is, still being recorded.
        var properties: [(name: String, required: Bool, schema: JSONSchema?, object: ObjectRecord?)] = []
        /// Keys asked whether they hold null: only `decodeIfPresent` asks, so they are optional.
        var optional: Set<String> = []
        init(dictionary: Bool) { self.dictionary = dictionary }

        func add(_ key: String, _ schema: JSONSchema, required: Bool) {
            guard !properties.contains(where: { $0.name == key }) else { return }
            properties.append((key, required && !optional.contains(key), schema, nil))
        }

        func add(_ key: String, object: ObjectRecord) {
            guard !properties.contains(where: { $0.name == key }) else { return }
            properties.append((key, true, nil, object))
        }

        /// The object's schema as recorded.
        var schema: JSONSchema {
            let resolved = properties.map { property in
                JSONSchema.Property(
                    name: property.name, schema: property.object?.schema ?? property.schema ?? .any,
                    required: property.required)
            }
            if dictionary { return .dictionary(resolved.first?.schema ?? .any) }
            return .object(resolved)
        }
    }

    struct KeyedRecorder<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let record: ObjectRecord
        let textIndex: Int
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { record.dictionary ? [Key(stringValue: "value")].compactMap { $0 } : [] }

        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool {
            record.optional.insert(key.stringValue)
            return false
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let (value, schema) = try SchemaRecorder.sample(type, textIndex: textIndex)
            record.add(key.stringValue, schema, required: true)
            return value
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            let (value, schema) = try SchemaRecorder.sample(type, textIndex: textIndex)
            record.add(key.stringValue, schema, required: false)
            return value
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let nested = ObjectRecord(dictionary: false)
            record.add(key.stringValue, object: nested)
            return KeyedDecodingContainer(KeyedRecorder<NestedKey>(record: nested, textIndex: textIndex))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            record.add(key.stringValue, .array(.any), required: true)
            return UnkeyedRecorder(textIndex: textIndex)
        }

        func superDecoder() throws -> any Decoder { SchemaRecorder(textIndex: textIndex) }
        func superDecoder(forKey key: Key) throws -> any Decoder { SchemaRecorder(textIndex: textIndex) }
    }

    final class UnkeyedRecorder: UnkeyedDecodingContainer {
        let textIndex: Int
        weak var owner: SchemaRecorder?
        var codingPath: [any CodingKey] = []
        var count: Int? { nil }
        var currentIndex = 0
        var isAtEnd: Bool { currentIndex > 0 }

        init(textIndex: Int) { self.textIndex = textIndex }

        func decodeNil() throws -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let (value, schema) = try SchemaRecorder.sample(type, textIndex: textIndex)
            owner?.schema = .array(schema)
            currentIndex += 1
            return value
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            currentIndex += 1
            let nested = ObjectRecord(dictionary: false)
            owner?.schema = .array(.object([]))
            return KeyedDecodingContainer(KeyedRecorder<NestedKey>(record: nested, textIndex: textIndex))
        }

        func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            currentIndex += 1
            owner?.schema = .array(.array(.any))
            return UnkeyedRecorder(textIndex: textIndex)
        }

        func superDecoder() throws -> any Decoder { SchemaRecorder(textIndex: textIndex) }
    }

    struct SingleRecorder: SingleValueDecodingContainer {
        let owner: SchemaRecorder
        var codingPath: [any CodingKey] = []

        func decodeNil() -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            if type == String.self, let text = SchemaRecorder.texts[owner.textIndex] as? T {
                owner.schema = .string
                return text
            }
            let (value, schema) = try SchemaRecorder.sample(type, textIndex: owner.textIndex)
            owner.schema = schema
            return value
        }
    }

    /// A value of `type` and its schema, reading strings as `textIndex` says first.
    static func sample<T: Decodable>(_ type: T.Type, textIndex: Int) throws -> (value: T, schema: JSONSchema) {
        guard type == String.self else { return try sample(type) }
        return (texts[textIndex] as! T, .string)  // swift-format-ignore: NeverForceUnwrap
    }
}

extension OperationJSON {
    private static let keys = Mutex<[String: String]>([:])

    /// The key the wire writes for a property named `name` (`artifactSHA256` → `artifact_sha256`): what
    /// ``encoder(pretty:)`` writes, asked of it once per name.
    package static func key(_ name: String) -> String {
        if let known = keys.withLock({ $0[name] }) { return known }
        struct One: Encodable {
            let name: String
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(0, forKey: Key(stringValue: name))
            }
        }
        var converted = name
        if let data = try? encoder(pretty: false).encode(One(name: name)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let key = object.keys.first
        {
            converted = key
        }
        keys.withLock { $0[name] = converted }
        return converted
    }
}
