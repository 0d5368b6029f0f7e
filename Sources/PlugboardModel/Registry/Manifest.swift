public import Foundation
public import PlugboardVersioning

/// A plug-in manifest: what a plug-in declares about one of its versions.
///
/// A manifest is a JSON object. `id`, `name` and `version` are required; `description`, `host`,
/// `dependencies`, `capabilities`, `gate`, `entry` and `metadata` are optional. Unknown top-level fields are
/// refused so that a typo never passes silently; free-form data goes under `metadata`.
///
/// ```json
/// { "id": "com.example.calendar", "name": "Calendar", "version": "1.4.0",
///   "host": ">=2.0.0 <3.0.0", "dependencies": { "com.example.auth": "^1.2" },
///   "capabilities": ["secure-storage", "flags"], "gate": "plugin.calendar.rollout",
///   "entry": "plugboard_plugin_entry", "metadata": { "team": "inbox" } }
/// ```
public struct PluginManifest: Sendable, Hashable {
    /// The capabilities a plug-in may request; anything else is refused.
    public static let knownCapabilities: Set<String> = ["secure-storage", "flags", "events", "services", "configuration", "logging"]
    /// The fields a manifest may have.
    public static let knownFields: Set<String> = [
        "id", "name", "version", "description", "host", "dependencies", "capabilities", "gate", "entry", "metadata",
    ]
    /// The largest manifest accepted, in bytes.
    public static let maximumSize = 1 << 20

    /// The plug-in id (reverse-DNS).
    public let id: String
    /// A human-readable name.
    public let name: String
    /// The version this manifest describes.
    public let version: SemanticVersion
    /// What the plug-in does.
    public let description: String?
    /// The range of host API versions the plug-in works with; nil means any host.
    public let host: VersionRange?
    /// The plug-ins this one needs, with the accepted version ranges.
    public let dependencies: [String: VersionRange]
    /// The host services the plug-in asks for.
    public let capabilities: [String]
    /// The flag that must evaluate to on for a host's context before the plug-in loads.
    public let gate: String?
    /// The exported entry symbol of a dynamic plug-in.
    public let entry: String?
    /// Free-form metadata as canonical JSON text, if any.
    public let metadataJSON: String?
    /// The manifest text exactly as given.
    public let source: String

    /// Parses and validates a manifest.
    ///
    /// - Throws: ``BoardError`` `.invalidInput` with a sentence naming the field and the problem.
    public static func parse(_ data: Data) throws(BoardError) -> PluginManifest {
        guard data.count <= maximumSize else { throw .invalid("the manifest is larger than 1 MiB") }
        guard let source = String(data: data, encoding: .utf8) else { throw .invalid("the manifest is not UTF-8 text") }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw .invalid("the manifest is not valid JSON (\(jsonErrorSummary(error))); check it with a JSON linter")
        }
        guard let fields = object as? [String: Any] else { throw .invalid("the manifest must be a JSON object") }
        if let duplicate = DuplicateKeys.first(in: data) {
            throw .invalid(
                "the manifest has the key '\(Validate.printable(duplicate.key))' twice (in \(Validate.printable(duplicate.location))), and JSON readers disagree on which one counts; keep one"
            )
        }

        let unknown = fields.keys.filter { !knownFields.contains($0) }.sorted()
        if !unknown.isEmpty {
            throw .invalid(
                "the manifest has unknown field\(unknown.count > 1 ? "s" : "") \(unknown.map { "'\(Validate.printable($0))'" }.joined(separator: ", ")); allowed fields are \(knownFields.sorted().joined(separator: ", ")) (put free-form data under metadata)"
            )
        }

        func string(_ key: String, required: Bool) throws(BoardError) -> String? {
            guard let value = fields[key], !(value is NSNull) else {
                if required { throw .invalid("the manifest is missing the required field '\(key)'") }
                return nil
            }
            guard let text = value as? String, !(value is NSNumber) else {
                throw .invalid("manifest field '\(key)' must be a string")
            }
            return text
        }

