public import Foundation

/// Evaluates JSONL requests against a snapshot, for `plugboard flag evaluate --features FILE --contexts FILE.jsonl`.
///
/// Each input line is `{"toggle": "NAME", "context": {…}}` (`context` may be omitted); each output line is, with
/// exactly this key order and no spaces,
/// `{"toggle":"NAME","enabled":true,"variant":{"name":"…","enabled":true,"feature_enabled":true,"payload":{"type":"…","value":"…"}}}`
/// — `payload` is left out when the variant has none. The variant object is what the Unleash client
/// specification's `variantTests` expect. Strings are escaped like Python's `json.dumps(ensure_ascii=False)`,
/// so the output is byte-comparable with `Tools/Scripts/Conformance/yggdrasil_eval.py`.
public struct BatchEvaluator: Sendable {
    /// The snapshot requests are evaluated against.
    public let snapshot: FlagSnapshot

    /// Creates an evaluator for a compiled snapshot.
    public init(snapshot: FlagSnapshot) { self.snapshot = snapshot }

    /// Decodes and compiles the features JSON.
    ///
    /// - Throws: ``FlagsError`` when the JSON is malformed or (in strict mode) refused.
    public init(features: Data, mode: ValidationMode = .strict, environment: EvaluationEnvironment = .init()) throws(FlagsError) {
        snapshot = try FlagSnapshot(json: features, mode: mode, environment: environment)
    }

    private struct Request: Decodable {
        let toggle: String
        let context: UnleashContext?
    }

    /// Evaluates one input line and returns its output line (without a trailing newline).
    ///
    /// - Throws: ``FlagsError`` with `FlagsError.Code.malformedRequest` naming `lineNumber` when the line is not
    ///   a JSON object with a string `toggle` and an optional object `context`.
    public func evaluate(line: String, lineNumber: Int) throws(FlagsError) -> String {
        var out = ""
        try evaluate(line: line, lineNumber: lineNumber, appendingTo: &out)
        return out
    }

    /// Evaluates one input line and appends its output line (without a newline) to `output`: what a stream of
    /// lines uses, so that no string is made per line. The line is parsed once, by a fast reader for the plain
    /// shape, or else by `JSONDecoder`.
    ///
    /// - Throws: ``FlagsError`` with `FlagsError.Code.malformedRequest` naming `lineNumber` when the line is not
    ///   a JSON object with a string `toggle` and an optional object `context`; `output` is then unchanged.
    public func evaluate(line: String, lineNumber: Int, appendingTo output: inout String) throws(FlagsError) {
        let toggle: String
        let context: UnleashContext?
        if let request = RequestLineParser.parse(line) {
            (toggle, context) = (request.toggle, request.context)
        } else {
            let request = try Self.decode(line, lineNumber: lineNumber)
            (toggle, context) = (request.toggle, request.context)
        }
        let evaluation = snapshot.evaluate(toggle, context: context ?? UnleashContext(), wantVariant: true)
        Self.appendOutputLine(toggle: toggle, enabled: evaluation.enabled, variant: evaluation.variant, to: &output)
    }

    /// The slow path: `JSONDecoder`; only when that fails is the line parsed again, to tell a line that is not a JSON
    /// object from one with a missing or mistyped key.
    private static func decode(_ line: String, lineNumber: Int) throws(FlagsError) -> Request {
        let data = Data(line.utf8)
        do {
            return try JSONDecoder().decode(Request.self, from: data)
        } catch {
            guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
                throw FlagsError(
                    .malformedRequest, "expected a JSON object like {\"toggle\": \"NAME\", \"context\": {…}}", lineNumber: lineNumber)
            }
            if let error = error as? DecodingError {
                throw FlagsError(.malformedRequest, Self.describe(error), lineNumber: lineNumber)
            }
            throw FlagsError(.malformedRequest, "\(error)", lineNumber: lineNumber)
        }
    }

    /// Evaluates every non-blank line, in order; blank lines produce no output but still count for line numbers.
    ///
    /// - Throws: ``FlagsError`` for the first malformed line.
    public func evaluate(lines: some Sequence<String>) throws(FlagsError) -> [String] {
        var output: [String] = []
        for (offset, line) in lines.enumerated() where !Self.isBlank(line) {
            output.append(try evaluate(line: line, lineNumber: offset + 1))
        }
        return output
    }

    /// Evaluates a whole JSONL text (lines separated by `\n`, `\r\n` accepted).
    public func evaluate(jsonl: String) throws(FlagsError) -> [String] {
        try evaluate(
            lines: jsonl.split(separator: "\n", omittingEmptySubsequences: false).map {
                $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
            })
    }

    /// Whether a line has only white space (Unicode's), so produces no output.
    public static func isBlank(_ line: String) -> Bool {
        line.utf8.allSatisfy { $0 == 0x20 || (0x09...0x0D).contains($0) }
            || (line.utf8.contains { $0 >= 0x80 } && line.allSatisfy(\.isWhitespace))
    }

    /// One-shot batch: compile `features`, evaluate every line of `contexts`.
    ///
    /// - Throws: ``FlagsError``: a problem with the features, its message after `features: `, or the first
    ///   malformed line.
    public static func evaluate(
        features: Data, contexts: String, mode: ValidationMode = .strict,
        environment: EvaluationEnvironment = .init()
    ) throws(FlagsError) -> [String] {
        let evaluator: BatchEvaluator
        do {
            evaluator = try BatchEvaluator(features: features, mode: mode, environment: environment)
        } catch {
            var error = error
            error.message = "features: \(error.message)"
            throw error
        }
        return try evaluator.evaluate(jsonl: contexts)
    }

    /// The output line for one answer.
    public static func outputLine(toggle: String, enabled: Bool, variant: Variant) -> String {
        var out = ""
        appendOutputLine(toggle: toggle, enabled: enabled, variant: variant, to: &out)
        return out
    }

    /// Appends the output line for one answer (without a newline) to `out`.
    public static func appendOutputLine(toggle: String, enabled: Bool, variant: Variant, to out: inout String) {
        out += "{\"toggle\":"
        appendJSONString(toggle, to: &out)
        out += enabled ? ",\"enabled\":true,\"variant\":{\"name\":" : ",\"enabled\":false,\"variant\":{\"name\":"
        appendJSONString(variant.name, to: &out)
        out += variant.enabled ? ",\"enabled\":true" : ",\"enabled\":false"
        out += variant.featureEnabled ? ",\"feature_enabled\":true" : ",\"feature_enabled\":false"
        if let payload = variant.payload {
            out += ",\"payload\":{\"type\":"
            appendJSONString(payload.type, to: &out)
            out += ",\"value\":"
            appendJSONString(payload.value, to: &out)
            out += "}"
        }
        out += "}}"
    }

    /// Appends `text` as a JSON string, escaped exactly as Python's `json.dumps(..., ensure_ascii=False)`. The server
    /// writes its JSON with it too.
    package static func appendJSONString(_ text: String, to out: inout String) {
        out.append("\"")
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out.append(text)
            out.append("\"")
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out.append("\\\"")
            case "\\": out.append("\\\\")
            case "\n": out.append("\\n")
            case "\r": out.append("\\r")
            case "\t": out.append("\\t")
            case "\u{08}": out.append("\\b")
            case "\u{0C}": out.append("\\f")
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out.append("\"")
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "" : " at '\(keys.joined(separator: "."))'"
        }
        switch error {
        case .keyNotFound(let key, _):
            return "missing required key '\(key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type\(path(context)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            return "invalid JSON\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
