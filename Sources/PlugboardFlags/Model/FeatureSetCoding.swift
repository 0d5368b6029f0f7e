public import Foundation

extension FeatureSet {
    /// Decodes the Unleash client-API features JSON.
    ///
    /// - Throws: ``FlagsError`` with `FlagsError.Code.malformedFeatures` for malformed JSON or a field of the
    ///   wrong shape, naming the flag and the field.
    public static func decode(from data: Data) throws(FlagsError) -> FeatureSet {
        do {
            return try JSONDecoder().decode(FeatureSet.self, from: data)
        } catch let error as DecodingError {
            throw FlagsError(.malformedFeatures, Self.describe(error, in: data))
        } catch {
            throw FlagsError(.malformedFeatures, "the features JSON could not be read: \(error)")
        }
    }

    /// Decodes the Unleash client-API features JSON from text.
    public static func decode(from json: String) throws(FlagsError) -> FeatureSet {
        try decode(from: Data(json.utf8))
    }

    /// Encodes the feature set back to the client-API JSON format, with sorted keys (stable output).
    ///
    /// Decoding the result gives back an equal ``FeatureSet``.
    public func encoded(prettyPrinted: Bool = false) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            prettyPrinted ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and booleans cannot fail.
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }

    /// Turns a `DecodingError` into one sentence that names the flag (looked up by index) and the field.
    static func describe(_ error: DecodingError, in data: Data) -> String {
        let (path, detail): ([any CodingKey], String)
        switch error {
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return "the features file is not valid JSON" + (underlying.map { ": \($0)" } ?? "")
            }
            (path, detail) = (context.codingPath, context.debugDescription)
        case .keyNotFound(let key, let context):
            (path, detail) = (context.codingPath, "missing required key '\(key.stringValue)'")
        case .typeMismatch(let type, let context):
            (path, detail) = (context.codingPath, "expected \(jsonTypeName(type)) (\(context.debugDescription))")
        case .valueNotFound(let type, let context):
            (path, detail) = (context.codingPath, "expected \(jsonTypeName(type)) but found null")
        @unknown default:
            return "the features JSON could not be decoded: \(error)"
        }
        return "\(readablePath(path, data: data)): \(detail)"
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Double.Type: "a number"
        default: "a value of type \(type)"
        }
    }

    /// `features[3].strategies[0].constraints[1]` → `flag 'checkout' (features[3]) strategy 1 constraint 2`.
    static func readablePath(_ path: [any CodingKey], data: Data) -> String {
        guard let first = path.first else { return "the features JSON" }
        var parts: [String] = []
        var rest = path[...]
        if first.stringValue == "features", path.count > 1, let index = path[1].intValue {
            let name = flagName(at: index, in: data)
            parts.append(name.map { "flag '\($0)' (features[\(index)])" } ?? "features[\(index)]")
            rest = path.dropFirst(2)
        } else if first.stringValue == "segments", path.count > 1, let index = path[1].intValue {
            parts.append("segments[\(index)]")
            rest = path.dropFirst(2)
        }
        let singular = [
            "strategies": "strategy", "constraints": "constraint", "variants": "variant", "overrides": "override",
            "dependencies": "dependency", "values": "value", "segments": "segment",
        ]
        var iterator = rest.makeIterator()
        while let key = iterator.next() {
            if let index = key.intValue {
                parts.append("[\(index)]")
            } else if let noun = singular[key.stringValue] {
                var copy = iterator
                if let next = copy.next(), let index = next.intValue {
                    parts.append("\(noun) \(index + 1)")
                    iterator = copy
                } else {
                    parts.append(key.stringValue)
                }
            } else {
                parts.append(key.stringValue)
            }
        }
        return parts.joined(separator: " ")
    }

    private static func flagName(at index: Int, in data: Data) -> String? {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let features = root["features"] as? [Any], index < features.count,
            let feature = features[index] as? [String: Any]
        else { return nil }
        return feature["name"] as? String
    }
}
