import Foundation
import PlugboardModel
import PlugboardOperations
import PlugboardStore
import PlugboardTestSupport
import Testing

/// The reads of the board as a whole (environments, clients, the audit log) and of plug-ins (list, show, status) as
/// declared operations: their wire, what the server refuses, their names and their text.
@Suite("operations: the board's and plug-ins' reads", .timeLimit(.hangGuard))
struct BoardAndPluginReadTests {
    static let id = try! PluginID(validating: "com.example.alpha")
    static let head = "7:" + String(repeating: "a", count: 64) + ":" + String(repeating: "b", count: 64)

    @Test func everyReadRoundTripsThroughTheWire() throws {
        let operations: [any ParsedOperation] = [
            BoardOperations.Environments(), BoardOperations.Clients(env: nil), BoardOperations.Clients(env: "staging"),
            BoardOperations.Verify(checkpoint: nil), BoardOperations.Verify(checkpoint: try AuditCheckpoint(parsing: Self.head)),
            BoardOperations.Checkpoint(),
            BoardOperations.Audit(since: "2026-11-21T18:00:00Z", actor: "alice", target: "com.example.alpha", limit: 20, after: 41),
            BoardOperations.Audit(since: nil, actor: nil, target: nil, limit: nil, after: nil),
            PluginOperations.List(env: "default"), PluginOperations.List(env: "staging", limit: 100, after: Self.id),
            PluginOperations.Show(id: Self.id), PluginOperations.Status(id: nil), PluginOperations.Status(id: Self.id),
        ]
        for operation in operations { try roundTrip(operation) }
    }

    /// Encodes, decodes as the server does, and encodes again: the same JSON both times.
    func roundTrip<Op: ParsedOperation>(_ operation: Op) throws {
        let body = try operation.wireBody()
        let decoded = try Op.fromWire(body)
        #expect(try decoded.wireBody() == body, "\(Op.name): \(String(decoding: body, as: UTF8.self))")
        #expect(decoded.env == operation.env, "\(Op.name)")
    }

    @Test func theWireCarriesTheFieldsByTheirNames() throws {
        func json(_ operation: some ParsedOperation) throws -> String { String(decoding: try operation.wireBody(), as: UTF8.self) }
        #expect(try json(BoardOperations.Environments()) == "{}")
        #expect(try json(BoardOperations.Clients(env: "staging")) == #"{"env":"staging"}"#)
        #expect(try json(BoardOperations.Clients(env: nil)) == "{}")
        #expect(try json(BoardOperations.Verify(checkpoint: try AuditCheckpoint(parsing: Self.head))) == #"{"checkpoint":"\#(Self.head)"}"#)
        #expect(
            try json(BoardOperations.Audit(since: nil, actor: "alice", target: nil, limit: 5, after: 9))
                == #"{"actor":"alice","after":9,"limit":5}"#)
        #expect(
            try json(PluginOperations.List(env: "default", limit: 2, after: Self.id))
                == #"{"after":"com.example.alpha","env":"default","limit":2}"#)
        #expect(try json(PluginOperations.Show(id: Self.id)) == #"{"id":"com.example.alpha"}"#)
        #expect(try json(PluginOperations.Status(id: nil)) == "{}")
    }

    @Test func theServerRefusesMalformedFieldsWithTheCLIsSentences() {
        func refusal<Op: ParsedOperation>(_ type: Op.Type, _ json: String) -> String? {
            do {
                _ = try Op.fromWire(Data(json.utf8))
                return nil
            } catch { return error.code == .invalidInput ? error.message : "wrong code: \(error)" }
        }
        #expect(refusal(PluginOperations.Show.self, #"{"id":"BAD"}"#)?.contains("plug-in id 'BAD' is not valid") == true)
        #expect(refusal(PluginOperations.Show.self, "{}")?.contains("<id>") == true)
        #expect(refusal(PluginOperations.Status.self, #"{"id":"Not An ID"}"#)?.contains("is not valid") == true)
        #expect(refusal(PluginOperations.List.self, #"{"env":"default","limit":0}"#) == "--limit must be between 1 and 10000")
        #expect(
            refusal(PluginOperations.List.self, #"{"env":"default","limit":"ten"}"#) == "the field limit of plugin.list must be an integer")
        #expect(refusal(PluginOperations.List.self, #"{"env":"default","after":"BAD"}"#)?.contains("is not valid") == true)
        #expect(refusal(BoardOperations.Audit.self, #"{"limit":0}"#) == "--limit must be at least 1")
        #expect(refusal(BoardOperations.Audit.self, #"{"since":"yesterday"}"#) == "since 'yesterday' is not an ISO-8601 time")
        #expect(refusal(BoardOperations.Audit.self, #"{"after":"9"}"#) == "the field after of audit must be an integer")
        #expect(refusal(BoardOperations.Verify.self, #"{"checkpoint":"bad"}"#)?.contains("checkpoint 'bad' is not valid") == true)
        #expect(refusal(BoardOperations.Environments.self, #"{"env":"default"}"#)?.hasPrefix("env.list takes no field 'env'") == true)
        #expect(refusal(BoardOperations.Checkpoint.self, "[]") == "the body of audit.checkpoint is not a JSON object")
    }

    @Test func clientsNarrowsToAnEnvironmentOnlyWhenOneIsNamed() throws {
        let env = OperationWire.fields(of: BoardOperations.Clients.self).first { $0.name == "env" }
        #expect(env?.optional == true)
        #expect(OperationWire.fields(of: PluginOperations.List.self).first { $0.name == "env" }?.optional == false)
        #expect(try BoardOperations.Clients.fromWire(Data("{}".utf8)).env == nil)
        #expect(throws: BoardError.self) { try PluginOperations.List.fromWire(Data("{}".utf8)).environment() }
    }

    @Test func aTopLevelOperationIsACommandOfItsOwnName() {
        #expect(BoardOperations.Clients.declaration.command == "clients" && BoardOperations.Clients.declaration.group == nil)
        #expect(BoardOperations.Audit.declaration.command == "audit")
        #expect(BoardOperations.Verify.declaration.group == "audit" && BoardOperations.Verify.declaration.command == "verify")
        #expect(PluginOperations.Status.declaration.group == "plugin" && PluginOperations.Status.declaration.command == "status")
        for type in BoardOperations.all + PluginOperations.reads { #expect(type.access == .read, "\(type.name)") }
    }

    @Test func aReadsTextIsItsTableOrASentenceThatNamesWhatWasAsked() throws {
        #expect(BoardOperations.Environments.text(["default", "staging"]) == "default\nstaging")
        #expect(BoardOperations.Clients.text([]) == "No client has contacted plugboard serve yet.")
        #expect(PluginOperations.List.text([])?.hasPrefix("No plug-ins are registered") == true)
        #expect(PluginOperations.Status(id: Self.id).text(for: []) == "No host has reported on com.example.alpha yet.")
        #expect(PluginOperations.Status(id: nil).text(for: [])?.hasPrefix("No host has reported yet") == true)
        let head = try AuditCheckpoint(parsing: Self.head)
        #expect(BoardOperations.Checkpoint.text(head) == Self.head)
    }
}
