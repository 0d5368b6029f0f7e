/// A small JSON value with one canonical text form (keys sorted, no insignificant space), used for the
/// `before_json` and `after_json` columns of the audit log so that the same state always hashes the same.
package indirect enum AuditJSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([AuditJSON])
    case object([String: AuditJSON])
    /// JSON text that is already canonical (keys sorted, no insignificant space), inserted as is; used for
    /// definitions the board stores as JSON, such as a flag's strategies.
    case rawJSON(String)

    /// A string, or `null` when `value` is nil.
    package static func optional(_ value: String?) -> AuditJSON { value.map(AuditJSON.string) ?? .null }

    /// The canonical JSON text: object keys sorted by their UTF-8 bytes, strings escaped minimally.
    package var canonicalText: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .rawJSON(let text): out += text
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .string(let value): Self.writeString(value, to: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }).enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, to: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