        let id = try string("id", required: true)!
        try Validate.pluginID(id, field: "manifest field 'id'")

        let name = try string("name", required: true)!
        guard !name.trimmingSpaces.isEmpty else { throw .invalid("manifest field 'name' is empty") }
        try Validate.name(name, field: "manifest field 'name'", limit: 200)

        let versionText = try string("version", required: true)!
        let version: SemanticVersion
        do { version = try SemanticVersion(versionText) } catch {
            throw .invalid("manifest field 'version': \(Validate.escaped(error.message))")
        }

        let description = try string("description", required: false)
        if let description { try Validate.text(description, field: "manifest field 'description'", limit: 4000) }

        var host: VersionRange?
        if let text = try string("host", required: false) {
            do { host = try VersionRange(text) } catch { throw .invalid("manifest field 'host': \(Validate.escaped(error.message))") }
        }

        var dependencies: [String: VersionRange] = [:]
        if let value = fields["dependencies"], !(value is NSNull) {
            guard let map = value as? [String: Any] else {
                throw .invalid("manifest field 'dependencies' must be an object mapping plug-in ids to version ranges")
            }
            for (dependency, rangeValue) in map.sorted(by: { $0.key < $1.key }) {
                try Validate.pluginID(dependency, field: "dependency")
                guard dependency != id else {
                    throw .invalid("manifest field 'dependencies': \(id) depends on itself; remove that entry")
                }
                guard let rangeText = rangeValue as? String, !(rangeValue is NSNumber) else {
                    throw .invalid("manifest field 'dependencies': the range for \(dependency) must be a string such as \"^1.2\"")
                }
                do { dependencies[dependency] = try VersionRange(rangeText) } catch {
                    throw .invalid(
                        "manifest field 'dependencies': the range for \(dependency) is invalid: \(Validate.escaped(error.message))")
                }
            }
        }

        var capabilities: [String] = []
        if let value = fields["capabilities"], !(value is NSNull) {
            guard let list = value as? [Any] else { throw .invalid("manifest field 'capabilities' must be an array of strings") }
            for item in list {
                guard let capability = item as? String, !(item is NSNumber) else {
                    throw .invalid("manifest field 'capabilities' must contain only strings")
                }
                guard knownCapabilities.contains(capability) else {
                    throw .invalid(
                        "manifest field 'capabilities': '\(Validate.printable(capability))' is not a known capability; known ones are \(knownCapabilities.sorted().joined(separator: ", "))"
                    )
                }
                guard !capabilities.contains(capability) else {
                    throw .invalid("manifest field 'capabilities' lists '\(capability)' twice")
                }
                capabilities.append(capability)
            }
        }

        let gate = try string("gate", required: false)
        if let gate { try Validate.newFlagName(gate, field: "manifest field 'gate'") }

        let entry = try string("entry", required: false)
        if let entry {
            let valid =
                entry.utf8.count <= 255 && entry.utf8.first.map { !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } == true
                && entry.utf8.allSatisfy {
                    ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                        || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "_")
                }
            guard valid else {
                throw .invalid("manifest field 'entry' must be a C symbol name such as plugboard_plugin_entry")
            }
        }

        var metadataJSON: String?
        if let value = fields["metadata"], !(value is NSNull) {
            guard value is [String: Any] else { throw .invalid("manifest field 'metadata' must be a JSON object") }
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
            metadataJSON = data.flatMap { String(data: $0, encoding: .utf8) }
        }

        return PluginManifest(
            id: id, name: name, version: version, description: description, host: host,
            dependencies: dependencies, capabilities: capabilities, gate: gate, entry: entry,
            metadataJSON: metadataJSON, source: source)
    }

    /// A short summary of a JSON parser error, without Foundation's long debug text.
    package static func jsonErrorSummary(_ error: any Error) -> String {
        let nsError = error as NSError
        if let detail = nsError.userInfo[NSDebugDescriptionErrorKey] as? String {
            return detail.count > 160 ? String(detail.prefix(157)) + "..." : detail
        }
        return "malformed JSON"
    }
}
