import ArgumentParser
import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import PlugboardVersioning
import Testing

/// The operations module on its own: what a declaration gives (fields, wire, document) and what it refuses.
@Suite("operations: one declaration, its fields and its wire", .timeLimit(.hangGuard))
struct OperationWireTests {
    static let id = try! PluginID(validating: "com.example.alpha")

    @Test func aDeclarationsFieldsAreItsArgumentsInOrderWithTheirHelpAndTypes() {
        let fields = OperationWire.fields(of: PluginOperations.Kill.self)
        #expect(fields.map(\.name) == ["id", "version", "all", "reason"])
        #expect(fields.map(\.optional) == [true, true, true, false])
        #expect(fields.map(\.json) == [.string, .string, .boolean, .string])
        #expect(fields.allSatisfy { !$0.help.isEmpty })
        let pin = OperationWire.fields(of: PluginOperations.Pin.self)
        #expect(pin.map(\.name) == ["id", "version", "env"])
        #expect(pin.last?.optional == false)
    }

    @Test func everyOperationHasANameOfItsGroupAndFieldsWithHelp() {
        var names = Set<String>()
        for type in OperationsAPI.requests {
            #expect(names.insert(type.name).inserted, "\(type.name) is declared twice")
            #expect((1...2).contains(type.name.split(separator: ".").count), "\(type.name) is not group.command or a top-level command")
            #expect(!type.summary.isEmpty, "\(type.name)")
            let fieldNames = type.parameters.map(\.name)
            #expect(Set(fieldNames).count == fieldNames.count, "\(type.name) names a field twice")
            #expect(type.parameters.allSatisfy { !$0.summary.isEmpty }, "\(type.name)")
        }
    }

    @Test func anOperationDeclaresItsReasonExactlyWhenItHasAReasonField() {
        for case let type as any ParsedOperation.Type in OperationsAPI.requests {
            let hasField = OperationWire.wireProperties(of: type.init()).contains { $0.property == "reason" }
            #expect(type.declaresReason == hasField, "\(type.name)")
        }
    }

    @Test func everyDeclaredOperationRoundTripsThroughTheWire() throws {
        let version = try SemanticVersion(validating: "1.2.0")
        let reason = try Reason(validating: "INC-7 crash loop")
        let operations: [any ParsedOperation] = [
            PluginOperations.Enable(id: Self.id, env: "staging"), PluginOperations.Disable(id: Self.id, env: "staging"),
            try PluginOperations.Kill(.version("com.example.alpha", version), reason: reason),
            try PluginOperations.Kill(.all, reason: reason),
            try PluginOperations.Revive(.plugin("com.example.alpha"), reason: nil),
            PluginOperations.Yank(id: Self.id, version: version, reason: reason),
            PluginOperations.Unyank(id: Self.id, version: version, reason: nil),
            PluginOperations.Pin(id: Self.id, version: version, env: "default"), PluginOperations.Unpin(id: Self.id, env: "default"),
        ]
        for operation in operations {
            try roundTrip(operation)
        }
    }

    /// Encodes, decodes as the server does, and encodes again: the same JSON both times.
    func roundTrip<Op: ParsedOperation>(_ operation: Op) throws {
        let body = try operation.wireBody()
        let decoded = try Op.fromWire(body)
        #expect(try decoded.wireBody() == body, "\(Op.name): \(String(decoding: body, as: UTF8.self))")
    }

    @Test func theWireIsTheFieldsAsOneJSONObject() throws {
        let kill = try PluginOperations.Kill(
            .version("com.example.alpha", try SemanticVersion(validating: "1.2.0")), reason: Reason(validating: "INC-7"))
        #expect(
            String(decoding: try kill.wireBody(), as: UTF8.self)
                == #"{"all":false,"id":"com.example.alpha","reason":"INC-7","version":"1.2.0"}"#)
        let decoded = try PluginOperations.Kill.fromWire(Data(#"{"id":"com.example.alpha","reason":"-starts with a dash"}"#.utf8))
        #expect(decoded.scope.id?.text == "com.example.alpha" && decoded.reason.text == "-starts with a dash" && !decoded.scope.all)
    }

    @Test func theServerRefusesWhatTheCLIRefusesWithASentence() {
        func refusal(_ json: String) -> String? {
            do {
                _ = try PluginOperations.Kill.fromWire(Data(json.utf8))
                return nil
            } catch { return error.code == .invalidInput ? error.message : "wrong code: \(error)" }
        }
        #expect(refusal(#"{"id":"BAD","reason":"x"}"#)?.contains("plug-in id 'BAD' is not valid") == true)
        #expect(refusal(#"{"all":true,"id":"com.example.alpha","reason":"x"}"#) == "--all takes no plug-in id and no --version")
        #expect(refusal(#"{"id":"com.example.alpha"}"#)?.contains("--reason") == true)
        #expect(refusal(#"{"id":"com.example.alpha","reason":"x","plugin":"y"}"#)?.hasPrefix("plugin.kill takes no field 'plugin'") == true)
        #expect(refusal(#"{"id":7,"reason":"x"}"#) == "the field id of plugin.kill must be a string")
        #expect(refusal(#"{"all":"yes","reason":"x"}"#) == "the field all of plugin.kill must be true or false")
        #expect(refusal(#"{"all":1,"reason":"x"}"#) == "the field all of plugin.kill must be true or false")
        #expect(refusal(#"{"id":"com.example.alpha","reason":"fine\u2067evil"}"#)?.contains("bidirectional") == true)
        #expect(refusal("[1]") == "the body of plugin.kill is not a JSON object")
    }

    @Test func anOperationInAnEnvironmentNeedsOne() throws {
        let pin = try PluginOperations.Unpin.fromWire(Data(#"{"id":"com.example.alpha"}"#.utf8))
        #expect(throws: BoardError.self) { try pin.environment() }
        let named = try PluginOperations.Unpin.fromWire(Data(#"{"id":"com.example.alpha","env":"staging"}"#.utf8))
        #expect(try named.environment() == "staging")
    }

    @Test func typedFieldsAreValidatedInTheirInitializers() {
        #expect(throws: BoardError.self) { try PluginID(validating: "Not An ID") }
        #expect(throws: BoardError.self) { try Reason(validating: "two\nlines") }
        #expect(throws: BoardError.self) { try SemanticVersion(validating: "1.2") }
        #expect(throws: (any Error).self) { try JSONDecoder().decode([PluginID].self, from: Data(#"["Not An ID"]"#.utf8)) }
        #expect((try? JSONDecoder().decode([PluginID].self, from: Data(#"["com.example.alpha"]"#.utf8)))?.first == Self.id)
    }

    @Test func theDocumentListsEveryOperationAsAPost() {
        let document = OperationsOpenAPI.document()
        for type in OperationsAPI.requests {
            #expect(document.contains("  /\(type.name):\n    post:\n      operationId: \(type.name)\n"), "\(type.name)")
        }
    }
}
