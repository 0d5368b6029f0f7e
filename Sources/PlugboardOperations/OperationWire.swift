import ArgumentParser
package import Foundation
package import PlugboardModel
import Synchronization

/// An operation's request on the wire, derived from its declaration: one JSON object whose keys are its fields'
/// names as ``OperationJSON`` writes keys (snake_case), like the answers'.
///
/// The fields, their help, whether they are optional or repeat, come from swift-argument-parser's own description of
/// the operation (its `ToolInfoV0` document, ``ToolInfo``), each paired with the property it describes (those of an
/// `@OptionGroup` in the group's place); their JSON types from the declared Swift types. A description that does not
/// pair with the properties one to one is a ``DescriptionError``, never an operation without fields. A request
/// is encoded from an operation's values, and decoded by turning the JSON object back into the arguments it stands
/// for and parsing those: the server checks exactly what the CLI checks.
package enum OperationWire {
    /// One field of an operation.
    package struct Field: Sendable {
        package enum Kind: Sendable {
            /// An `@Argument`.
            case positional
            /// An `@Option`, given as `--name=value`.
            case option(String)
            /// A `@Flag`, given as `--name`.
            case flag(String)
            /// A plain stored property the CLI fills from its global options (`env`).
            case context
        }

        /// The Swift property's name.
        package let property: String
        /// The key in the JSON object.
        package let name: String
        package let kind: Kind
        package let help: String
        package let optional: Bool
        package let repeating: Bool
        package let json: OperationParameter.Kind
        /// The values it takes, for a field of an enumeration (`off`, `warn`, `require`); empty for others.
        package var choices: [String] = []
        /// Its default as the CLI's help shows it, if it has one.
        package var defaultValue: String?

        /// The field as a parameter of the OpenAPI document.
        package var parameter: OperationParameter {
            OperationParameter(name, repeating ? .stringArray : json, required: !optional, help)
        }
    }

    private static let cache = Mutex<[ObjectIdentifier: [Field]]>([:])

    /// The fields of `type`, in declaration order.
    ///
    /// A type whose fields argument-parser describes otherwise than its properties stand (a wrapper the wire does not
    /// know, a description it cannot read) stops the process with the sentence of ``describedFields(of:)``: every
    /// operation is checked by a test, so such a type never ships.
    package static func fields<Op: ParsedOperation>(of type: Op.Type) -> [Field] {
        if let known = cache.withLock({ $0[ObjectIdentifier(type)] }) { return known }
        let fields: [Field]
        do { fields = try describedFields(of: type) } catch { preconditionFailure(error.description) }
        cache.withLock { $0[ObjectIdentifier(type)] = fields }
        return fields
    }

    /// The fields of `type`, each matched with argument-parser's description of it; refused with a sentence when the
    /// description cannot be read, or when its arguments and the operation's properties do not pair one to one.
    package static func describedFields<Op: ParsedOperation>(of type: Op.Type) throws(DescriptionError) -> [Field] {
        try fields(of: Op.self, properties: wireProperties(of: Op()), described: try ToolInfo.arguments(of: Op.self))
    }

    /// The fields of `type` from its properties and the arguments argument-parser describes, in the same order.
    package static func fields<Op: ParsedOperation>(
        of type: Op.Type, properties: [(property: String, value: Any)], described: [ToolInfo.Argument]
    ) throws(DescriptionError) -> [Field] {
        var fields: [Field] = []
        var next = described.makeIterator()
        for (property, value) in properties {
            let name = OperationJSON.key(property)
            guard let box = value as? any ParsedField else {
                let optional = Op.declaration.environmentOptional
                fields.append(
                    Field(
                        property: property, name: name, kind: .context,
                        help: optional
                            ? "Only this environment (every environment when absent; the CLI's --env)."
                            : "The environment (the CLI's --env).",
                        optional: optional, repeating: false, json: .string))
                continue
            }
            guard let argument = next.next() else {
                throw DescriptionError("\(Op.name): argument-parser describes no argument for its field \(property)")
            }
            guard argument.kind == Swift.type(of: box).kind else {
                throw DescriptionError(
                    "\(Op.name): its field \(property) is \(Swift.type(of: box).kind.rawValue), argument-parser describes \(argument.kind.rawValue)"
                )
            }
            let kind: Field.Kind
            switch argument.kind {
            case .positional: kind = .positional
            case .flag: kind = .flag(argument.preferredName?.name ?? property)
            case .option: kind = .option(argument.preferredName?.name ?? property)
            }
            let optional = argument.isOptional || argument.kind == .flag || argument.defaultValue != nil
            fields.append(
                Field(
                    property: property, name: name, kind: kind, help: argument.abstract ?? "", optional: optional,
                    repeating: argument.isRepeating, json: jsonKind(Swift.type(of: box).valueType), choices: argument.allValues ?? [],
                    defaultValue: argument.defaultValue))
        }
        if let extra = next.next() {
            let names = (extra.names ?? []).map(\.name).joined(separator: ", ")
            throw DescriptionError("\(Op.name): argument-parser describes an argument (\(names)) that no field of the wire stands for")
        }
        return fields
    }

    /// The fields of `type` by wire name.
    package static func fieldsByName<Op: ParsedOperation>(_ type: Op.Type) -> [String: Field] {
        Dictionary(fields(of: type).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether `type` acts in an environment (it declares `var env: String?`).
    package static func actsInEnvironment<Op: ParsedOperation>(_ type: Op.Type) -> Bool {
        wireProperties(of: Op()).contains { $0.property == "env" }
    }

    /// The properties of `value` that travel, in declaration order: its argument-parser fields (the wrapper as the
    /// value), those of its option groups in their place, and its `env`.
    package static func wireProperties(of value: Any) -> [(property: String, value: Any)] {
        Mirror(reflecting: value).children.flatMap { child -> [(property: String, value: Any)] in
            guard let label = child.label else { return [] }
            if let group = child.value as? any ParsedGroup { return wireProperties(of: group.members) }
            let property = label.hasPrefix("_") ? String(label.dropFirst()) : label
            guard child.value is any ParsedField || property == "env" else { return [] }
            return [(property, child.value)]
        }
    }

    /// The request `operation` as its JSON body.
    package static func encode<Op: ParsedOperation>(_ operation: Op) throws(BoardError) -> Data {
        var object: [String: Any] = [:]
        // The values' names come from the operation itself: the CLI sends a request without asking argument-parser
        // to describe it.
        for (property, value) in wireProperties(of: operation) {
            guard let field = value as? any ParsedField else {
                if let json = jsonValue(value) { object[OperationJSON.key(property)] = json }
                continue
            }
            guard field.isSet else {
                throw BoardError(
                    .invalidInput,
                    "\(Op.name) has no value for its field \(OperationJSON.key(property)): make the operation with its typed initializer, not init(), which leaves the fields for swift-argument-parser"
                )
            }
            if let json = jsonValue(field.value) { object[OperationJSON.key(property)] = json }
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            throw BoardError(.invalidInput, "the \(Op.name) request cannot be encoded")
        }
        return data
    }

    /// The operation a JSON body holds, parsed and checked as the CLI parses its arguments; refused with a sentence.
    package static func decode<Op: ParsedOperation>(_ type: Op.Type, from body: Data) throws(BoardError) -> Op {
        let object: [String: Any]
        if body.isEmpty {
            object = [:]
        } else {
            guard let parsed = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
                throw BoardError(.invalidInput, "the body of \(Op.name) is not a JSON object")
            }
            object = parsed
        }
        let fields = fields(of: type)
        if let unknown = object.keys.sorted().first(where: { key in !fields.contains { $0.name == key } }) {
            let names = fields.map(\.name).joined(separator: ", ")
            throw BoardError(
                .invalidInput,
                "\(Op.name) takes no field '\(Validate.escaped(String(unknown.prefix(100))))'; its fields are: \(names.isEmpty ? "none" : names)"
            )
        }
        var arguments: [String] = []
        var positionals: [String] = []
        var env: String?
        for field in fields {
            guard let value = object[field.name], !(value is NSNull) else { continue }
            let texts = try texts(value, of: field, in: Op.name)
            switch field.kind {
            case .positional: positionals += texts
            case .option(let flag): arguments += texts.map { "--\(flag)=\($0)" }
            case .flag(let flag):
                guard let on = value as? Bool, isBoolean(value) else {
                    throw BoardError(.invalidInput, "the field \(field.name) of \(Op.name) must be true or false")
                }
                if on { arguments.append("--\(flag)") }
            case .context: env = texts.first
            }
        }
        var operation: Op
        do {
            operation = try Op.parse(arguments + (positionals.isEmpty ? [] : ["--"] + positionals))
        } catch {
            throw BoardError(.invalidInput, sentence(Op.message(for: error)))
        }
        operation.env = env
        return operation
    }

    /// The JSON type a Swift field's values have.
    static func jsonKind(_ type: Any.Type) -> OperationParameter.Kind {
        var type = type
        if let optional = type as? any OptionalField.Type { type = optional.wrapped }
        if let array = type as? any ArrayField.Type { type = array.element }
        if type == Bool.self { return .boolean }
        if type == Int.self || type == Int64.self || type is any IntegerField.Type { return .integer }
        return .string
    }

    /// A field's value as JSON: nil for none.
    private static func jsonValue(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if let optional = value as? any OptionalField { return jsonValue(optional.unwrapped) }
        switch value {
        case let bool as Bool: return bool
        case let int as Int: return int
        case let int as Int64: return int
        case let text as String: return text
        case let field as any IntegerField: return field.integer
        case let array as [Any]: return array.compactMap { jsonValue($0) }
        // An enum that argument-parser reads by its raw value (`kill-switch`) is written by it.
        case let raw as any RawRepresentable: return jsonValue(raw.rawValue)
        default: return String(describing: value)
        }
    }

    /// The argument texts a JSON value stands for (several for a repeating field).
    private static func texts(_ value: Any, of field: Field, in operation: String) throws(BoardError) -> [String] {
        let values: [Any]
        if field.repeating {
            guard let array = value as? [Any] else {
                throw BoardError(.invalidInput, "the field \(field.name) of \(operation) must be an array")
            }
            values = array
        } else {
            values = [value]
        }
        return try values.map { value throws(BoardError) in
            switch field.json {
            case .integer:
                guard let number = value as? NSNumber, !isBoolean(value), let int = Int(exactly: number) else {
                    throw BoardError(.invalidInput, "the field \(field.name) of \(operation) must be an integer")
                }
                return String(int)
            case .boolean:
                guard let bool = value as? Bool, isBoolean(value) else {
                    throw BoardError(.invalidInput, "the field \(field.name) of \(operation) must be true or false")
                }
                return String(bool)
            default:
                guard let text = value as? String else {
                    throw BoardError(.invalidInput, "the field \(field.name) of \(operation) must be a string")
                }
                return text
            }
        }
    }

    /// Whether a value JSONSerialization read is a JSON `true` or `false` (not a number).
    private static func isBoolean(_ value: Any) -> Bool {
        type(of: value) == booleanType
    }

    /// The type Foundation gives JSON's `true` and `false` (a number that is a boolean).
    private static var booleanType: Any.Type { type(of: NSNumber(value: true) as Any) }

    /// swift-argument-parser's message as one sentence of ours: its first line, without its `Error: `.
    private static func sentence(_ message: String) -> String {
        let first = message.split(separator: "\n").first.map(String.init) ?? message
        return first.hasPrefix("Error: ") ? String(first.dropFirst(7)) : first
    }
}

/// An optional, read without knowing its type.
protocol OptionalField {
    static var wrapped: Any.Type { get }
    var unwrapped: Any? { get }
}

extension Optional: OptionalField {
    static var wrapped: Any.Type { Wrapped.self }
    var unwrapped: Any? { self.map { $0 as Any } }
}

/// An array's element type, read without knowing it.
protocol ArrayField {
    static var element: Any.Type { get }
}

extension Array: ArrayField {
    static var element: Any.Type { Element.self }
}

/// A field whose value travels as a JSON integer (a change request's number), and is parsed from its digits.
package protocol IntegerField {
    /// The value as a JSON integer.
    var integer: Int64 { get }
}
