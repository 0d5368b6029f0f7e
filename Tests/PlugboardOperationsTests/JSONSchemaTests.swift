import PlugboardModel
import PlugboardOperations
import PlugboardTestSupport
import PlugboardVersioning
import Testing

/// The answers' schemas in the OpenAPI document are read from the Swift types.
@Suite("operations: schemas read from the answers' types", .timeLimit(.hangGuard))
struct JSONSchemaTests {
    enum Color: String, Codable, CaseIterable { case red, green }

    struct Answer: Codable {
        var pluginID: String
        var artifactSHA256: String?
        var count: Int
        var rate: Double
        var done: Bool
        var color: Color
        var version: SemanticVersion
        var tags: [String]
        var labels: [String: Int]
        var nested: [Nested]?
    }

    struct Nested: Codable { var keyIDs: [String] }

    @Test func propertiesTheirTypesAndWhichAreRequiredComeFromTheType() {
        let schema = JSONSchema.of(Answer.self)
        guard case .object(let properties) = schema else {
            Issue.record("not an object: \(schema)")
            return
        }
        #expect(
            properties.map(\.name) == [
                "plugin_id", "artifact_sha256", "count", "rate", "done", "color", "version", "tags", "labels", "nested",
            ])
        #expect(properties.filter { !$0.required }.map(\.name) == ["artifact_sha256", "nested"])
        #expect(
            properties.map(\.schema) == [
                .string, .string, .integer, .number, .boolean, .oneOf(["red", "green"]), .string, .array(.string), .dictionary(.integer),
                .array(.object([JSONSchema.Property(name: "key_i_ds", schema: .array(.string), required: true)])),
            ])
    }

    @Test func keysStayAsDeclaredForADocumentInAnotherFormat() {
        guard case .object(let properties) = JSONSchema.of(Answer.self, snakeCase: false) else { return }
        #expect(properties.first?.name == "pluginID")
    }

    @Test func theYAMLQuotesNamesYAMLWouldReadAsBooleans() {
        let yaml = JSONSchema.object([JSONSchema.Property(name: "yes", schema: .integer, required: true)]).yaml(indent: 0)
        #expect(yaml == "type: object\nrequired: ['yes']\nproperties:\n  'yes': {type: integer}\n")
    }
}
