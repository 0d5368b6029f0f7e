import Foundation
import PlugboardFlags

/// A small JSON writer for the answers on the hot paths (OFREP), where `JSONSerialization` costs more than the
/// evaluation itself. Keys are written in the order given.
struct JSONText {
    private(set) var text = ""

    init() { text.reserveCapacity(256) }

    /// Writes an object from `(key, value)` pairs whose values are already JSON.
    static func object(_ fields: [(String, String)]) -> String {
        var writer = JSONText()
        writer.text.append("{")
        for (index, (key, value)) in fields.enumerated() {
            if index > 0 { writer.text.append(",") }
            writer.appendString(key)
            writer.text.append(":")
            writer.text.append(value)
        }
        writer.text.append("}")
        return writer.text
    }

    /// A JSON string literal.
    static func string(_ value: String) -> String {
        var writer = JSONText()
        writer.appendString(value)
        return writer.text
    }

    /// Any JSON value of a flag.
    static func value(_ value: FlagJSON) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            if number.rounded() == number && abs(number) < 1e15 { return String(Int64(number)) }
            return number.isFinite ? String(number) : "null"
        case .string(let text): return string(text)
        case .array(let values): return "[" + values.map(Self.value).joined(separator: ",") + "]"
        case .object(let fields):
            return object(fields.sorted { $0.key < $1.key }.map { ($0.key, Self.value($0.value)) })
        }
    }

    private mutating func appendString(_ value: String) {
        BatchEvaluator.appendJSONString(value, to: &text)
    }
}

/// One value of an OFREP evaluation context, decoded without trying types that fail (strings come first: they are
/// nearly every value).
enum ContextValue: Decodable {
    case text(String)
    case object([String: ContextValue])
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .text(text)
        } else if let flag = try? container.decode(Bool.self) {
            self = .text(flag ? "true" : "false")
        } else if let number = try? container.decode(Double.self) {
            self = .text(number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number))
        } else if let object = try? container.decode([String: ContextValue].self) {
            self = .object(object)
        } else {
            self = .other
        }
    }
}
