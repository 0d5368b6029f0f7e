import ArgumentParser
import Foundation

extension OperationWire {
    /// Why an operation's fields could not be read from argument-parser's description of it: a defect of the
    /// operation's declaration (or of an argument-parser the wire does not know), never of a request.
    package struct DescriptionError: Error, CustomStringConvertible {
        /// What does not match, naming the operation.
        package let description: String

        init(_ description: String) { self.description = description }
    }

    /// swift-argument-parser's description of a type's arguments: its `ToolInfoV0` document, as `_dumpHelp()` writes
    /// it, read with the parts of `ToolInfoV0`, `CommandInfoV0` and `ArgumentInfoV0` the wire uses.
    ///
    /// argument-parser's `ArgumentParserToolInfo` module, which declares those types, is a target of its package and
    /// not a product, so no other package can import it; the document is its only public description of arguments.
    /// A document of another serialization version, or one that does not decode, is refused.
    package struct ToolInfo: Decodable {
        /// `ArgumentInfoV0`: one argument, option or flag.
        package struct Argument: Decodable {
            /// `ArgumentInfoV0.KindV0`.
            package enum Kind: String, Decodable {
                case positional, option, flag
            }

            /// `ArgumentInfoV0.NameInfoV0`.
            package struct Name: Decodable {
                package var name: String
            }

            package var kind: Kind
            package var names: [Name]?
            package var preferredName: Name?
            package var abstract: String?
            package var isOptional: Bool
            package var isRepeating: Bool
            package var defaultValue: String?
            package var allValues: [String]?
        }

        /// `CommandInfoV0`: the parts the wire uses.
        struct Command: Decodable {
            var arguments: [Argument]?
        }

        /// The version of the document's format; the wire reads version 0.
        var serializationVersion: Int
        var command: Command

        /// The arguments argument-parser describes for `type`, without the `--help` it adds to every command.
        static func arguments(of type: any ParsableArguments.Type) throws(DescriptionError) -> [Argument] {
            let document: ToolInfo
            do { document = try JSONDecoder().decode(ToolInfo.self, from: Data(type._dumpHelp().utf8)) } catch {
                throw DescriptionError("argument-parser's description of \(type) cannot be read: \(error)")
            }
            guard document.serializationVersion == 0 else {
                throw DescriptionError(
                    "argument-parser describes \(type) in version \(document.serializationVersion) of its format; the wire reads version 0")
            }
            return (document.command.arguments ?? []).filter { argument in
                !(argument.names ?? []).contains { $0.name == "help" || $0.name == "experimental-dump-help" }
            }
        }
    }
}

/// swift-argument-parser's property wrappers, read without knowing their value's type.
protocol ParsedField {
    /// The Swift type of the field's value.
    static var valueType: Any.Type { get }
    /// The kind of argument the wrapper declares.
    static var kind: OperationWire.ToolInfo.Argument.Kind { get }
    /// The parsed value: read only when ``isSet``; argument-parser stops the process on a read of a field it has not
    /// parsed.
    var value: Any { get }
}

extension ParsedField {
    /// Whether the field holds a value: parsed, or set by a typed initializer. A field of a value made with `init()`
    /// holds only argument-parser's definition of it (a case its `description` names `*definition*`).
    var isSet: Bool {
        guard let parsed = Mirror(reflecting: self).descendant("_parsedValue") else { return true }
        return Mirror(reflecting: parsed).children.first?.label != "definition"
    }
}

extension Argument: ParsedField {
    static var valueType: Any.Type { Value.self }
    static var kind: OperationWire.ToolInfo.Argument.Kind { .positional }
    var value: Any { wrappedValue }
}

extension Option: ParsedField {
    static var valueType: Any.Type { Value.self }
    static var kind: OperationWire.ToolInfo.Argument.Kind { .option }
    var value: Any { wrappedValue }
}

extension Flag: ParsedField {
    static var valueType: Any.Type { Value.self }
    static var kind: OperationWire.ToolInfo.Argument.Kind { .flag }
    var value: Any { wrappedValue }
}

/// An `@OptionGroup` of an operation: its fields travel in its place, under their own names.
protocol ParsedGroup {
    /// The group's value; for a group not yet parsed, a fresh one, whose fields say what the group declares.
    var members: Any { get }
}

extension OptionGroup: ParsedGroup {
    var members: Any {
        guard let parsed = Mirror(reflecting: self).descendant("_parsedValue"),
            Mirror(reflecting: parsed).children.first?.label == "definition"
        else { return wrappedValue }
        return Value()
    }
}
