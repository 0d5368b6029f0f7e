import Foundation
import PlugboardAdmin
import PlugboardModel
import PlugboardStore
import Testing

/// The reads of the board as a whole (environments, clients, the audit log) and of plug-ins (list, show, status) as
/// declared operations: their wire, what the server refuses, their names and their text.
@Suite("operations: the board's and plug-ins' reads")
struct BoardAndPluginReadTests {
    static let id = try! PluginID(validating: "com.example.alpha")
    static let head = "7:" + String(repeating: "a", count: 64) + ":" + String(repeating: "b", count: 64)

    @Test func everyReadRoundTripsThroughTheWire() throws {
        let operations: [any BoardOperation] = [
            BoardRequests.Environments(), BoardRequests.Clients(env: nil), BoardRequests.Clients(env: "staging"),
            BoardRequests.Verify(checkpoint: nil), BoardRequests.Verify(checkpoint: try AuditCheckpoint(parsing: Self.head)),
            BoardRequests.Checkpoint(),
            BoardRequests.Audit(since: "2026-11-21T18:00:00Z", actor: "alice", target: "com.example.alpha", limit: 20, after: 41),
            BoardRequests.Audit(since: nil, actor: nil, target: nil, limit: nil, after: nil),
            PluginRequests.List(env: "default"), PluginRequests.List(env: "staging", limit: 100, after: Self.id),
            PluginRequests.Show(id: Self.id), PluginRequests.Status(id: nil), PluginRequests.Status(id: Self.id),
        ]
        for operation in operations { try roundTrip(operation) }
    }

    /// Encodes, decodes as the server does, and encodes again: the same JSON both times.
    func roundTrip<Op: BoardOperation>(_ operation: Op) throws {
        let body = try operation.wireBody()
        let decoded = try Op.fromWire(body)
        #expect(try decoded.wireBody() == body, "\(Op.name): \(String(decoding: body, as: UTF8.self))")
        #expect(decoded.env == operation.env, "\(Op.name)")
    }

    @Test func theWireCarriesTheFieldsByTheirNames() throws {
        func json(_ operation: some BoardOperation) throws -> String { String(decoding: try operation.wireBody(), as: UTF8.self) }
        #expect(try json(BoardRequests.Environments()) == "{}")
        #expect(try json(BoardRequests.Clients(env: "staging")) == #"{"env":"staging"}"#)
        #expect(try json(BoardRequests.Clients(env: nil)) == "{}")
        #expect(try json(BoardRequests.Verify(checkpoint: try AuditCheckpoint(parsing: Self.head))) == #"{"checkpoint":"\#(Self.head)"}"#)
        #expect(
            try json(BoardRequests.Audit(since: nil, actor: "alice", target: nil, limit: 5, after: 9))
                == #"{"actor":"alice","after":9,"limit":5}"#)
        #expect(
            try json(PluginRequests.List(env: "default", limit: 2, after: Self.id))
                == #"{"after":"com.example.alpha","env":"default","limit":2}"#)
        #expect(try json(PluginRequests.Show(id: Self.id)) == #"{"id":"com.example.alpha"}"#)
        #expect(try json(PluginRequests.Status(id: nil)) == "{}")
    }

    @Test func theServerRefusesMalformedFieldsWithTheCLIsSentences() {
        func refusal<Op: BoardOperation>(_ type: Op.Type, _ json: String) -> String? {
            do {
                _ = try Op.fromWire(Data(json.utf8))
                return nil
            } catch { return error.code == .invalidInput ? error.message : "wrong code: \(error)" }
        }
        #expect(refusal(PluginRequests.Show.self, #"{"id":"BAD"}"#)?.contains("plug-in id 'BAD' is not valid") == true)
        #expect(refusal(PluginRequests.Show.self, "{}")?.contains("<id>") == true)
        #expect(refusal(PluginRequests.Status.self, #"{"id":"Not An ID"}"#)?.contains("is not valid") == true)
        #expect(refusal(PluginRequests.List.self, #"{"env":"default","limit":0}"#) == "--limit must be between 1 and 10000")
        #expect(
            refusal(PluginRequests.List.self, #"{"env":"default","limit":"ten"}"#) == "the field limit of plugin.list must be an integer")
        #expect(refusal(PluginRequests.List.self, #"{"env":"default","after":"BAD"}"#)?.contains("is not valid") == true)
        #expect(refusal(BoardRequests.Audit.self, #"{"limit":0}"#) == "--limit must be at least 1")
        #expect(refusal(BoardRequests.Audit.self, #"{"since":"yesterday"}"#) == "since 'yesterday' is not an ISO-8601 time")
        #expect(refusal(BoardRequests.Audit.self, #"{"after":"9"}"#) == "the field after of audit must be an integer")
        #expect(refusal(BoardRequests.Verify.self, #"{"checkpoint":"bad"}"#)?.contains("checkpoint 'bad' is not valid") == true)
        #expect(refusal(BoardRequests.Environments.self, #"{"env":"default"}"#)?.hasPrefix("env.list takes no field 'env'") == true)
        #expect(refusal(BoardRequests.Checkpoint.self, "[]") == "the body of audit.checkpoint is not a JSON object")
    }

    @Test func clientsNarrowsToAnEnvironmentOnlyWhenOneIsNamed() throws {
        let env = OperationWire.fields(of: BoardRequests.Clients.self).first { $0.name == "env" }
        #expect(env?.optional == true)
        #expect(OperationWire.fields(of: PluginRequests.List.self).first { $0.name == "env" }?.optional == false)
        #expect(try BoardRequests.Clients.fromWire(Data("{}".utf8)).env == nil)
        #expect(throws: BoardError.self) { try PluginRequests.List.fromWire(Data("{}".utf8)).environment() }
    }

    @Test func aTopLevelOperationIsACommandOfItsOwnName() {
        #expect(BoardRequests.Clients.declaration.command == "clients" && BoardRequests.Clients.declaration.group == nil)
        #expect(BoardRequests.Audit.declaration.command == "audit")
        #expect(BoardRequests.Verify.declaration.group == "audit" && BoardRequests.Verify.declaration.command == "verify")
        #expect(PluginRequests.Status.declaration.group == "plugin" && PluginRequests.Status.declaration.command == "status")
        for type in BoardRequests.all + PluginRequests.reads { #expect(type.access == .read, "\(type.name)") }
    }

    @Test func aReadsTextIsItsTableOrASentenceThatNamesWhatWasAsked() throws {
        #expect(BoardRequests.Environments.text(["default", "staging"]) == "default\nstaging")
        #expect(BoardRequests.Clients.text([]) == "No client has contacted plugboard serve yet.")
        #expect(PluginRequests.List.text([])?.hasPrefix("No plug-ins are registered") == true)
        #expect(PluginRequests.Status(id: Self.id).text(for: []) == "No host has reported on com.example.alpha yet.")
        #expect(PluginRequests.Status(id: nil).text(for: [])?.hasPrefix("No host has reported yet") == true)
        let head = try AuditCheckpoint(parsing: Self.head)
        #expect(BoardRequests.Checkpoint.text(head) == Self.head)
    }
}
